"""Every option of OpenRLHF 0.11.2's ``train_ppo_ray`` parser, stated as its changes from 0.11.0's: written by
``tests/openrlhf_drivers/write_flag_table.py`` from OpenRLHF's own parser (the released wheel
pinned in ``tests/internals/frontends/openrlhf/test_openrlhf_differential.py``); do not edit.
"""

from __future__ import annotations

import solver_placement._frontends.openrlhf.parsers.release_0_11_0 as previous
from solver_placement._frontends.openrlhf.parsers.kinds import Options, revised

#: argparse's ``allow_abbrev`` for the parser.
ALLOW_ABBREV = True
#: 0.11.0's options less those OpenRLHF 0.11.2 dropped, with the entries it changed, and the
#: flags it added, each group after the flag it follows in the parser (the order argparse's messages list them in).
OPTIONS: Options = revised(
    previous.OPTIONS,
    removed=('--algo.advantage.is_correction_enable', '--algo.advantage.is_correction_type'),
    changed={
        '--algo.advantage.is_correction_threshold': ('float*+', [0.5, 5.0], None),
        '--algo.advantage.estimator': ('str', 'gae', ('gae', 'reinforce', 'rloo', 'reinforce_baseline', 'group_norm', 'dr_grpo', 'flash_reinforce')),
    },
    added={
        '--vllm.gpu_memory_utilization': {
            '--algo.advantage.is_correction_level': ('str', 'off', ('off', 'token', 'seq')),
            '--algo.advantage.is_correction_mode': ('str', 'mask', ('mask', 'clip')),
            '--algo.advantage.is_correction_gating': ('str', 'ratio', ('ratio', 'binary_kl', 'tv')),
        },
        '--actor.policy_loss_type': {
            '--actor.loss_agg_mode': ('str', 'token-mean', ('token-mean', 'seq-mean-token-mean')),
        },
        '--algo.kl.estimator': {
            '--algo.kl.unbiased_gradient': ('switch', False, None),
        },
    },
)  # fmt: skip
