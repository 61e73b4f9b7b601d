"""Every option of OpenRLHF 0.10.1.post2's ``train_ppo_ray`` parser, stated as its changes from 0.7.0's: written by
``tests/openrlhf_drivers/write_flag_table.py`` from OpenRLHF's own parser (the released wheel
pinned in ``tests/internals/frontends/openrlhf/test_openrlhf_differential.py``); do not edit.
"""

from __future__ import annotations

import solver_placement._frontends.openrlhf.parsers.release_0_7_0 as previous
from solver_placement._frontends.openrlhf.parsers.kinds import Options, revised

#: argparse's ``allow_abbrev`` for the parser.
ALLOW_ABBREV = True
#: 0.7.0's options less those OpenRLHF 0.10.1.post2 dropped, with the entries it changed, and the
#: flags it added, each group after the flag it follows in the parser (the order argparse's messages list them in).
OPTIONS: Options = revised(
    previous.OPTIONS,
    removed=('--torch_compile', '--bf16', '--flash_attn', '--prompt_max_len', '--generate_max_len', '--pretrain_data', '--pretrain_data_probs', '--pretrain_split'),
    changed={
        '--max_ckpt_mem': ('float', float("inf"), None),
        '--micro_rollout_batch_size': ('int', 1, None),
        '--max_len': ('int', 2048, None),
        '--max_samples': ('int', 100000000, None),
        '--value_clip': ('float', 0.5, None),
        '--micro_train_batch_size': ('int', 1, None),
    },
    added={
        '--vllm_gpu_memory_utilization': {
            '--enable_vllm_is_correction': ('switch', False, None),
            '--vllm_is_truncated_threshold': ('float*2', [0.5, 5.0], None),
            '--vllm_is_correction_type': ('str', 'tis', ('tis', 'icepop', 'seq-mask-tis')),
            '--async_train': ('switch', False, None),
            '--async_queue_size': ('int', 1, None),
            '--partial_rollout': ('switch', False, None),
        },
        '--load_checkpoint': {
            '--best_metric_key': ('str', '', None),
        },
        '--gradient_checkpointing': {
            '--deepcompile': ('switch', False, None),
            '--param_dtype': ('str', 'bf16', ('bf16', 'fp16')),
        },
        '--enable_ema': {
            '--ema_beta': ('float', 0.992, None),
        },
        '--actor_init_on_gpu': {
            '--attn_implementation': ('str', 'flash_attention_2', None),
        },
        '--disable_fast_tokenizer': {
            '--dataloader_num_workers': ('int', 0, None),
        },
        '--deepspeed_enable_sleep': {
            '--ds_tensor_parallel_size': ('int', 1, None),
        },
        '--packing_samples': {
            '--use_dynamic_batch': ('switch', False, None),
            '--rollout_max_tokens_per_gpu': ('int', None, None),
            '--train_max_tokens_per_gpu': ('int', 16192, None),
        },
        '--rollout_batch_size': {
            '--vllm_generate_batch_size': ('int', None, None),
        },
        '--max_len': {
            '--max_new_tokens': ('int', None, None),
        },
        '--eps_clip': {
            '--eps_clip_low_high': ('float*2', None, None),
            '--dual_clip': ('float', None, None),
        },
        '--lr_warmup_ratio': {
            '--lr_scheduler': ('str', 'cosine_with_min_lr', None),
        },
        '--kl_target': {
            '--kl_horizon': ('int', 10000, None),
        },
        '--init_kl_coef': {
            '--policy_loss_type': ('str', 'ppo', ('ppo', 'gspo')),
        },
        '--aux_loss_coef': {
            '--entropy_loss_coef': ('float', None, None),
        },
        '--no_advantage_std_norm': {
            '--overlong_buffer_len': ('float', None, None),
            '--overlong_penalty_factor': ('float', 1, None),
            '--stop_properly_penalty_coef': ('float', None, None),
        },
        '--ref_reward_offload': {
            '--agent_func_path': ('str', None, None),
        },
        '--prompt_data_probs': {
            '--prompt_split': ('str', 'train', None),
        },
        '--eval_dataset': {
            '--eval_split': ('str', 'train', None),
        },
        '--wandb_run_name': {
            '--dynamic_filtering': ('switch', False, None),
            '--dynamic_filtering_reward_range': ('float*2', [0, 1], None),
            '--image_key': ('str', 'images', None),
            '--max_images_per_prompt': ('int', 0, None),
            '--freeze_visual_encoder': ('switch', False, None),
        },
    },
)  # fmt: skip
