"""Weighed ``contiguity`` over node groups that mix hardware kinds: a node's items split by the
base of their ranks, and whole-node patterns that count each class's items per base.

Why a node has several bases: a window's ranks run node group after node group
(``Cluster.resources``), and a node group holds one kind (RLinf's rule, ``rlinf/scheduler/
cluster/config.py`` lines 274-283 at a3816b59), so in a view that holds several kinds side by
side (``kinds.py``) a member's rank of a node's item is ``base(node, kind) + local id``: one
base per kind, whose gap moves from node to node by the items of each kind on the nodes before.
A node's rank cost is then ``sum over items taken of (weight x local id + offset)``, where an
item's ``offset`` is its class's members' bases summed (one value per *segment*: the node's items
of one offset for that class), and the offsets rise by their own step from node to node.

Why it is exact: within a run of nodes where every segment's offset rises evenly
(``contiguity.even_runs`` on one row per class and segment) and the segments are the same local
ids, a node's layout costs ``first + i x rise`` on the run's ``i``-th node, where ``first`` and
``rise`` depend on how many items each class takes in each segment: a pattern that counts each
class's items per segment says both. The walk over a node's items (``local_costs.py``) lists
exactly those, one column per class and segment, each column kept off the other segments'
items, and a column's items priced as the class's (so the walk's least local ids are the same
search over the same stacks); every such *split* becomes a column of the count model with its
own cost and rise, its class pattern the splits' sum in whole groups (a group may hold items of
several kinds: a process holds one kind, ``rules/per_process.py``, and the view keeps a process
of several items inside one kind, ``kinds._view_cluster``). The ordering argument of
``contiguity.py`` holds per column (larger rise first), so the model's optimum over the splits is
the least rank sum of any layout of the counts. A split is left out only when another of the
same class pattern costs no more on the first node and rises no faster (never better anywhere).
The layout lays each node out by the split the model chose for it (``weighed.py``).

Nothing here grows with the GPU count beyond one pass over the items: segments are per node
shape, columns per class and segment (at most ``MAX_SEGMENTS`` a class on a node).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model_helper

from solver_placement._arrays import row_groups
from solver_placement._cluster.cluster import Cluster
from solver_placement._solver.counts.fixed_loads import FixedLoad
from solver_placement._solver.counts.local_costs import NodeWalk, node_patterns
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._specification.candidates import ComponentRequest

#: Most rank bases (segments) one class's items take on one node: one per kind its node groups
#: hold, so a window over more kinds (or ranks that jump inside a kind, overlapping node groups)
#: is declined by this limit rather than walked with a column per item.
MAX_SEGMENTS = 4
#: CP-SAT's search for a count model with split patterns: branching on its linear relaxation,
#: every constraint in it from the start. The default search proves such models slowly (the
#: rises of two kinds make several times the levels of one, ``contiguity.add_term``): on the
#: ``mixed kinds contiguity`` family it ran past 10 s on 5 of 7 models that branching on the
#: relaxation proves in 0.4-0.75 s, and with no constraint added lazily 0.08-0.23 s where that
#: took 0.17-1.16 s (three models, one worker, load 10 on 2 cores).
SPLIT_SEARCH: dict[str, object] = {"search_branching": cp_model_helper.SatParameters.LP_SEARCH, "add_lp_constraints_lazily": False}
#: An item no class member holds (no offset).
UNHELD = np.iinfo(np.int64).max

#: Per class of a part, the segment of each local id of a node (-1: the class holds no item there).
Signature = tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class KindRanks:
    """Per class, the sum over its members of ``rank - local id`` of every item of the view the
    class holds (``UNHELD`` elsewhere), and the classes whose items of one node take several
    such offsets (``mixed``)."""

    offsets: np.ndarray  # classes x items
    mixed: frozenset[int]
    item_start: np.ndarray  # per node, its first item
    segments: np.ndarray  # classes x items: the item's segment on its node (numbered by first local id; -1: not held)

    def splits(self, part: tuple[int, ...]) -> bool:
        """Whether the part holds a class of several offsets on a node (its patterns are split)."""
        return bool(self.mixed & set(part))

    def node_signatures(self, part: tuple[int, ...], capacities: np.ndarray) -> tuple[np.ndarray, list[Signature]]:
        """Per node (``capacities``: its items), the index in the list returned of its signature:
        per class of ``part``, the segment of each of its local ids (segments numbered by their
        first local id); each distinct one built once (a tuple per node cost 0.18 s on 16,384
        nodes, most of them alike)."""
        found = np.zeros(capacities.size, dtype=np.int64)
        signatures: list[Signature] = []
        rows = self.segments[list(part)]
        for capacity in np.unique(capacities).tolist():
            nodes = np.flatnonzero(capacities == capacity)
            at = self.item_start[nodes][:, None] + np.arange(capacity, dtype=np.int64)[None, :]  # nodes x local ids
            held = np.hstack([row[at] for row in rows])  # per node, each class's segments in turn
            for group in row_groups(held):
                found[nodes[group]] = len(signatures)
                signatures.append(tuple(tuple(row) for row in held[group[0]].reshape(len(part), capacity).tolist()))
        return found, signatures

    def segment_bases(self, part: tuple[int, ...], signature: Signature, nodes: np.ndarray) -> np.ndarray:
        """Per column (class of ``part`` and segment, in :func:`split_walk`'s order), the offset
        of its items on each of ``nodes`` (all of ``signature``)."""
        rows = []
        for c, segments in zip(part, signature, strict=True):
            firsts = _firsts(segments)
            for local in firsts:
                rows.append(self.offsets[c, self.item_start[nodes] + local] if local >= 0 else np.zeros(nodes.size, dtype=np.int64))
        return np.array(rows, dtype=np.int64).reshape(len(rows), nodes.size)


def kind_ranks(problem: CountProblem, requests: Mapping[str, ComponentRequest], cluster: Cluster) -> KindRanks | str:
    """Each class's offsets (:class:`KindRanks`); why not, when a class's items of one node take
    more than ``MAX_SEGMENTS`` offsets."""
    offsets = np.full((len(problem.classes), cluster.num_hardware), UNHELD, dtype=np.int64)
    segments = np.full((len(problem.classes), cluster.num_hardware), -1, dtype=np.int64)
    mixed = set()
    for c, count_class in enumerate(problem.classes):
        held = np.ones(cluster.num_hardware, dtype=bool)
        member_ranks = []
        for member in count_class.members:
            member_ranks.append(_ranks_of(requests[member], cluster.num_hardware))
            held &= member_ranks[-1] != UNHELD
        items = np.flatnonzero(held)  # the offsets summed over the items every member holds alone
        total = sum((rank_of[items] for rank_of in member_ranks), np.zeros(items.size, dtype=np.int64)) - len(member_ranks) * cluster.hw_local[items]
        offsets[c, items] = total
        found, per_node = _segments(cluster.hw_node[items], total, cluster.hw_local[items], cluster.num_nodes)
        if per_node.max(initial=0) > MAX_SEGMENTS:
            return f"{count_class.root}: a window whose ranks on a node have more than {MAX_SEGMENTS} bases (its node groups hold more kinds, or list a node's items twice)"
        if per_node.max(initial=0) > 1:
            mixed.add(c)
        segments[c, items] = found
    item_start = np.concatenate(([0], np.cumsum(cluster.gpus_per_node)[:-1])).astype(np.int64)
    return KindRanks(offsets, frozenset(mixed), item_start, segments)


def _ranks_of(request: ComponentRequest, items: int) -> np.ndarray:
    """Per item, the member's rank of it (``UNHELD``: not in its window); an item listed twice
    (overlapping node groups) keeps its lowest rank, as the flat model picks. Listed once each
    (the usual window), the ranks are written at once: ``np.minimum.at`` took 0.1 s a member on
    16,384 nodes."""
    rank_of = np.full(items, UNHELD, dtype=np.int64)
    if request.window_items.size == request.cand_hw.size:  # no item listed twice
        rank_of[request.cand_hw] = request.cand_rank
    else:
        np.minimum.at(rank_of, request.cand_hw, request.cand_rank)
    return rank_of


def _segments(nodes: np.ndarray, offsets: np.ndarray, local: np.ndarray, node_count: int) -> tuple[np.ndarray, np.ndarray]:
    """Per item (its node, offset and local id), its segment on its node: the items of one offset,
    numbered on each node by their first local id (by arrays: a dictionary per node cost 0.14 s
    on 965 nodes); and per node, its segments (distinct offsets).

    Items listed side by side with one node and offset (a node's run of ranks: the items come in
    id order) are sorted as one, by their least local id: a sort of each item took 0.045 s a
    class on 65,536 nodes of GPUs and robots."""
    if not nodes.size:
        return np.zeros(0, dtype=np.int64), np.zeros(node_count, dtype=np.int64)
    cut = np.ones(nodes.size, dtype=bool)
    cut[1:] = (nodes[1:] != nodes[:-1]) | (offsets[1:] != offsets[:-1])
    starts = np.flatnonzero(cut)
    run_node, run_offset, run_local = nodes[starts], offsets[starts], np.minimum.reduceat(local, starts)
    order = np.lexsort((run_local, run_offset, run_node))
    node_of, offset_of = run_node[order], run_offset[order]
    opens = np.ones(order.size, dtype=bool)
    opens[1:] = (node_of[1:] != node_of[:-1]) | (offset_of[1:] != offset_of[:-1])
    group = np.cumsum(opens) - 1  # per sorted run, its (node, offset) group
    group_node, group_first = node_of[opens], run_local[order][opens]
    ranked = np.lexsort((group_first, group_node))  # groups by node, then first local id
    node_opens = np.ones(ranked.size, dtype=bool)
    node_opens[1:] = group_node[ranked][1:] != group_node[ranked][:-1]
    first_of_node = np.maximum.accumulate(np.where(node_opens, np.arange(ranked.size), 0))  # per ranked group, its node's first
    rank = np.empty(ranked.size, dtype=np.int64)
    rank[ranked] = np.arange(ranked.size) - first_of_node
    found = np.empty(order.size, dtype=np.int64)
    found[order] = rank[group]
    return np.repeat(found, np.diff(starts, append=nodes.size)), np.bincount(group_node, minlength=node_count)


def class_bases(ranks: KindRanks, cluster: Cluster) -> np.ndarray:
    """Per class and node, the offset of the class's first item there (0 where it holds none):
    the one base of a class of one offset per node, as ``contiguity.rank_bases`` states it (a
    mixed class's parts are split, and read :meth:`KindRanks.segment_bases` instead)."""
    bases = np.zeros((ranks.offsets.shape[0], cluster.num_nodes), dtype=np.int64)
    for c in range(ranks.offsets.shape[0]):
        items = np.flatnonzero(ranks.offsets[c] != UNHELD)
        first = np.unique(cluster.hw_node[items], return_index=True)
        bases[c, first[0]] = ranks.offsets[c, items[first[1]]]
    return bases


@dataclass(frozen=True)
class SplitWalk:
    """The walk over a node's items with one column per class and segment: ``owner[k]`` is the
    position in the part of column ``k``'s class."""

    walk: NodeWalk
    owner: tuple[int, ...]

    def project(self, splits: np.ndarray, widths: tuple[int, ...], most: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """The class patterns (groups per class of the part) of ``splits`` (items per column) and
        which splits make whole groups within each class's total."""
        owners = np.zeros((len(self.owner), len(widths)), dtype=np.int64)
        owners[np.arange(len(self.owner)), self.owner] = 1
        counts = splits @ owners
        whole = ((counts % np.array(widths, dtype=np.int64)) == 0).all(axis=1) & (counts <= np.array(most, dtype=np.int64)).all(axis=1)
        return counts // np.array(widths, dtype=np.int64), whole

    def ids_of(self, stacks: list[tuple[int, ...]], present: int) -> np.ndarray:
        """The local ids whose stack (``stacks``: one per local id, traced back through the walk) holds
        a column of the part's class ``present``."""
        return np.array([gpu for gpu, stack in enumerate(stacks) if any(self.owner[k] == present for k in stack)], dtype=np.int64)


def split_walk(walk: NodeWalk, signature: Signature) -> SplitWalk:
    """``walk`` (a part's, in groups per class) over one column per class and segment of the
    node: each column kept off the other segments' items, priced, run and allowed as its class,
    counted in items; each stack of classes becomes, on every item, the stack of their columns
    there."""
    owner: list[int] = []
    column_of: dict[tuple[int, int], int] = {}
    kept_off: list[tuple[int, ...]] = []
    for k, segments in enumerate(signature):
        count = max(1, max(segments, default=-1) + 1)
        for j in range(count):
            column_of[k, j] = len(owner)
            owner.append(k)
            outside = {gpu for gpu, segment in enumerate(segments) if segment != j} if count > 1 else set()
            kept_off.append(tuple(sorted(set(walk.kept_off[k]) | outside)))
    stacks = set()
    for stack in walk.stacks:
        for gpu in range(walk.capacity):
            if all(signature[k][gpu] >= 0 or max(signature[k], default=-1) < 1 for k in stack):
                stacks.add(tuple(sorted(column_of[k, max(signature[k][gpu], 0)] for k in stack)))
    fits = _fits_of(walk.fits, tuple(owner)) if walk.fits is not None else None
    split = NodeWalk(
        walk.capacity, tuple(walk.weights[k] for k in owner), (1,) * len(owner), tuple(walk.allowed[k] for k in owner), tuple(kept_off),
        tuple(walk.runs[k] for k in owner), tuple(sorted(stacks)), walk.loads, fits,
        tuple(walk.steps[k] for k in owner) if walk.steps else (), tuple(walk.most[k] for k in owner) if walk.most else (),
    )  # fmt: skip
    return SplitWalk(split, tuple(owner))


def _fits_of(fits: Callable[[FixedLoad, tuple[int, ...]], bool], owner: tuple[int, ...]) -> Callable[[FixedLoad, tuple[int, ...]], bool]:
    """``fits`` (on positions in the part) read on columns."""
    return lambda load, stack: fits(load, tuple(sorted({owner[k] for k in stack})))


@dataclass(frozen=True)
class SplitRun:
    """A run's whole-node patterns from a split walk: per pattern (class groups, duplicates
    possible) its split (items per column), cost on the run's first node and rise per node."""

    patterns: np.ndarray
    splits: np.ndarray
    first: np.ndarray
    rises: np.ndarray


def split_runs(
    split: SplitWalk,
    listed: tuple[np.ndarray, np.ndarray],
    widths: tuple[int, ...],
    most: tuple[int, ...],
    bases: np.ndarray,
    nodes: np.ndarray,
    runs: list[np.ndarray],
) -> list[tuple[np.ndarray, SplitRun]]:
    """The ``runs`` of ``nodes`` (positions in it) where every column's offset (``bases``: columns
    x ``nodes``) rises evenly (``contiguity.even_runs``), each with its patterns: every split
    ``listed`` by the walk (items per column, least local cost) in whole groups, priced on the
    run, the dominated ones left out (another of the same class pattern no dearer on the first
    node and rising no faster), class patterns ascending (the empty one first)."""
    splits, local = listed
    patterns, whole = split.project(splits, widths, most)
    splits, local, patterns = splits[whole], local[whole], patterns[whole]
    found = []
    for run in runs:
        head = bases[:, run[0]]
        step = bases[:, run[1]] - head if run.size > 1 else np.zeros(bases.shape[0], dtype=np.int64)
        first, rises = local + splits @ head, splits @ step
        order = np.lexsort((rises, first, *patterns.T[::-1]))
        keep, lowest, previous = [], 0, None
        for i in order.tolist():
            key = tuple(patterns[i].tolist())
            if key != previous or rises[i] < lowest:
                keep.append(i)
                lowest = int(rises[i]) if key != previous else min(lowest, int(rises[i]))
            previous = key
        kept = np.array(keep, dtype=np.int64)
        found.append((nodes[run], SplitRun(patterns[kept], splits[kept], first[kept], rises[kept])))
    return found


def _firsts(segments: tuple[int, ...]) -> list[int]:
    """Per segment (in order), its first local id (``-1`` for a class that holds none: one
    column, never used)."""
    count = max(1, max(segments, default=-1) + 1)
    return [segments.index(j) if j in segments else -1 for j in range(count)]


def listed_split(walk: NodeWalk, signature: Signature, check: Callable[[str], None]) -> tuple[SplitWalk, tuple[np.ndarray, np.ndarray]]:
    """The split walk of a node and every split it lists with its least local cost."""
    split = split_walk(walk, signature)
    return split, node_patterns(split.walk, check)
