"""What is drawn: a solved layout or bare placement records turned into records per component
plus the hardware of every node.

Drawing never solves: solving is the caller's job, and the figures take what it returned (a
``Solution``, a framework's ``Prediction``, an RLinf ``ComponentPlacement`` already built) or
placement records. A config, a YAML path or a spec is refused with the call to make first. The solved layout and the placement
are recognised by what drawing reads of them (:class:`SolvedLayout`, :class:`BuiltPlacement`),
not by their classes, so this package imports neither the solver nor the spec layer. A
:class:`Drawn` answers the questions drawing asks (which nodes, which hardware cells per node, what
model of GPU, which node groups) from the cluster tables when they are known, and otherwise from
what the records reveal, so bare records still draw a sensible picture.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Protocol, TypeAlias, TypeGuard, runtime_checkable

import numpy as np

from solver_placement._cluster.cluster import Cluster
from solver_placement._cluster.ranks import parse_rank_list
from solver_placement._config import did_you_mean
from solver_placement._constants import ACCELERATOR, NODE, RESERVED_LABELS
from solver_placement._errors import PlacementConfigError, shown
from solver_placement._plot.labels import Cell
from solver_placement._records import Placement


@runtime_checkable
class SolvedLayout(Protocol):
    """What drawing reads of a solved layout (a ``Solution``, or a framework's predicted layout,
    a ``Prediction``): the records, the cluster they run on and each component's tensor-parallel
    group size as its spec (or the framework's engines) states it."""

    @property
    def cluster(self) -> Cluster: ...

    def placements_by_component(self) -> dict[str, list[Placement]]: ...

    def tensor_parallel_size(self, component: str) -> int: ...


@runtime_checkable
class BuiltPlacement(Protocol):
    """An RLinf placement already built (a ``ComponentPlacement``): drawn from the solution it holds."""

    @property
    def solution(self) -> SolvedLayout: ...


#: What :func:`plot_layout` and :func:`plot_weight_sync` accept: a solved layout, an RLinf
#: placement already built, or placement records (per component, or one flat sequence).
LayoutSource: TypeAlias = SolvedLayout | BuiltPlacement | Mapping[str, Sequence[Placement]] | Sequence[Placement]

#: Hardware items per kind on one node.
_Counts: TypeAlias = dict[str, int]


@dataclass
class Drawn:
    """Placement records per component plus what is known of the cluster they run on."""

    placements: dict[str, list[Placement]]
    cluster: Cluster | None
    solution: SolvedLayout | None
    names: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.names = list(self.placements)

    def select(self, components: Sequence[str] | None) -> list[str]:
        """The components to draw, checked against the job's names."""
        if components is None:
            return self.names
        for name in components:
            if name not in self.placements:
                raise PlacementConfigError(f"unknown component {shown(name)}{did_you_mean(name, self.names, 'components')}")
        return list(dict.fromkeys(components))

    @property
    def nodes(self) -> list[int]:
        """Every node of the cluster, or (cluster unknown) every node some record runs on."""
        if self.cluster is not None:
            return list(range(self.cluster.num_nodes))
        return sorted({p.cluster_node_rank for p in self._records})

    @property
    def _records(self) -> Iterable[Placement]:
        return (p for records in self.placements.values() for p in records)

    @cached_property
    def kinds(self) -> tuple[str, ...]:
        """Hardware kinds in drawing order: GPUs, custom hardware, then the node itself."""
        if self.cluster is not None:
            return self.cluster.kinds
        custom = dict.fromkeys(p.hardware_type for p in self._records if p.hardware_type not in (ACCELERATOR, NODE))
        return (ACCELERATOR, *custom, NODE)

    def hardware_of(self, node: int) -> list[Cell]:
        """The node's GPUs and custom items as (kind, local index), in drawing order."""
        counts = self._hardware_counts.get(node, {})
        return [(kind, i) for kind in self.kinds if kind != NODE for i in range(counts.get(kind, 0))]

    def gpus_of(self, node: int) -> int:
        return sum(1 for kind, _ in self.hardware_of(node) if kind == ACCELERATOR)

    @cached_property
    def _hardware_counts(self) -> dict[int, _Counts]:
        """Items per kind on every node: from the cluster tables, or the most the records reveal."""
        return _counts_in_cluster(self.cluster) if self.cluster is not None else _counts_in_records(self._records)

    def model_of(self, node: int) -> str:
        """What the node is, for its row label: accelerator model or type, or 'no GPU'."""
        if self.cluster is None:
            return self._record_models.get(node, "no GPU")
        if not self.cluster.gpus_per_node[node]:
            return "no GPU"
        return self.cluster.accelerator_models[node] or self.cluster.accelerator_types[node]

    @cached_property
    def _record_models(self) -> dict[int, str]:
        """Accelerator model (or type) of every node where some record sees GPUs."""
        return {p.cluster_node_rank: p.accelerator_model or p.accelerator_type for p in self._records if p.visible_accelerators}

    def groups(self) -> list[tuple[str, frozenset[int]]]:
        """User node groups (reserved labels left out) with their nodes, in config order."""
        if self.cluster is not None:
            return [(g.label, frozenset(g.node_ranks)) for g in self.cluster.node_groups.values() if g.label not in RESERVED_LABELS]
        found: dict[str, set[int]] = defaultdict(set)
        for p in self._records:
            if p.node_group_label not in RESERVED_LABELS:
                found[p.node_group_label].add(p.cluster_node_rank)
        return [(label, frozenset(nodes)) for label, nodes in found.items()]

    def tensor_parallel_size(self, component: str) -> int:
        """The component's TP group size as the spec states it (1 when only records are known)."""
        if self.solution is None:
            return 1
        return self.solution.tensor_parallel_size(component)


def _counts_in_cluster(cluster: Cluster) -> dict[int, _Counts]:
    counts: dict[int, _Counts] = defaultdict(dict)
    for node, gpus in enumerate(cluster.gpus_per_node.tolist()):
        counts[node][ACCELERATOR] = gpus
    for index, kind in enumerate(cluster.kinds):
        if kind not in (ACCELERATOR, NODE):
            per_node = np.bincount(cluster.hw_node[cluster.hw_kind == index], minlength=cluster.num_nodes)
            for node in np.flatnonzero(per_node).tolist():
                counts[node][kind] = int(per_node[node])
    return counts


def _counts_in_records(records: Iterable[Placement]) -> dict[int, _Counts]:
    """The most items of each kind the records show per node; a process that sees GPUs without
    holding them (a custom-hardware or node process) still reveals how many the node has."""
    counts: dict[int, _Counts] = defaultdict(lambda: defaultdict(int))
    for p in records:
        seen = counts[p.cluster_node_rank]
        if p.hardware_type != NODE:
            seen[p.hardware_type] = max(seen[p.hardware_type], max(p.local_hardware_ranks) + 1)
        if p.hardware_type != ACCELERATOR or not p.isolate_accelerator:
            seen[ACCELERATOR] = max(seen[ACCELERATOR], len(p.visible_accelerators))
    return counts


def drawn_from(source: object, cluster: Cluster | None, figure: str) -> Drawn:
    """Normalise every accepted input to a :class:`Drawn`; refuse anything still to be solved.

    ``cluster`` completes bare records with the hardware no process uses; ``figure`` names the
    function drawing, for the message that says what to pass instead.
    """
    if isinstance(source, BuiltPlacement):
        source = source.solution
    if isinstance(source, SolvedLayout):
        return Drawn(source.placements_by_component(), source.cluster, source)
    if _is_records(source) and source:
        grouped: dict[str, list[Placement]] = defaultdict(list)
        for p in source:
            grouped[p.component].append(p)
        return Drawn(dict(grouped), cluster, None)
    if isinstance(source, Mapping) and source and all(_is_records(value) for value in source.values()):
        return Drawn({str(name): list(records) for name, records in source.items()}, cluster, None)
    raise _unsolved(source, figure)


def _unsolved(source: object, figure: str) -> PlacementConfigError:
    """The refusal of anything but a solved layout: drawing never solves, so it says which call to make first."""
    if isinstance(source, (str, Path)):
        what, argument = f"the path {str(source)!r}", repr(str(source))
    else:
        what, argument = f"a {type(source).__name__}", "config"
    return PlacementConfigError(
        f"{figure}: cannot draw {what}: it draws a solved layout (a Solution, a Prediction, an RLinf ComponentPlacement or placement "
        f"records) and never solves; solve it first: {figure}(solve({argument}))"
    )


def _is_records(value: object) -> TypeGuard[Sequence[Placement]]:
    return isinstance(value, Sequence) and not isinstance(value, str) and all(isinstance(p, Placement) for p in value)


def select_nodes(nodes: str | Iterable[int] | None, drawn: Drawn) -> list[int]:
    """The nodes to draw: all of the job's, or the ``"0-15"``-style (or int) selection, checked."""
    known = drawn.nodes
    if nodes is None:
        return known
    limit = (max(known) + 1) if known else 0
    ranks = parse_rank_list(nodes if isinstance(nodes, str) else list(nodes), "nodes", "plot", available=limit)
    missing = sorted(set(ranks.tolist()) - set(known))
    if missing:
        raise PlacementConfigError(f"plot: nodes {missing} run no process and the cluster is unknown; pass cluster=")
    return ranks.tolist()
