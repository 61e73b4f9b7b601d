"""The runs of alike nodes a weighed ``contiguity`` counts, with every whole-node pattern priced.

The patterns stay arrays until the relaxation says which ones the model needs.

Why not ``patterns.shapes``: with ranks weighed, a node's patterns are priced by their least
local ids, and the walk over the node's GPUs that prices them also lists them
(``local_costs.py``), so the shapes here group nodes only, by everything the walk reads (GPU
count, classes allowed, GPUs each class is kept off, the graph of classes kept apart, the rank
strings' loads) and the domains the model counts; ``contiguity.even_runs`` cuts them where ranks stop rising
evenly. Tens of thousands of patterns cost milliseconds as arrays; only those the relaxation
keeps (``reduced_costs.py``) become the model's integers.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from solver_placement._arrays import sorted_row_groups
from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import agreeing, counted
from solver_placement._solver.counts.contiguity import Ranked, even_runs, local_run
from solver_placement._solver.counts.fixed_loads import FixedLoad
from solver_placement._solver.counts.graphs import ApartGraph
from solver_placement._solver.counts.kind_ranks import KindRanks, Signature, SplitRun, SplitWalk, listed_split, split_runs
from solver_placement._solver.counts.local_costs import NodeWalk, members_present, node_patterns, pattern_rows
from solver_placement._solver.counts.pattern_program import RunColumns, fewest_nodes
from solver_placement._solver.counts.patterns import Shape, Table, beside_of, class_domains
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.counts.stack_sums import graph_stacks, stack_sums
from solver_placement._specification.candidates import ComponentRequest


@dataclass(frozen=True)
class WalkedRun:
    """One run of alike nodes of one part with all its patterns (groups per class of ``part``,
    the empty one first) and their least local costs."""

    shape: Shape  # its table empty: the patterns are below
    patterns: np.ndarray
    local: np.ndarray
    lead: np.ndarray  # per class of the part, the rank cost of one group on the run's first node
    step: np.ndarray  # and how much more on each next node
    split: SplitRun | None = None  # items of several kinds: each pattern's split, its own cost (in ``local``) and rise (``kind_ranks.py``)
    walk: SplitWalk | None = None  # the walk whose columns the splits count

    @property
    def rises(self) -> np.ndarray:
        """Per pattern, how much more it costs on each next node of the run."""
        return self.split.rises if self.split is not None else self.patterns @ self.step

    def columns(self, problem: CountProblem, weights: Mapping[str, int]) -> RunColumns:
        """The run as the relaxation sees it, costs weighed as the model weighs them."""
        members = [len(problem.classes[c].members) for c in self.shape.part]
        contiguity = int(weights.get("contiguity", 0))
        present = members_present(self.patterns, members)
        costs = contiguity * (self.patterns @ self.lead + self.local) + int(weights.get("nodes", 0)) * present
        group_gpus = np.array([problem.classes[c].width * len(problem.classes[c].members) for c in self.shape.part], dtype=np.int64)
        return RunColumns(self.shape.part, self.patterns, costs, self.rises, int(self.shape.nodes.size), group_gpus, present)

    def ranked(self, keep: np.ndarray) -> Ranked:
        """The run with the patterns of ``keep`` (a mask; the empty pattern always) as the
        model's shape."""
        keep = keep.copy()
        keep[0] = True
        table = Table(tuple(range(len(self.shape.part))), tuple(pattern_rows(self.patterns[keep])))
        ranked = Ranked(replace(self.shape, tables=(table,)), tuple(self.lead.tolist()), tuple(self.step.tolist()), tuple(self.local[keep].tolist()))
        if self.split is None:
            return ranked
        return replace(ranked, rises=tuple(self.split.rises[keep].tolist()), split=self.walk, splits=tuple(pattern_rows(self.split.splits[keep])))


