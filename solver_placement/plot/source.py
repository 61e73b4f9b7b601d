"""What is drawn: any accepted input turned into placement records per component plus the
hardware of every node.

The figures accept a solved layout, the inputs of a solve, or bare placement records. A
:class:`Job` answers the questions drawing asks (which nodes, which hardware cells per node, what
model of GPU, which node groups) from the cluster tables when they are known, and otherwise from
what the records reveal, so bare records still draw a sensible picture.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np
from omegaconf import DictConfig

from solver_placement.cluster.cluster import Cluster
from solver_placement.cluster.ranks import parse_rank_list
from solver_placement.config import did_you_mean
from solver_placement.constants import ACCELERATOR, NODE, RESERVED_LABELS
from solver_placement.errors import PlacementConfigError, shown
from solver_placement.plot.labels import Cell
from solver_placement.records import Placement
from solver_placement.rlinf.component_placement import ComponentPlacement
from solver_placement.solver.solution import Solution
from solver_placement.solver.solve import solve
from solver_placement.spec.placement_spec import PlacementSpec

#: What :func:`plot_layout` and :func:`plot_weight_sync` accept: a solved layout, the inputs of a
#: solve (a spec, a YAML path, a config mapping or DictConfig), or placement records.
LayoutSource: TypeAlias = (
    Solution | ComponentPlacement | PlacementSpec | Mapping[str, Sequence[Placement]] | Sequence[Placement] | str | Path | DictConfig
)

#: Hardware items per kind on one node.
_Counts: TypeAlias = dict[str, int]


@dataclass
class Job:
    """Placement records per component plus what is known of the cluster they run on."""

    placements: dict[str, list[Placement]]
    cluster: Cluster | None
    solution: Solution | None
    title_suffix: str
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
        return self.solution.spec.components[component].constraints.tensor_parallel_size


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


def resolve_job(source: Any, cluster: Cluster | None) -> Job:
    """Normalise every accepted input to a :class:`Job` (solving configs and specs first).

    ``cluster`` completes bare records with the hardware no process uses.
    """
    if isinstance(source, ComponentPlacement):
        source = source.solution
    if isinstance(source, Solution):
        return Job(source.placements_by_component(), source.cluster, source, "")
    if _is_records(source) and source:
        grouped: dict[str, list[Placement]] = defaultdict(list)
        for p in source:
            grouped[p.component].append(p)
        return Job(dict(grouped), cluster, None, "")
    if isinstance(source, Mapping) and source and all(_is_records(value) for value in source.values()):
        return Job({str(name): list(records) for name, records in source.items()}, cluster, None, "")
    if isinstance(source, (PlacementSpec, str, Path, Mapping, DictConfig)):
        solution = solve(source)
        suffix = f" of {Path(source).name}" if isinstance(source, (str, Path)) else ""
        return Job(solution.placements_by_component(), solution.cluster, solution, suffix)
    raise PlacementConfigError(
        f"cannot plot a {type(source).__name__}: give a Solution, a ComponentPlacement, placement records, "
        "or a config (YAML path, mapping, DictConfig, PlacementSpec)"
    )


def _is_records(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str) and all(isinstance(p, Placement) for p in value)


def select_nodes(nodes: str | Iterable[int] | None, job: Job) -> list[int]:
    """The nodes to draw: all of the job's, or the ``"0-15"``-style (or int) selection, checked."""
    known = job.nodes
    if nodes is None:
        return known
    limit = (max(known) + 1) if known else 0
    ranks = parse_rank_list(nodes if isinstance(nodes, str) else list(nodes), "nodes", "plot", available=limit)
    missing = sorted(set(ranks.tolist()) - set(known))
    if missing:
        raise PlacementConfigError(f"plot: nodes {missing} run no process and the cluster is unknown; pass cluster=")
    return ranks.tolist()
