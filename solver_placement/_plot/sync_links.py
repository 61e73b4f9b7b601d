"""The weight-sync pairing: which actor ranks share each GPU of each rollout process.

In collocated mode every GPU of a rollout process also holds an actor rank, which hands its
weight shard over CUDA IPC without a copy. The pairing comes from RLinf's own ``weight_sync_map``
when a collocated ``ModelParallelComponentPlacement`` is given (recognised by what the pairing
reads of it, :class:`ModelParallelPlacement`), and from the placement records otherwise. Panels
group the links per node (or per run of like nodes) for drawing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol, TypeGuard, runtime_checkable

from solver_placement._constants import ACCELERATOR
from solver_placement._errors import PlacementConfigError
from solver_placement._plot.aggregate import like_node_runs
from solver_placement._plot.source import BuiltPlacement, Drawn, LayoutSource, drawn_from
from solver_placement._records import Placement


@runtime_checkable
class ModelParallelPlacement(BuiltPlacement, Protocol):
    """What the weight-sync figure reads of RLinf's model-parallel placement (a
    ``ModelParallelComponentPlacement``): the actor's TP size as the job configures it, how
    rollout weights are synced, and RLinf's own pairing when that is CUDA IPC."""

    @property
    def actor_tp_size(self) -> int: ...

    @property
    def rollout_sync_mode(self) -> Enum: ...

    def weight_sync_map(self) -> dict[int, list[int]]: ...

    def get_placements(self, component_name: str, isolate_accelerator: bool = True) -> list[Placement]: ...


@dataclass(frozen=True)
class WeightSyncLink:
    """One GPU of one rollout process and the actor ranks on that same GPU (its CUDA IPC peers).

    ``actor_ranks`` is empty when no actor rank shares the GPU (disaggregated mode).
    """

    rollout_rank: int
    node: int
    gpu: int
    actor_ranks: tuple[int, ...]


def weight_sync_links(source: LayoutSource, *, actor: str = "actor", rollout: str = "rollout") -> list[WeightSyncLink]:
    """Per rollout process and per GPU it holds: the actor ranks on that same (node, GPU).

    ``source`` is anything :func:`~solver_placement._plot.plot_layout` takes. A
    ``ModelParallelComponentPlacement`` in collocated mode answers with its own ``weight_sync_map``
    (RLinf's pairing); anything else is read from the placement records.
    """
    if uses_sync_map(source, actor, rollout):
        return links_from_sync_map(source)
    return links_from_records(drawn_from(source, None, "weight_sync_links"), actor, rollout)


def uses_sync_map(source: object, actor: str, rollout: str) -> TypeGuard[ModelParallelPlacement]:
    """Whether RLinf's own pairing applies: a collocated model-parallel placement of its actor and rollout."""
    return isinstance(source, ModelParallelPlacement) and source.rollout_sync_mode.name == "COLLOCATED" and (actor, rollout) == ("actor", "rollout")


def links_from_sync_map(source: ModelParallelPlacement) -> list[WeightSyncLink]:
    """RLinf's pairing: the actor rank listed at position ``i`` of a rollout rank shares its ``i``-th GPU."""
    sync_map = source.weight_sync_map()
    return [
        WeightSyncLink(p.rank, p.cluster_node_rank, gpu, (actor_rank,))
        for p in source.get_placements("rollout")
        for gpu, actor_rank in zip(sorted(p.local_hardware_ranks), sync_map[p.rank], strict=True)
    ]


def links_from_records(drawn: Drawn, actor: str, rollout: str) -> list[WeightSyncLink]:
    """Pair each GPU of each ``rollout`` process with the ``actor`` ranks the records put on it."""
    drawn.select([actor, rollout])
    on_gpu: dict[tuple[int, int], list[int]] = defaultdict(list)
    for p in drawn.placements[actor]:
        if p.hardware_type == ACCELERATOR:
            for gpu in p.local_hardware_ranks:
                on_gpu[(p.cluster_node_rank, gpu)].append(p.rank)
    links: list[WeightSyncLink] = []
    for p in drawn.placements[rollout]:
        if p.hardware_type != ACCELERATOR:
            raise PlacementConfigError(f"weight sync: {rollout} process {p.rank} holds {p.hardware_type} items, not GPUs; CUDA IPC needs GPUs")
        links.extend(
            WeightSyncLink(p.rank, p.cluster_node_rank, gpu, tuple(on_gpu.get((p.cluster_node_rank, gpu), ()))) for gpu in p.local_hardware_ranks
        )
    return links


@dataclass
class Panel:
    """One weight-sync panel: a node (or a run of like nodes) with its GPUs, actor ranks and links."""

    nodes: list[int]
    gpus: int
    actor_ranks: Mapping[int, tuple[int, ...]]  # GPU -> actor ranks on it
    links: list[WeightSyncLink]


def _actor_cells(drawn: Drawn, actor: str, nodes: Sequence[int]) -> dict[int, dict[int, tuple[int, ...]]]:
    """Per node, per GPU: the actor ranks on it (sorted)."""
    cells: dict[int, dict[int, list[int]]] = {node: defaultdict(list) for node in nodes}
    for p in drawn.placements[actor]:
        if p.cluster_node_rank in cells and p.hardware_type == ACCELERATOR:
            for gpu in p.local_hardware_ranks:
                cells[p.cluster_node_rank][gpu].append(p.rank)
    return {node: {gpu: tuple(sorted(ranks)) for gpu, ranks in per_gpu.items()} for node, per_gpu in cells.items()}


def sync_panels(drawn: Drawn, actor: str, links: Sequence[WeightSyncLink], aggregate: bool) -> list[Panel]:
    """A panel per node with rollout GPUs, or (``aggregate``) per run of nodes with the same pairing."""
    by_node: dict[int, list[WeightSyncLink]] = defaultdict(list)
    for link in links:
        by_node[link.node].append(link)
    actor_cells = _actor_cells(drawn, actor, sorted(by_node))

    def gpus(node: int) -> int:
        used = [link.gpu for link in by_node[node]] + list(actor_cells[node])
        return max(drawn.gpus_of(node), max(used) + 1)

    def bases(node: int) -> dict[str, int]:
        actor_ranks = [r for ranks in actor_cells[node].values() for r in ranks]
        base = {"rollout": min(link.rollout_rank for link in by_node[node])}
        return {**base, "actor": min(actor_ranks)} if actor_ranks else base

    def signature(node: int) -> Hashable:
        base = bases(node)
        shift = base.get("actor", 0)
        pairs = tuple((link.rollout_rank - base["rollout"], link.gpu, tuple(r - shift for r in link.actor_ranks)) for link in by_node[node])
        cells = tuple(sorted((gpu, tuple(r - shift for r in ranks)) for gpu, ranks in actor_cells[node].items()))
        return (gpus(node), pairs, cells)

    runs = like_node_runs(sorted(by_node), signature, bases, aggregate)
    return [Panel(run, gpus(run[0]), actor_cells[run[0]], by_node[run[0]]) for run, _ in runs]
