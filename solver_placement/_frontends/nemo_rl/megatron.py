"""``policy.generation.backend=megatron``: NeMo-RL's Megatron generation and the sizes that place it.

Megatron generation (``nemo_rl/models/generation/megatron/megatron_generation.py`` lines 40-160,
``config.py`` lines 75-130 at 7ea279ab) starts no engine of its own:

* colocated, it wraps the training policy (``MegatronGeneration(policy=...)``): generation runs in
  the policy's workers, and the cluster gives one worker group per bundle
  (``max_colocated_worker_groups=1``, ``grpo.py`` line 829), so the policy holds whole GPUs;
* non-colocated, it starts a second Megatron ``Policy`` on the inference cluster, one worker per
  bundle, with ``megatron_cfg`` and ``policy.generation.mcore_generation_config`` merged
  (``merged_inference_megatron_cfg``).

Its parallel sizes place only through ``nvlink_domain_span``: the largest of ``tensor x context``
and ``expert_tensor x expert`` over the layouts generation runs (colocated: training's, and the
dedicated inference layout when ``mcore_generation_config`` changes the layout or
``transformer_impl``, context pinned to 1; non-colocated: the merged one). A span larger than the
cluster's GPUs per node makes ``init_cluster_placement_groups`` ask one unified group (colocated
only when NVLink segments pin the nodes; that is when ``grpo.setup`` calls it), and the span
sizes the inference NVLink segments.
"""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig, OmegaConf

from solver_placement._errors import PlacementConfigError, shown

#: The sizes of a Megatron layout, as ``dedicated_inference_megatron_cfg`` compares them.
LAYOUT_KEYS = ("tensor_model_parallel_size", "pipeline_model_parallel_size", "expert_model_parallel_size", "expert_tensor_parallel_size", "context_parallel_size")
#: Largest parallel size read (a bound of this front end).
MAX_PARALLEL = 65_536


def megatron_sizes(config: DictConfig, colocated: bool) -> tuple[int, int]:
    """``(nvlink_domain_span, the generation workers' tensor-parallel size)`` of a Megatron-generation config."""
    train = _layout(OmegaConf.select(config, "policy.megatron_cfg", default=None), "policy.megatron_cfg")
    override = OmegaConf.select(config, "policy.generation.mcore_generation_config", default=None)
    extra = OmegaConf.to_container(override, resolve=True) if isinstance(override, DictConfig) else {}
    merged = {**train, **{key: extra[key] for key in (*LAYOUT_KEYS, "transformer_impl") if isinstance(extra, dict) and key in extra}}
    inference = _layout(merged, "policy.generation.mcore_generation_config")
    layouts = [inference]
    if colocated:
        dedicated = {**inference, "context_parallel_size": 1}
        differs = any(dedicated[key] != train[key] for key in LAYOUT_KEYS) or dedicated.get("transformer_impl") != train.get("transformer_impl")
        layouts = [train, dedicated] if differs else [train]
    span = max(max(layout["tensor_model_parallel_size"] * layout["context_parallel_size"], layout["expert_tensor_parallel_size"] * layout["expert_model_parallel_size"]) for layout in layouts)
    return span, (train if colocated else inference)["tensor_model_parallel_size"]


def _layout(section: Any, where: str) -> dict[str, Any]:
    """The layout's sizes (``expert_*`` default 1, as ``nvlink_domain_span``'s ``.get`` reads them)."""
    values = OmegaConf.to_container(section, resolve=True) if isinstance(section, DictConfig) else section
    if not isinstance(values, dict) or not values.get("enabled", True):
        raise PlacementConfigError(f"NeMo-RL: policy.generation.backend=megatron needs policy.megatron_cfg enabled (generation runs a Megatron policy); {where} is {shown(values)}")
    layout: dict[str, Any] = {"transformer_impl": values.get("transformer_impl")}
    for key in LAYOUT_KEYS:
        value = values.get(key, 1) if key.startswith("expert_") else values.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PARALLEL:
            raise PlacementConfigError(f"NeMo-RL: {where}.{key}={shown(value)}: Megatron needs a whole number from 1 to {MAX_PARALLEL} (this front end's bound)")
        layout[key] = value
    return layout
