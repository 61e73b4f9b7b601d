"""NeMo-RL configs for the tests: the placement keys of its example ``grpo_math_1B.yaml``,
``grpo_math_8B.yaml``, ``grpo_math_1B_sglang.yaml`` and ``grpo_rm_1B.yaml`` (github.com/NVIDIA-NeMo/RL
``examples/configs`` at 7ea279abfbeb698b092856d0dab61e7cf39bc909), written to a folder so
``defaults:`` finds their parent."""

from __future__ import annotations

from pathlib import Path

#: ``grpo_math_1B.yaml``'s placement keys, as the file sets them (its other keys do not place).
GRPO_MATH_1B = """\
policy:
  model_name: "Qwen/Qwen2.5-1.5B"
  dtensor_cfg:
    enabled: true
    tensor_parallel_size: 1
  megatron_cfg:
    enabled: false
    tensor_model_parallel_size: 1
  make_sequence_length_divisible_by: ${policy.dtensor_cfg.tensor_parallel_size}
  generation:
    backend: "vllm"
    vllm_cfg:
      tensor_parallel_size: 1
      pipeline_parallel_size: 1
    colocated:
      enabled: true
      resources:
        gpus_per_node: null
        num_nodes: null
cluster:
  gpus_per_node: 1
  num_nodes: 1
"""

#: ``grpo_math_8B.yaml``: a child of the 1B file through ``defaults:`` (a string), its own cluster.
GRPO_MATH_8B = """\
defaults: "grpo_math_1B.yaml"
policy:
  model_name: "meta-llama/Llama-3.1-8B-Instruct"
  dtensor_cfg:
    tensor_parallel_size: 1
  generation:
    vllm_cfg:
      tensor_parallel_size: 1
cluster:
  gpus_per_node: 8
  num_nodes: 1
"""


#: ``grpo_math_1B_sglang.yaml``: SGLang colocated, two one-GPU engines on one node of 2 GPUs.
GRPO_MATH_1B_SGLANG = """\
defaults: grpo_math_1B.yaml
policy:
  generation:
    backend: "sglang"
    sglang_cfg:
      tp_size: 1
      dp_size: 1
      pp_size: 1
      ep_size: 1
      sglang_server_config:
        num_gpus: 2
        num_gpus_per_engine: ${policy.generation.sglang_cfg.tp_size}
    colocated:
      enabled: true
cluster:
  gpus_per_node: 2
  num_nodes: 1
"""

#: ``grpo_rm_1B.yaml``: the data's environment is the reward model, one GPU of its own.
GRPO_RM_1B = """\
defaults: "grpo_math_1B.yaml"
data:
  default:
    env_name: "reward_model"
env:
  reward_model:
    resources:
      gpus_per_node: 1
      num_nodes: 1
    dtensor_cfg:
      tensor_parallel_size: 1
cluster:
  gpus_per_node: 2
  num_nodes: 1
"""


def write_configs(folder: Path) -> Path:
    """The four files in ``folder``; the 8B child's path (the others are next to it)."""
    (folder / "grpo_math_1B.yaml").write_text(GRPO_MATH_1B)
    (folder / "grpo_math_1B_sglang.yaml").write_text(GRPO_MATH_1B_SGLANG)
    (folder / "grpo_rm_1B.yaml").write_text(GRPO_RM_1B)
    child = folder / "grpo_math_8B.yaml"
    child.write_text(GRPO_MATH_8B)
    return child
