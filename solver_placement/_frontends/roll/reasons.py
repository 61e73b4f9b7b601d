"""Why ROLL's code puts each worker where it does, in its own keys, each rule cited (``explain``).

The rules ``layout.py`` and ``resource_manager.py`` follow, stated for the user per worker
section and node rank: the slice of ``device_mapping`` a worker takes, the node rank its first
device names, the node Ray gave that node rank's single-bundle placement group, and the GPUs
ROLL then tells the worker. Lines are those of ROLL at the commit of the release read.
"""

from __future__ import annotations

from collections import defaultdict

from solver_placement._frontends.roll.checks import RESOURCE_MANAGER
from solver_placement._frontends.roll.job import RollJob, RollWorker
from solver_placement._frontends.roll.layout import gpus_per_node
from solver_placement._frontends.roll.releases import COMMITS, driver_decides_gpus_per_node
from solver_placement._prediction.explanation import Cause, Rationale, Reason
from solver_placement._prediction.findings import FindingKind
from solver_placement._prediction.layout import Prediction

SLICES = "roll/distributed/scheduler/resource_manager.py:112-130 allocate_placement_group"
GROUPS = "roll/distributed/scheduler/resource_manager.py:43-48 ResourceManager.__init__"
TOLD = "roll/distributed/executor/cluster.py:115-139 Cluster._create_workers"
CPU_WORKERS = "roll/distributed/scheduler/resource_manager.py:132-146 allocate_placement_group"


def explain_roll(job: RollJob, prediction: Prediction) -> Rationale:
    """Per worker section and node rank the rule that places its workers, and the cause of each finding."""
    cite = f"ROLL {job.release} at {COMMITS[job.release][:8]}"
    size = gpus_per_node(job, prediction.cluster)
    source = "the GPUs the driver sees on node 0" if driver_decides_gpus_per_node(job.release) else "the config's num_gpus_per_node"
    reasons = []
    for worker in job.workers:
        by_node_rank: dict[int | None, list[int]] = defaultdict(list)
        for rank in prediction.of_role(worker.role):
            by_node_rank[rank.bundle].append(rank.rank)
        for node_rank, ranks in sorted(by_node_rank.items(), key=lambda item: -1 if item[0] is None else item[0]):
            reasons.append(Reason(worker.role, _text(worker, node_rank, size, source), f"{cite} {_rule(worker)}", tuple(ranks)))
    return Rationale(tuple(reasons), _causes(cite))


def _text(worker: RollWorker, node_rank: int | None, size: int, source: str) -> str:
    if worker.devices is None:
        return f"no device_mapping: {worker.world_size} CPU workers, worker r in the placement group of node rank r % num_nodes (here {node_rank})"
    return (
        f"worker r takes device numbers device_mapping[r*{worker.gpus_per_worker}:(r+1)*{worker.gpus_per_worker}] "
        f"(num_gpus_per_worker {worker.gpus_per_worker}); a device d is GPU d % {size} of node rank d // {size} (num_gpus_per_node={size}, "
        f"{source}); these workers' first device is on node rank {node_rank}, whose single-bundle placement group Ray put on the node shown "
        "(ROLL names no node); ROLL sets CUDA_VISIBLE_DEVICES to their GPU numbers on that node rank"
    )


def _rule(worker: RollWorker) -> str:
    return CPU_WORKERS if worker.devices is None else f"{SLICES}, {GROUPS}, {TOLD}"


def _causes(cite: str) -> tuple[Cause, ...]:
    return (
        Cause(
            FindingKind.PENDING, RESOURCE_MANAGER,
            "ROLL reserves one placement group of num_gpus_per_node GPUs and half a node's CPUs per node rank, with Ray's default "
            "strategy and no node named, and waits for each", f"{cite} {GROUPS}",
        ),
        Cause(
            FindingKind.SPLIT_ENGINE, None,
            "a worker's device slice spans node ranks, and ROLL sets its CUDA_VISIBLE_DEVICES from the first node rank only; "
            "vLLM then starts the missing ranks through Ray on the other node rank", f"{cite} {TOLD}, {SLICES}",
        ),
        Cause(
            FindingKind.SHARED_GPU, None,
            "ROLL numbers a node rank's GPUs from 0 whatever node its group landed on; two node ranks' groups on one large node "
            "(Ray's default strategy names no node) are both told GPUs 0.. (alibaba/ROLL#78, #205, #326)", f"{cite} {GROUPS}, {TOLD}",
        ),
        Cause(
            FindingKind.WRONG_DEVICE, None,
            "ROLL tells a worker the GPU numbers of its device slice on its node rank, counted from 0, not the GPUs Ray reserved for "
            "that node rank's group, which are further up when another group is on the node first", f"{cite} {TOLD}",
        ),
        Cause(
            FindingKind.IDLE_GPUS, RESOURCE_MANAGER,
            "every node rank's group reserves num_gpus_per_node GPUs whatever device numbers the device_mapping keys name",
            f"{cite} {GROUPS}, {SLICES}",
        ),
    )  # fmt: skip

