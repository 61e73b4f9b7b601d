"""The node-by-node checks every framework's layout gets, whatever code produced it.

Each takes the predicted ranks and returns findings (without fixes: the framework's front end
knows its own flags and adds them, and ``predict.py`` checks them). Shares are summed per GPU
with a small tolerance, because frameworks ask Ray for fractions such as 0.2 or 1/3 whose float
sum is not exact.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping

from solver_placement._errors import agreeing, counted
from solver_placement._prediction.findings import Finding, FindingKind
from solver_placement._prediction.layout import PredictedRank

#: Float slack when adding GPU shares (five ranks at 0.2 fill a GPU exactly, not 1.0000000000000002).
SHARE_TOLERANCE = 1e-6


def shared_gpus(ranks: Iterable[PredictedRank]) -> list[Finding]:
    """GPUs whose ranks' shares add to more than one GPU, or that two ranks of one role hold:
    one finding per node and set of roles involved, naming every such GPU of it.

    Colocated roles asking fractions may share a GPU (that is what colocation means); two ranks
    of the same role never should, and whole-GPU ranks of different roles never can.
    """
    holders: dict[tuple[int, int], list[PredictedRank]] = defaultdict(list)
    for rank in ranks:
        if rank.node is not None:
            for gpu in rank.gpus:
                holders[(rank.node, gpu)].append(rank)
    clashes: dict[tuple[int, tuple[str, ...]], list[tuple[int, list[PredictedRank]]]] = defaultdict(list)
    for (node, gpu), on_gpu in sorted(holders.items()):
        roles = [rank.role for rank in on_gpu]
        repeated = sorted({role for role in roles if roles.count(role) > 1})
        if repeated or sum(rank.gpu_share for rank in on_gpu) > 1 + SHARE_TOLERANCE:
            clashes[(node, tuple(repeated or dict.fromkeys(roles)))].append((gpu, on_gpu))
    findings = []
    for (node, involved), on in clashes.items():
        gpus = [gpu for gpu, _ in on]
        examples = "; ".join(f"GPU {gpu} to {', '.join(f'{rank.role} rank {rank.rank}' for rank in held)}" for gpu, held in on[:_EXAMPLES])
        more = f"; and {counted(len(on) - _EXAMPLES, 'more GPU')}" if len(on) > _EXAMPLES else ""
        each = "" if len(gpus) == 1 else " each"
        findings.append(Finding(FindingKind.SHARED_GPU, involved[0], node, len(gpus), f"{_gpus(gpus)} {agreeing(len(gpus), 'is', 'are')}{each} given to more than one rank: {examples}{more}"))
    return findings


#: GPUs a shared-GPU finding spells out (the count says how many more).
_EXAMPLES = 3


def split_engines(ranks: Iterable[PredictedRank]) -> list[Finding]:
    """Tensor-parallel engines whose ranks are on more than one node."""
    nodes: dict[tuple[str, int], set[int]] = defaultdict(set)
    members: dict[tuple[str, int], int] = defaultdict(int)
    for rank in ranks:
        if rank.engine is not None and rank.node is not None:
            nodes[(rank.role, rank.engine)].add(rank.node)
            members[(rank.role, rank.engine)] += 1
    return [
        Finding(
            FindingKind.SPLIT_ENGINE, role, min(on), members[(role, engine)],
            f"engine {engine} ({members[(role, engine)]} ranks) spans nodes {', '.join(map(str, sorted(on)))}",
        )
        for (role, engine), on in sorted(nodes.items())
        if len(on) > 1
    ]  # fmt: skip


def wrong_devices(ranks: Iterable[PredictedRank], told: Mapping[tuple[str, int], Collection[int]]) -> list[Finding]:
    """Ranks the framework tells other GPUs (``told``, by (role, rank)) than the ones Ray gave them."""
    findings = []
    for rank in ranks:
        said = told.get((rank.role, rank.rank))
        if rank.node is not None and said is not None and set(said) != set(rank.gpus):
            findings.append(
                Finding(
                    FindingKind.WRONG_DEVICE, rank.role, rank.node, 1,
                    f"rank {rank.rank} holds {_gpus(rank.gpus)} but is told {_ids(said)}",
                )
            )  # fmt: skip
    return findings


def idle_gpus(role: str, reserved: Mapping[int, Collection[int]], ranks: Iterable[PredictedRank]) -> list[Finding]:
    """GPUs reserved for ``role`` (by node) that none of its ranks holds."""
    used: dict[int, set[int]] = defaultdict(set)
    for rank in ranks:
        if rank.role == role and rank.node is not None:
            used[rank.node].update(rank.gpus)
    findings = []
    for node, gpus in sorted(reserved.items()):
        idle = sorted(set(gpus) - used[node])
        if idle:
            findings.append(Finding(FindingKind.IDLE_GPUS, role, node, len(idle), f"{_gpus(idle)} {agreeing(len(idle), 'is', 'are')} reserved for {role} and no rank uses {agreeing(len(idle), 'it', 'them')}"))
    return findings


def _gpus(gpus: Collection[int]) -> str:
    """``GPU 3`` or ``GPUs 2,3``."""
    return f"{agreeing(len(gpus), 'GPU')} {_ids(gpus)}"


def _ids(gpus: Iterable[int]) -> str:
    return ",".join(map(str, sorted(gpus))) or "none"