def walked_runs(
    problem: CountProblem,
    part: tuple[int, ...],
    cluster: Cluster,
    bases: np.ndarray,
    requests: Mapping[str, ComponentRequest],
    check: Callable[[str], None],
    priced: bool = True,
    kinds: KindRanks | None = None,
) -> list[WalkedRun]:
    """The runs of ``part``'s nodes (those where some class of it may go), each with every
    pattern a node may hold and its least local cost; one walk per distinct node. Not
    ``priced`` (``contiguity`` not weighed: the local costs weigh nothing), a node of no GPU
    kept off, no fixed load and no run or progression lists its patterns by stack sums
    (``stack_sums.py``: the walk's patterns, in its order, in milliseconds) at cost 0. A part
    with a class whose ranks on a node have several bases (``kinds``: items of several kinds)
    is walked split by base, its nodes alike also in which local ids take each base
    (``kind_ranks.py``)."""
    split = priced and kinds is not None and kinds.splits(part)
    index = list(part)
    allowed = problem.allowed[index]
    domains = [class_domains(problem.classes[c], cluster.num_nodes) for c in part]
    beside = problem.beside
    fits = beside_of(problem, part) if beside is not None else None
    placed_first = problem.load if problem.load is not None else np.zeros(cluster.num_nodes, dtype=np.int64)
    members = tuple(len(problem.classes[c].members) for c in part)
    widths = tuple(problem.classes[c].width for c in part)
    most = tuple(problem.classes[c].groups * problem.classes[c].width for c in part)  # a node holds no more than a class has
    runs, steps = (tuple(column) for column in zip(*(local_run(problem.classes[c], requests) for c in part)))
    kept = [problem.blocked_locals(c) for c in part]  # per class, node -> local ids it is kept off
    signature_of, signatures = kinds.node_signatures(part, cluster.gpus_per_node) if split and kinds is not None else (None, [])

    def key_of(node: int) -> _NodeKey:
        capacity = int(cluster.gpus_per_node[node])
        loads = beside.on_node(node, capacity) if beside is not None else ()
        return _NodeKey(
            capacity, tuple(allowed[:, node].tolist()), tuple(tuple(levels[node].tolist()) for levels in domains), int(problem.graph_of[node]),
            tuple(held.get(node, ()) for held in kept), loads if any(load is not None for load in loads) else (), int(placed_first[node]),
            signatures[signature_of[node]] if signature_of is not None else (),
        )  # fmt: skip

    # Nodes alike by rows of arrays (a key per node took 0.9 s on 16,384 nodes), their GPUs'
    # loads among them (``Beside.table``); only those kept off local ids no mask holds are read
    # one by one.
    masks = [problem.blocked_masks(c) for c in part]
    apart = {node for held, mask in zip(kept, masks, strict=True) if mask is None for node in held}
    columns = [
        cluster.gpus_per_node, allowed.T, *domains, problem.graph_of, placed_first,
        *(mask for mask in masks if mask is not None), *([signature_of] if signature_of is not None else []),
        *([beside.table] if beside is not None else []),
    ]  # fmt: skip
    groups: dict[_NodeKey, list[int]] = {}
    for first, held in _alike(np.flatnonzero(allowed.any(axis=0)), apart, columns):
        groups.setdefault(key_of(first), []).extend(held.tolist())
    part_bases = bases[index]  # one copy: per group of nodes alike it was most of the time (16,384 racks of 65,536 nodes: 3 s)
    walked: dict[NodeWalk, tuple[np.ndarray, np.ndarray]] = {}
    split_walks: dict[tuple[NodeWalk, Signature], tuple[SplitWalk, tuple[np.ndarray, np.ndarray]]] = {}
    found = []
    for key, nodes in groups.items():
        graph = problem.graphs[key.graph]
        stacks = graph_stacks(graph, part)
        walk = NodeWalk(key.capacity, members, widths, key.allowed, key.kept_off, runs, stacks, key.loads, fits if key.loads else None, steps, most)
        if key.signature and kinds is not None:
            if (walk, key.signature) not in split_walks:
                split_walks[walk, key.signature] = listed_split(walk, key.signature, check)
            by_base, listed = split_walks[walk, key.signature]
            at = np.array(nodes, dtype=np.int64)
            offsets = kinds.segment_bases(part, key.signature, at)
            for run, priced_run in split_runs(by_base, listed, widths, most, offsets, at, even_runs(np.arange(at.size, dtype=np.int64), offsets)):
                shape = Shape(part, key.capacity, run, (), key.domains, load=key.placed_first)
                none = np.zeros(len(part), dtype=np.int64)
                found.append(WalkedRun(shape, priced_run.patterns, priced_run.first, none, none, priced_run, by_base))
            continue
        if walk not in walked:
            walked[walk] = _listed(walk, graph, part, check) if not priced else node_patterns(walk, check)
        patterns, local = walked[walk]
        for run in even_runs(np.array(nodes, dtype=np.int64), part_bases):
            head = part_bases[:, run[0]]
            step = part_bases[:, run[1]] - head if run.size > 1 else np.zeros(len(part), dtype=np.int64)
            shape = Shape(part, key.capacity, run, (), key.domains, load=key.placed_first)
            found.append(WalkedRun(shape, patterns, local, head * np.array(widths), step * np.array(widths)))
    return found


