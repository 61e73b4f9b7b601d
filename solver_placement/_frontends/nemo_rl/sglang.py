"""``policy.generation.backend=sglang``: the ``sglang_cfg`` sizes that place NeMo-RL's SGLang engines.

``SGLangGeneration.__init__`` (``nemo_rl/models/generation/sglang/sglang_generation.py`` lines
80-95 at 7ea279ab) asks its cluster for one unified ``PACK`` group, then starts
``sglang_server_config.num_gpus // min(num_gpus_per_engine, gpus_per_node)`` engine actors;
``SGLangGenerationWorker._compute_server_args`` (``sglang_worker.py`` lines 376-410) asserts
``tp_size == num_gpus_per_engine // pp_size`` and hands ``tp_size``, ``pp_size`` and ``dp_size``
to the SGLang server. Refused here, each in NeMo-RL's words or by name:

* non-colocated SGLang: NeMo-RL builds it, then its first weight refit raises
  ``NotImplementedError`` (``grpo.py`` lines 2391-2395), so the run never trains;
* the assert above;
* ``dp_size`` other than 1: SGLang's data-parallel controller then starts ``dp_size`` copies of
  the engine's GPUs from ``base_gpu_id``, which this front end does not model.
"""

from __future__ import annotations

from omegaconf import DictConfig

from solver_placement._errors import PlacementConfigError
from solver_placement._frontends.nemo_rl.config_values import whole
from solver_placement._frontends.nemo_rl.job import SglangServers

#: Where the SGLang sizes live in a GRPO config.
SGLANG = "policy.generation.sglang_cfg"
SERVER = f"{SGLANG}.sglang_server_config"


def sglang_servers(config: DictConfig, colocated: bool) -> SglangServers:
    """The engines' sizes, with NeMo-RL's own checks of them."""
    if not colocated:
        raise PlacementConfigError(
            "NeMo-RL refuses this config (grpo.py line 2393 at 7ea279ab): NotImplementedError: SGLang haven't implemented "
            "non-colocated inference mode (raised at the first weight refit, after setup). Fix: policy.generation.colocated.enabled=true, "
            "or policy.generation.backend=vllm to keep inference apart"
        )
    num_gpus = whole(config, f"{SERVER}.num_gpus", 1)
    per_engine = whole(config, f"{SERVER}.num_gpus_per_engine", 1)
    tensor = whole(config, f"{SGLANG}.tp_size", 1)
    pipeline = whole(config, f"{SGLANG}.pp_size", 1)
    if tensor != per_engine // pipeline:
        raise PlacementConfigError(
            f"NeMo-RL refuses this config (sglang_worker.py line 383 at 7ea279ab): AssertionError: tp_size ({tensor}) must equal "
            f"num_gpus_per_engine ({per_engine}) // pp_size ({pipeline}). Fix: {SERVER}.num_gpus_per_engine={tensor * pipeline}"
        )
    data = whole(config, f"{SGLANG}.dp_size", 1)
    if data != 1:
        raise PlacementConfigError(
            f"NeMo-RL: {SGLANG}.dp_size={data}: SGLang's data-parallel controller then drives dp_size x tp_size GPUs from each "
            f"engine's base GPU, which the library does not model; predict with {SGLANG}.dp_size=1 to see the rest"
        )
    return SglangServers(num_gpus, per_engine, pipeline)
