"""Where ROLL's own code puts every worker: node rank from the device number, node from Ray, GPUs from ROLL.

For a worker section with a ``device_mapping``, ROLL's ``allocate_placement_group`` cuts the
mapping into ``world_size`` slices of ``num_gpus_per_worker`` device numbers, worker ``r`` the
``r``-th (ranks as ROLL numbers them); a device number ``d`` is GPU ``d % num_gpus_per_node`` of
node rank ``d // num_gpus_per_node`` (``resource_manager.py`` lines 112-130 at 8eb27cc2). The
worker's actor goes into the placement group of its first device's node rank, and
``Cluster._create_workers`` sets its ``CUDA_VISIBLE_DEVICES`` to the sorted GPU numbers of its
devices on that node rank, with ``RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES=1`` so Ray keeps
out (``cluster.py`` lines 115-139, ``platforms/platform.py`` lines 130-146): devices on another
node rank are dropped. The actor asks Ray for 0.01 GPU and 0.01 CPU (lines 160-165), so roles on
the same device numbers share GPUs by design. A section without a mapping starts ``world_size``
CPU workers, worker ``r`` in the group of node rank ``r % num_nodes`` (``resource_manager.py`` lines 132-146).

``PredictedRank.gpus`` are the GPUs Ray reserved for the device (the group's ``first_gpu`` plus the
GPU number), ``visible_devices`` what ROLL tells the worker; they differ when a group is not the
first on its node, and the worker then uses the told GPU, another group's. ``bundle`` is the node
rank: ROLL's index into its list of single-bundle groups.
"""

from __future__ import annotations

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import PlacementConfigError
from solver_placement._frontends.roll.job import RollJob, RollWorker
from solver_placement._frontends.roll.releases import driver_decides_gpus_per_node
from solver_placement._frontends.roll.resource_manager import LandedGroup, check_resources, land_groups
from solver_placement._prediction.layout import PredictedRank

#: The GPU share each worker asks Ray for (``num_gpus=0.01``, ``cluster.py`` line 165 at 8eb27cc2).
WORKER_GPU_SHARE = 0.01


def gpus_per_node(job: RollJob, cluster: Cluster) -> int:
    """ROLL's ``num_gpus_per_node``: the config's in 0.1.0; from 0.1.3 the driver's GPU count,
    the driver taken to run on node 0 (the head, where ROLL's multi-node guide starts it)."""
    return int(cluster.gpus_per_node[0]) if driver_decides_gpus_per_node(job.release) else job.num_gpus_per_node


def landed_groups(job: RollJob, cluster: Cluster) -> tuple[int, list[LandedGroup]]:
    """``num_gpus_per_node`` and the node rank groups on the cluster, after ROLL's start-up checks."""
    size = gpus_per_node(job, cluster)
    nodes = [int(gpus) for gpus in cluster.gpus_per_node]
    if size == 0:
        if any(worker.devices for worker in job.workers):
            raise PlacementConfigError(
                "ROLL stops at start: the driver (node 0) sees no GPU, so num_gpus_per_node is 0 and BaseConfig's num_nodes "
                "divides by it (ZeroDivisionError); start the driver on a GPU node"
            )
        return 0, [LandedGroup(0, 0)]
    count = job.required_nodes(size)
    check_resources(nodes, size, count)
    return size, land_groups(nodes, size, count)


def predicted_ranks(job: RollJob, size: int, groups: list[LandedGroup]) -> list[PredictedRank]:
    """Every worker of every section, in the config's section order, ranks as ROLL numbers them."""
    ranks: list[PredictedRank] = []
    for worker in job.workers:
        if worker.devices is None:
            ranks += [
                PredictedRank(worker.role, rank, groups[rank % len(groups)].node, (), (), 0.0, None, rank % len(groups))
                for rank in range(worker.world_size)
            ]
            continue
        ranks += [_gpu_rank(worker, rank, size, groups) for rank in range(worker.world_size)]
    return ranks


def _gpu_rank(worker: RollWorker, rank: int, size: int, groups: list[LandedGroup]) -> PredictedRank:
    devices = worker.worker_devices(rank)
    beyond = [device for device in devices if device // size >= len(groups)]
    if beyond:
        raise PlacementConfigError(
            f"{worker.role}.device_mapping: ROLL stops at start: device number {beyond[0]} is on node rank {beyond[0] // size}, and "
            f"device_mapping used gpus are more than num_nodes×num_gpus_per_node={len(groups)}×{size} "
            f"({'ROLL does not count rewards sections when it sizes num_nodes; ' if not worker.counts_for_nodes else ''}"
            f"use device numbers below {len(groups) * size})"
        )
    node_rank = devices[0] // size
    local = sorted(device % size for device in devices if device // size == node_rank)
    group = groups[node_rank]
    engine = rank if worker.engine_size > 1 else rank // worker.tensor_parallel if worker.tensor_parallel > 1 else None
    return PredictedRank(
        worker.role, rank, group.node, tuple(group.first_gpu + gpu for gpu in local), tuple(map(str, local)), WORKER_GPU_SHARE, engine, node_rank
    )  # fmt: skip