def _alike(candidates: np.ndarray, apart: Collection[int], columns: Sequence[np.ndarray]) -> list[tuple[int, np.ndarray]]:
    """The ``candidates`` (ascending) in groups of nodes alike, each as (its first node, its
    nodes ascending), by first node: one group per distinct row of ``columns`` (per node, each
    an array over every node or a nodes x levels table) among the nodes not ``apart``, and each
    node ``apart`` a group of its own (a class kept off local ids no mask holds: its key reads
    its ids, ``walked_runs``). Two nodes of one row have
    the same key and two rows differ in some part of it, so the groups are the keys' own, found
    by one sort of the rows, not one key per node (20 ms on 739 nodes, 0.13 s on 16,384)."""
    special = np.isin(candidates, np.array(sorted(apart), dtype=np.int64))
    plain = candidates[~special]
    found = [(int(node), np.array([node], dtype=np.int64)) for node in candidates[special].tolist()]
    if plain.size:
        picked = [np.asarray(column)[plain] for column in columns]
        rows = np.concatenate([(column[:, None] if column.ndim == 1 else column).astype(np.int64) for column in picked], axis=1)
        found += [(int(plain[group[0]]), plain[group]) for group in sorted_row_groups(rows)]
    return sorted(found, key=lambda group: group[0])


def _listed(walk: NodeWalk, graph: ApartGraph, part: tuple[int, ...], check: Callable[[str], None]) -> tuple[np.ndarray, np.ndarray]:
    """The walk's patterns with every local cost 0 (they weigh nothing), by stack sums where the
    walk has nothing but stacks to follow (no GPU kept off, no load, runs and steps of 1), else
    by the walk."""
    plain = not any(walk.kept_off) and not walk.loads and all(run <= 1 for run in walk.runs) and all(step <= 1 for step in walk.steps)
    summed = stack_sums(graph, part, walk.widths, walk.allowed, walk.capacity) if plain else None
    if summed is None:
        return node_patterns(walk, check)
    return summed, np.zeros(summed.shape[0], dtype=np.int64)


@dataclass(frozen=True)
class _NodeKey:
    """What makes nodes alike for one part: GPU count, classes allowed, the domains at each
    class's levels, the graph of classes kept apart (its index), the local ids each class is
    kept off, the rank strings' load on each GPU (``fixed_loads.py``; ``()``: none), the GPUs
    of components placed first (``preset.py``, for ``balance``) and, in a part split by rank
    base, which local ids take each base (``kind_ranks.py``)."""

    capacity: int
    allowed: tuple[bool, ...]
    domains: tuple[tuple[int, ...], ...]
    graph: int
    kept_off: tuple[tuple[int, ...], ...]
    loads: tuple[FixedLoad | None, ...]
    placed_first: int
    signature: Signature = ()  # per class, the rank base of each local id (``kind_ranks.py``; ``()``: one base a node)


def fewest_walked(problem: CountProblem, walked: Sequence[WalkedRun]) -> np.ndarray:
    """Per class, the fewest nodes any answer over the walked patterns puts its groups on
    (``pattern_program.fewest_nodes``): the cut every count model of them takes."""
    return fewest_nodes([(run.shape.part, run.patterns) for run in walked], [c.groups for c in problem.classes])


def described(walked: Sequence[WalkedRun]) -> str:
    """``12 runs, 3,400 walked whole-node patterns``, for the notes."""
    total = sum(run.patterns.shape[0] for run in walked)
    return f"{total:,} {agreeing(total, 'walked whole-node pattern')} in {counted(len(walked), 'run')}"
