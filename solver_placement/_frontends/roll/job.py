"""A ROLL job once read: its worker sections, with the values ROLL's own ``__post_init__`` leaves.

ROLL builds one ``Cluster`` of Ray actors per worker section (``actor_train``, ``actor_infer``,
``reference``, ``critic``, ``rewards.<key>``, ...), all from one ``ResourceManager``. What places
a section's workers is its ``device_mapping`` (global device numbers: node rank times
``num_gpus_per_node`` plus the GPU on that node), the GPUs each worker takes from it
(``num_gpus_per_worker`` as ROLL normalises it) and, without a mapping, ``world_size`` CPU workers.
"""

from __future__ import annotations

from dataclasses import dataclass

from solver_placement._cluster.cluster import Cluster


@dataclass(frozen=True)
class RollWorker:
    """One worker section as ROLL reads it (``WorkerConfig.__post_init__``).

    ``role`` is the section's key (``actor_infer``, ``rewards.math_rule``); ``devices`` its
    evaluated ``device_mapping`` (None: CPU workers); ``gpus_per_worker`` after ROLL's
    normalisation (1 for training strategies, ``tensor_parallel_size x pipeline_parallel_size`` for
    vLLM, as given for SGLang and HF inference); ``world_size`` the workers ROLL starts;
    ``tensor_parallel`` Megatron's tensor-parallel size (its groups are consecutive ranks);
    ``counts_for_nodes``: whether ``BaseConfig`` counts the devices when it computes ``num_nodes``
    (it scans the config's direct ``WorkerConfig`` attributes and teachers, not ``rewards``).
    """

    role: str
    devices: tuple[int, ...] | None
    gpus_per_worker: int
    world_size: int
    strategy: str
    tensor_parallel: int = 1
    counts_for_nodes: bool = True

    @property
    def engine_size(self) -> int:
        """GPUs of one inference engine held by one worker (vLLM, SGLang), else 1."""
        return self.gpus_per_worker if self.strategy in ("vllm", "sglang", "hf_infer") else 1

    def worker_devices(self, rank: int) -> tuple[int, ...]:
        """The device numbers of worker ``rank`` (ROLL's ``allocate_placement_group`` slices)."""
        if not self.devices:
            return ()
        size = self.gpus_per_worker
        return self.devices[rank * size : (rank + 1) * size]


@dataclass
class RollJob:
    """A ROLL config as ROLL reads it, under one release's rules.

    ``num_gpus_per_node`` is the config's value (default 8): the rule for 0.1.0, and the node size
    of the cluster the config describes; from 0.1.3 ROLL uses the driver's GPU count instead
    (``releases.py``). ``num_nodes`` is the config's, used only when no section maps devices.
    Not frozen: the core's ``FrameworkJob`` protocol states ``release`` as a plain attribute.
    """

    release: str
    workers: tuple[RollWorker, ...]
    num_gpus_per_node: int
    num_nodes: int
    gpus_per_node_stated: bool

    def required_nodes(self, gpus_per_node: int) -> int:
        """``num_nodes`` as ``BaseConfig.__post_init__`` recomputes it from the device mappings
        (``roll/configs/base_config.py`` lines 397-414 at 8eb27cc2): the node ranks the highest
        counted device number needs, 1 when it fits one node, the config's value when none is mapped."""
        devices = [device for worker in self.workers if worker.counts_for_nodes and worker.devices for device in worker.devices]
        if not devices:
            return self.num_nodes
        needed = max(devices) + 1
        return 1 if needed <= gpus_per_node else -(-needed // gpus_per_node)

    def stated_cluster(self) -> Cluster:
        """Nodes of ``num_gpus_per_node`` GPUs, as many as ROLL's ``num_nodes`` and every device number need."""
        gpus = self.num_gpus_per_node
        highest = max((device for worker in self.workers if worker.devices for device in worker.devices), default=0)
        return Cluster(num_nodes=max(self.required_nodes(gpus), highest // gpus + 1, 1), num_gpus_per_node=gpus)
