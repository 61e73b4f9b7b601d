"""ROLL's layout checked node by node: what its own code gets wrong, in its role names.

ROLL shares GPUs between roles on purpose (the same device numbers, each worker at 0.01 GPU), so
a GPU is wrongly shared only when it serves two *different* device numbers (two node ranks' groups
on one node, both told GPUs from 0) or one role holds it twice. The other checks: a worker whose
device slice spans node ranks sees only its first node rank's part (a vLLM engine short of GPUs),
Megatron tensor-parallel groups split over nodes, workers told GPUs their group does not hold,
and GPUs a group reserves that no worker is told (idle: a warning).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from solver_placement._cluster.ranks import format_ranks
from solver_placement._errors import agreeing
from solver_placement._frontends.roll.job import RollJob
from solver_placement._frontends.roll.resource_manager import LandedGroup
from solver_placement._prediction.checks import split_engines
from solver_placement._prediction.findings import Finding, FindingKind
from solver_placement._prediction.layout import PredictedRank

#: The role named by findings about the reservation itself (ROLL's class that makes it).
RESOURCE_MANAGER = "ResourceManager"


def roll_findings(job: RollJob, size: int, groups: Sequence[LandedGroup], ranks: Sequence[PredictedRank]) -> list[Finding]:
    """Every failed check of a predicted ROLL layout, errors first (fixes are added by ``fixes.py``)."""
    megatron = _megatron_roles(job, size)
    return [
        *pending(groups, size),
        *cut_workers(job, size, groups),
        *split_engines(rank for rank in ranks if rank.gpus and rank.role in megatron),
        *shared_gpus(ranks),
        *told_other_gpus(ranks),
        *idle_gpus(job, size, groups),
    ]


def pending(groups: Iterable[LandedGroup], size: int) -> list[Finding]:
    """Groups no node can hold once the ones before are placed: ``ray.get(pg.ready())`` waits forever."""
    return [
        Finding(FindingKind.PENDING, RESOURCE_MANAGER, None, size,
                f"the placement group of node rank {group.node_rank} ({size} GPUs and half a node's CPUs) fits no node once the groups before it are placed; Ray leaves it pending and ROLL waits in pg.ready() forever")
        for group in groups if group.node is None
    ]  # fmt: skip


def cut_workers(job: RollJob, size: int, groups: Sequence[LandedGroup]) -> list[Finding]:
    """Workers whose device slice spans node ranks though it fits one: ROLL sets the worker's
    ``CUDA_VISIBLE_DEVICES`` from its first node rank only; vLLM, finding fewer GPUs than its
    world size, starts its ranks through Ray in each device's group (``third_party/vllm/__init__.py``
    lines 88-91 at 8eb27cc2), so the engine runs across nodes, and other engines see too few GPUs.
    A slice larger than a node rank (tensor_parallel_size 16 on 8-GPU nodes) must span: not a finding."""
    findings = []
    for worker in job.workers:
        if worker.devices is None or worker.gpus_per_worker > size:
            continue
        for rank in range(worker.world_size):
            devices = worker.worker_devices(rank)
            node_ranks = sorted({device // size for device in devices})
            if len(node_ranks) > 1:
                kept = [device for device in devices if device // size == node_ranks[0]]
                findings.append(
                    Finding(
                        FindingKind.SPLIT_ENGINE, worker.role, groups[node_ranks[0]].node, len(devices),
                        f"worker {rank} holds device numbers {format_ranks(devices)} on node ranks {', '.join(map(str, node_ranks))} "
                        f"(nodes {', '.join(str(groups[n].node) for n in node_ranks)}); ROLL sets its CUDA_VISIBLE_DEVICES from node rank "
                        f"{node_ranks[0]} only ({len(kept)} of its {len(devices)} GPUs), so its engine runs across nodes or sees too few GPUs",
                    )
                )  # fmt: skip
    return findings


def _megatron_roles(job: RollJob, size: int) -> frozenset[str]:
    """The Megatron sections whose tensor-parallel groups fit a node rank (larger ones must span),
    found once per check: asked per rank, a scan of every section made 20,000 reward sections quadratic."""
    return frozenset(worker.role for worker in job.workers if 1 < worker.tensor_parallel <= size)


def shared_gpus(ranks: Iterable[PredictedRank]) -> list[Finding]:
    """Per node, the GPUs workers are told that serve two device numbers, or one role twice."""
    users: dict[tuple[int, int], list[PredictedRank]] = defaultdict(list)
    for rank in ranks:
        if rank.node is not None:
            for told in rank.visible_devices:
                users[(rank.node, int(told))].append(rank)
    wrong: dict[int, list[tuple[int, list[PredictedRank]]]] = defaultdict(list)
    for (node, gpu), on in sorted(users.items()):
        node_ranks = {rank.bundle for rank in on}  # the device number is node rank x num_gpus_per_node + gpu
        roles = [rank.role for rank in on]
        if len(node_ranks) > 1 or len(set(roles)) < len(roles):
            wrong[node].append((gpu, on))
    findings = []
    for node, items in sorted(wrong.items()):
        gpus = [gpu for gpu, _ in items]
        named = sorted({f"{rank.role} rank {rank.rank} (node rank {rank.bundle})" for _, on in items for rank in on})
        shown_names = ", ".join(named[:6]) + (f" and {len(named) - 6} more" if len(named) > 6 else "")
        findings.append(
            Finding(
                FindingKind.SHARED_GPU,
                items[0][1][0].role,
                node,
                len(gpus),
                f"{agreeing(len(gpus), 'GPU')} {format_ranks(gpus)} {agreeing(len(gpus), 'is', 'are each')} told to workers of two device numbers, or to one role twice: {shown_names}",
            )
        )
    return findings


def told_other_gpus(ranks: Iterable[PredictedRank]) -> list[Finding]:
    """Per role and node, workers told GPUs other than the ones their placement group reserved."""
    told: dict[tuple[str, int], list[PredictedRank]] = defaultdict(list)
    for rank in ranks:
        if rank.node is not None and rank.gpus and tuple(map(str, rank.gpus)) != rank.visible_devices:
            told[(rank.role, rank.node)].append(rank)
    return [
        Finding(FindingKind.WRONG_DEVICE, role, node, len(on),
                f"{'ranks' if len(on) > 1 else 'rank'} {format_ranks(rank.rank for rank in on)} {'are' if len(on) > 1 else 'is'} told {_gpus(int(g) for rank in on for g in rank.visible_devices)} "
                f"but their placement group (node rank {on[0].bundle}) holds {_gpus(g for rank in on for g in rank.gpus)}: "
                "ROLL numbers GPUs from 0 on every node rank, and another node rank's group is on this node too "
                "(start ROLL's driver on this node, whose GPU count then sizes the node ranks)")
        for (role, node), on in sorted(told.items())
    ]  # fmt: skip


def idle_gpus(job: RollJob, size: int, groups: Iterable[LandedGroup]) -> list[Finding]:
    """GPUs of a node rank's group that no section's device_mapping names (a warning). Devices a
    spanning worker does not see still count: vLLM's Ray executor runs a rank on each of them."""
    used: dict[int, set[int]] = defaultdict(set)
    for worker in job.workers:
        for device in worker.devices or ():
            used[device // size].add(device % size)
    findings = []
    for group in groups:
        idle = sorted(set(range(size)) - used[group.node_rank])
        if idle and group.node is not None:
            findings.append(
                Finding(FindingKind.IDLE_GPUS, RESOURCE_MANAGER, group.node, len(idle),
                        f"{_gpus(group.first_gpu + gpu for gpu in idle)} {agreeing(len(idle), 'is', 'are')} reserved for node rank {group.node_rank} "
                        f"(num_gpus_per_node={size}) and no worker uses them (device numbers {format_ranks(group.node_rank * size + gpu for gpu in idle)})")
            )  # fmt: skip
    return findings


def _gpus(ids: Iterable[int]) -> str:
    """``GPU 3`` or ``GPUs 0-3``."""
    listed = list(ids)
    return f"{agreeing(len(set(listed)), 'GPU')} {format_ranks(listed)}"
