"""Why ROLL's code puts each worker where it does, in its own keys, each rule cited (``explain``).

The rules ``layout.py`` and ``resource_manager.py`` follow, stated for the user per worker
section and node rank: the slice of ``device_mapping`` a worker takes, the node rank its first
device names, the node Ray gave that node rank's single-bundle placement group, and the GPUs
ROLL then tells the worker. Lines are those of ROLL at the commit of the release read.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from solver_placement._frontends.roll.checks import RESOURCE_MANAGER
from solver_placement._frontends.roll.job import RollJob, RollWorker
from solver_placement._frontends.roll.layout import gpus_per_node
from solver_placement._frontends.roll.releases import COMMITS, driver_decides_gpus_per_node
from solver_placement._prediction.explanation import Cause, Rationale, Reason
from solver_placement._prediction.findings import FindingKind
from solver_placement._prediction.layout import Prediction


@dataclass(frozen=True)
class _Lines:
    """Where each rule is written at one release's commit (v0.3.0's lines are main's too)."""

    #: ``ResourceManager.__init__``: one single-bundle placement group per node rank.
    groups: str
    #: ``allocate_placement_group``: a worker's slice of device numbers, its node rank and GPU.
    slices: str
    #: ``allocate_placement_group``: CPU workers, node rank ``r % num_nodes``.
    cpu_workers: str
    #: ``Cluster._create_workers``: the worker's ``CUDA_VISIBLE_DEVICES`` from its node rank's GPU numbers.
    told: str


_BY_RELEASE = {
    "0.1.0": _Lines("39-48", "106-125", "126-138", "94-136"),
    "0.3.0": _Lines("43-48", "112-130", "132-146", "115-139"),
}


def _cited(lines: _Lines, *parts: str) -> str:
    files = {
        "groups": f"roll/distributed/scheduler/resource_manager.py:{lines.groups} ResourceManager.__init__",
        "slices": f"roll/distributed/scheduler/resource_manager.py:{lines.slices} allocate_placement_group",
        "cpu_workers": f"roll/distributed/scheduler/resource_manager.py:{lines.cpu_workers} allocate_placement_group",
        "told": f"roll/distributed/executor/cluster.py:{lines.told} Cluster._create_workers",
    }
    return ", ".join(files[part] for part in parts)

def explain_roll(job: RollJob, prediction: Prediction) -> Rationale:
    """Per worker section and node rank the rule that places its workers, and the cause of each finding."""
    cite = f"ROLL {job.release} at {COMMITS[job.release][:8]}"
    lines = _BY_RELEASE[job.release]
    size = gpus_per_node(job, prediction.cluster)
    source = "the GPUs the driver sees on node 0" if driver_decides_gpus_per_node(job.release) else "the config's num_gpus_per_node"
    reasons = []
    for worker in job.workers:
        by_node_rank: dict[int | None, list[int]] = defaultdict(list)
        for rank in prediction.of_role(worker.role):
            by_node_rank[rank.bundle].append(rank.rank)
        for node_rank, ranks in sorted(by_node_rank.items(), key=lambda item: -1 if item[0] is None else item[0]):
            rule = _cited(lines, "cpu_workers") if worker.devices is None else _cited(lines, "slices", "groups", "told")
            reasons.append(Reason(worker.role, _text(worker, node_rank, size, source), f"{cite} {rule}", tuple(ranks)))
    return Rationale(tuple(reasons), _causes(cite, lines))


def _text(worker: RollWorker, node_rank: int | None, size: int, source: str) -> str:
    if worker.devices is None:
        return f"no device_mapping: {worker.world_size} CPU workers, worker r in the placement group of node rank r % num_nodes (here {node_rank})"
    return (
        f"worker r takes device numbers device_mapping[r*{worker.gpus_per_worker}:(r+1)*{worker.gpus_per_worker}] "
        f"(num_gpus_per_worker {worker.gpus_per_worker}); a device d is GPU d % {size} of node rank d // {size} (num_gpus_per_node={size}, "
        f"{source}); these workers' first device is on node rank {node_rank}, whose single-bundle placement group Ray put on the node shown "
        "(ROLL names no node); ROLL sets CUDA_VISIBLE_DEVICES to their GPU numbers on that node rank"
    )


def _causes(cite: str, lines: _Lines) -> tuple[Cause, ...]:
    return (
        Cause(
            FindingKind.PENDING, RESOURCE_MANAGER,
            "ROLL reserves one placement group of num_gpus_per_node GPUs and half a node's CPUs per node rank, with Ray's default "
            "strategy and no node named, and waits for each", f"{cite} {_cited(lines, 'groups')}",
        ),
        Cause(
            FindingKind.SPLIT_ENGINE, None,
            "a worker's device slice spans node ranks, and ROLL sets its CUDA_VISIBLE_DEVICES from the first node rank only; "
            "vLLM then starts the missing ranks through Ray on the other node rank", f"{cite} {_cited(lines, 'told', 'slices')}",
        ),
        Cause(
            FindingKind.SHARED_GPU, None,
            "ROLL numbers a node rank's GPUs from 0 whatever node its group landed on; two node ranks' groups on one large node "
            "(Ray's default strategy names no node) are both told GPUs 0.. (alibaba/ROLL#78, #205, #326)", f"{cite} {_cited(lines, 'groups', 'told')}",
        ),
        Cause(
            FindingKind.WRONG_DEVICE, None,
            "ROLL tells a worker the GPU numbers of its device slice on its node rank, counted from 0, not the GPUs Ray reserved for "
            "that node rank's group, which are further up when another group is on the node first", f"{cite} {_cited(lines, 'told')}",
        ),
        Cause(
            FindingKind.IDLE_GPUS, RESOURCE_MANAGER,
            "every node rank's group reserves num_gpus_per_node GPUs whatever device numbers the device_mapping keys name",
            f"{cite} {_cited(lines, 'groups', 'slices')}",
        ),
    )  # fmt: skip

