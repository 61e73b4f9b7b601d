"""The ROLL releases whose placement rules the front end reads, and where they differ.

ROLL is not on PyPI; its releases are the tags of ``alibaba/ROLL``. The placement code
(``roll/distributed/scheduler/resource_manager.py``, ``roll/distributed/executor/cluster.py``,
``WorkerConfig.__post_init__``) places the same way from v0.1.0 to main; one rule changed:

* v0.1.0 (9eb672cf): ``num_gpus_per_node`` is the config's key (default 8,
  ``roll/configs/base_config.py`` line 147);
* v0.1.3 (e1695f2d) and later (v0.2.0, v0.2.1, v0.3.0 7f9d4d38, main 8eb27cc2): ``BaseConfig.__post_init__``
  overwrites it with ``current_platform.device_count()``, the GPUs the driver process sees
  (``roll/configs/base_config.py`` line 352 at 8eb27cc2), so the key is ignored and the node the
  driver runs on decides how device numbers map to node ranks.
"""

from __future__ import annotations

from solver_placement._config import did_you_mean
from solver_placement._errors import PlacementConfigError, shown

#: The releases read, oldest first (the last is the default); each the tag whose rules it uses.
RELEASES = ("0.1.0", "0.3.0")
#: The commit of each release's tag, for messages and the differential test's records.
COMMITS = {"0.1.0": "9eb672cf6f01d073dcd87415ca96bbe469aebce7", "0.3.0": "7f9d4d3873a87679c8d070085a4bd3bdeea7e589"}
#: The main-branch commit whose rules match 0.3.0 (read for the differential test).
MAIN_COMMIT = "8eb27cc2dc34c4d1310b169d9b86d339004d811a"


#: The strategies each release accepts (``StrategyArguments.strategy_name``'s ``Literal``, which
#: dacite enforces) and its default (``roll/configs/worker_config.py`` lines 14-18 at v0.1.0, 23-32 at 8eb27cc2).
STRATEGIES = {
    "0.1.0": ("deepspeed_train", "hf_infer", "deepspeed_infer", "vllm", "sglang", "megatron_infer", "megatron_train"),
    "0.3.0": ("hf_infer", "vllm", "sglang", "megatron_infer", "megatron_train", "fsdp2_train", "fsdp2_infer"),
}
DEFAULT_STRATEGY = {"0.1.0": "deepspeed_train", "0.3.0": "fsdp2_train"}


def release_named(release: str | None) -> str:
    """``release`` as one of :data:`RELEASES` (None: the newest); ``v0.3.0`` is read as ``0.3.0``."""
    if release is None:
        return RELEASES[-1]
    name = release.removeprefix("v") if isinstance(release, str) else release
    if name not in RELEASES:
        raise PlacementConfigError(
            f"ROLL release {shown(release)} is not one the library reads ({', '.join(RELEASES)}){did_you_mean(str(name), list(RELEASES), 'releases')}"
        )
    return str(name)


def driver_decides_gpus_per_node(release: str) -> bool:
    """Whether ROLL takes ``num_gpus_per_node`` from the driver's GPU count rather than the config."""
    return release != "0.1.0"
