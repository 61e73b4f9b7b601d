"""NeMo-RL configs for the tests: the placement keys of its example ``grpo_math_1B.yaml`` and
``grpo_math_8B.yaml`` (github.com/NVIDIA-NeMo/RL ``examples/configs`` at
7ea279abfbeb698b092856d0dab61e7cf39bc909), written to a folder so ``defaults:`` finds its parent."""

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


def write_configs(folder: Path) -> Path:
    """Both files in ``folder``; the 8B child's path."""
    (folder / "grpo_math_1B.yaml").write_text(GRPO_MATH_1B)
    child = folder / "grpo_math_8B.yaml"
    child.write_text(GRPO_MATH_8B)
    return child
