"""Which specs the count model states exactly, and what it is built from.

GPUs of one node are interchangeable for every rule but exact ids and strides, and nodes of one
*shape* (GPU count, GPU memory and which components may use them) are interchangeable for every
objective term but the order of ranks. So a spec whose free components each use whole nodes is
decided by counts: how many tensor-parallel groups of each component a node holds. This module
reads a spec into that form, a :class:`CountProblem`, or returns the reason it cannot (the
caller says it when it falls back to the flat model):

- a *class* is a free component plus the free components collocated with it, through chains
  and cycles of ``collocate_with`` too (they use exactly its GPUs, nested in its groups, so they
  add no choice, only cost; ``followers.py`` finds the group every member tiles);
- per node, the classes' GPUs must satisfy every clique of the graph of classes that may not
  share a GPU there (exclusive ones, those whose ``memory_gb`` does not fit one of its GPUs
  together, and those whose processes on one GPU pass a ``max_processes_per_hardware``:
  ``stacks.py``); the GPUs of such a clique add up. For a chordal graph that is also
  sufficient, and the per-node construction (``layout.py``) finds the ids in a perfect
  elimination order; a part that is not chordal, or classes a process limit lets share in pairs
  but not all together, are checked by GPU stacks over the sets that may share instead
  (``covers.py``);
- a rank-string component a class is exclusive with takes its GPUs out of every node it uses,
  and a window over part of a node the GPUs it leaves out (``windows.py``); where classes that
  compete for a node's GPUs are kept off the same ones, each clique's room is one number, and
  where not, the node's GPUs are told apart by the classes they admit (``typed.py``);
- a rank-string component's memory and processes load its GPUs: a GPU with such a load admits
  only the stacks of classes that fit beside it (``fixed_loads.py``), told apart by ``typed.py``;
- a class whose root takes GPUs a stride apart in groups its blocks do not tile, or kept off
  some GPUs, is made of progressions rather than blocks (``CountClass.step``, ``strided.py``),
  and every node it may use is checked GPU by GPU (``typed.py``);
- a required domain makes each value of its label hold whole units of the class's groups, for
  any member's tensor-parallel groups or pipelines (``domain_levels.py``; where two members'
  units overlap, each member numbers its processes by its own domains); a preferred
  ``tensor_parallel`` domain of groups on one node costs nothing, since a node has one value of
  any label.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from math import lcm

import numpy as np

from solver_placement._arrays import distinct, sorted_by_key, unique_rows
from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import InternalError
from solver_placement._solver.counts.domain_levels import DomainLevel, JointLevel, PricedLevel, domain_levels
from solver_placement._solver.counts.fixed_loads import Beside, fixed_loads
from solver_placement._solver.counts.followers import Blocks, Loose, collocations, common_window
from solver_placement._solver.counts.graphs import ApartGraph, connected_parts
from solver_placement._solver.counts.stacks import Misfit, apart_graphs, loads
from solver_placement._solver.counts.strided import class_layout
from solver_placement._solver.counts.typed import beside_joins
from solver_placement._solver.counts.windows import outside_window, partial_nodes, strides_off_ids
from solver_placement._solver.rules import RULES
from solver_placement._solver.rules.memory import megabytes
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec


@dataclass(frozen=True)
class CountClass:
    """A free component and the free components collocated with it.

    ``group`` processes of the root make one group of ``width`` GPUs on one node (whole
    tensor-parallel groups of every member); ``groups`` is how many it has; every member holds
    each GPU of the class once (``members`` root first); ``follows``/``leader``: the members that
    take the class's GPUs in the order of the leader's processes (``followers.py``).
    """

    root: str
    members: tuple[str, ...]
    group: int
    width: int
    groups: int
    levels: tuple[DomainLevel, ...] = ()  # required domains: whole units of groups per value (``domain_levels.py``)
    run: int = 1  # consecutive GPUs its layout is made of: every member's ``amount * stride`` block divides it (1: any GPU)
    step: int = 1  # ids apart of a run's GPUs: above 1, progressions of a stride that do not tile its groups (``strided.py``)
    priced: tuple[PricedLevel, ...] = ()  # preferred domains no placement keeps, their topology term stated (``spanning.py``)
    joint: tuple[JointLevel, ...] = ()  # a member's preferred domains on several labels, their terms stated together (``crossing.py``)
    follows: tuple[str, ...] = ()
    leader: str = ""


@dataclass(frozen=True)
class CountProblem:
    """A spec as counts: classes, their cliques, and the nodes each class may use.

    ``allowed[c, n]``: class ``c`` may put groups on node ``n`` (its window holds room for a
    group there and the members' memory fits its GPUs). ``graphs[graph_of[n]]`` says which classes may not
    share a GPU on node ``n`` (exclusive, or memory that does not fit together there), with its
    cliques and a placing order (``graphs.py``).
    """

    classes: tuple[CountClass, ...]
    allowed: np.ndarray
    graphs: tuple[ApartGraph, ...]
    graph_of: np.ndarray
    blocked: tuple[np.ndarray, ...]  # per class, the physical ids it is kept off: its rank-string partners', those its window leaves out
    hw_node: np.ndarray  # the cluster's node of every physical id
    hw_local: np.ndarray  # the cluster's local id (on its node) of every physical id
    load: np.ndarray | None = None  # per node, GPUs of components placed first (``preset.py``): ``balance`` adds them to its patterns'
    beside: Beside | None = None  # rank strings' memory and processes on their GPUs, where they matter (``fixed_loads.py``)

    @property
    def apart_somewhere(self) -> frozenset[tuple[int, int]]:
        """Pairs of classes that compete for the GPUs of some node (may not share one there, or
        share a hole of classes that do not all fit together, or a GPU with a fixed load)."""
        joined = self.beside.joined if self.beside is not None else frozenset()
        return frozenset(pair for graph in self.graphs for pair in graph.linked) | joined

    def blocked_per_node(self, c: int, num_nodes: int) -> np.ndarray:
        """How many GPUs of each node class ``c`` is kept off (rank strings, its window's edge)."""
        return np.bincount(self.hw_node[self.blocked[c]], minlength=num_nodes)

    def blocked_locals(self, c: int) -> Mapping[int, tuple[int, ...]]:
        """Per node holding any, the local ids (ascending) class ``c`` is kept off: read from
        :meth:`blocked_masks` where the local ids fit one (a tuple per node, made only when a
        node is asked, where a dict of them cost 0.1 s per class on 65,536 nodes)."""
        masks = self.blocked_masks(c)
        if masks is None:
            return sorted_by_key(self.hw_node[self.blocked[c]], self.hw_local[self.blocked[c]])
        return LocalsOff(masks)

    def blocked_masks(self, c: int) -> np.ndarray | None:
        """Per node, the local ids class ``c`` is kept off as the bits of one integer (0: none),
        so nodes kept off alike are grouped by arrays; None when a local id passes
        :data:`MASK_BITS` (a node of more GPUs: its ids are read one by one)."""
        held = self.blocked[c]
        local = self.hw_local[held].astype(np.int64)
        if local.size and int(local.max()) >= MASK_BITS:
            return None
        bits = np.left_shift(1, local).astype(np.float64)  # distinct ids: their bits add up to the mask, exactly below 2 ** 53
        return np.bincount(self.hw_node[held], weights=bits, minlength=self.allowed.shape[1]).astype(np.int64)


#: The local ids a bit mask per node holds (:meth:`CountProblem.blocked_masks`): summed as
#: float64 by ``np.bincount`` (a tenth of ``np.bitwise_or.at``'s time), exact to 2 ** 53.
MASK_BITS = 52


class LocalsOff(Mapping[int, tuple[int, ...]]):
    """Per node whose mask has a bit set, its local ids (ascending): the mapping
    :meth:`CountProblem.blocked_locals` gives, each tuple made when it is asked. Its nodes go
    ascending."""

    def __init__(self, masks: np.ndarray) -> None:
        self.masks = masks
        self.nodes = np.flatnonzero(masks)

    def __getitem__(self, node: int) -> tuple[int, ...]:
        mask = int(self.masks[node]) if 0 <= node < self.masks.size else 0
        if not mask:
            raise KeyError(node)
        return mask_ids(mask)

    def __iter__(self) -> Iterator[int]:
        return iter(self.nodes.tolist())

    def __len__(self) -> int:
        return int(self.nodes.size)


@lru_cache(maxsize=4096)
def mask_ids(mask: int) -> tuple[int, ...]:
    """The positions of the bits set in ``mask``, ascending."""
    return tuple(bit for bit in range(mask.bit_length()) if mask >> bit & 1)


def count_problem(
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    separate: frozenset[tuple[int, int]] = frozenset(),
    relaxed: bool = False,
    blocks: Blocks = Blocks.ASKED,
    stacked: bool = False,
) -> CountProblem | Misfit | Loose | str:
    """The spec as a :class:`CountProblem`, or the reason the counts cannot state it exactly (a
    :class:`Misfit` when memory fits two by two but not all together, a :class:`Loose` class
    when strided blocks do not tile a class's groups). ``separate`` keeps pairs of classes apart
    besides the rules; ``relaxed`` states memory by pairs only, a relaxation of the spec
    (``stacks.py``); ``blocks`` how a loose class is counted (``followers.py``); ``stacked``
    states such memory exactly, by the stacks that fit (``stacks.apart_graphs``)."""
    free = {name: request for name, request in requests.items() if not request.determined}
    if not free:
        return "no declarative component"
    reason = _unsupported(spec, requests)
    if reason:
        return reason
    classes = _classes(spec, free, blocks)
    if isinstance(classes, (str, Loose)):
        return classes
    for count_class, load in zip(classes, loads(spec, [c.members for c in classes])):
        if load.limit is not None and load.processes > load.limit:
            return f"{count_class.root}: {load.processes} processes per GPU with its collocated components, over max_processes_per_hardware={load.limit}"
    index = {member: i for i, c in enumerate(classes) for member in c.members}
    exclusive = set()
    for component in spec.components.values():
        mine = component.rule_owner
        for other in component.constraints.exclusive_with:
            theirs = spec.owner_of(other)
            if mine in index and theirs in index and index[mine] != index[theirs]:
                exclusive.add((min(index[mine], index[theirs]), max(index[mine], index[theirs])))
    windows = [common_window(free, c.members) for c in classes]
    per_node = [window_per_node(spec.cluster, window) for window in windows]  # each window's GPUs per node, read by every stage below (65,536 nodes: 5 ms each time)
    reach = np.stack([held > 0 for held in per_node])
    graphs = apart_graphs(spec, [c.members for c in classes], frozenset(exclusive), reach, separate, relaxed, stacked)
    if isinstance(graphs, (str, Misfit)):
        return graphs
    blocked = _blocked(spec, requests, classes, windows, per_node)
    if isinstance(blocked, str):
        return blocked
    classes = [in_progressions(spec, free, c) if held.size else c for c, held in zip(classes, blocked)]
    allowed = np.stack([_allowed_nodes(spec, held_per_node, c, held) for c, held_per_node, held in zip(classes, per_node, blocked)])
    beside = _beside(spec, requests, classes, graphs, blocked, allowed)
    return CountProblem(tuple(classes), allowed, *graphs, blocked, spec.cluster.hw_node, spec.cluster.hw_local, beside=beside)


def _beside(
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    classes: list[CountClass],
    graphs: tuple[tuple[ApartGraph, ...], np.ndarray],
    blocked: tuple[np.ndarray, ...],
    allowed: np.ndarray,
) -> Beside | None:
    """The rank strings' loads on their GPUs (``fixed_loads.py``), with the parts of classes
    that compete beside them joined (``typed.beside_joins``): each loaded GPU's graph, the
    classes it admits (allowed on its node, not kept off it) and its load."""
    beside = fixed_loads(spec, requests, [c.members for c in classes])
    if beside is None:
        return None
    cluster, (found, graph_of) = spec.cluster, graphs
    wide = int(cluster.hw_local.max(initial=0)) + 1
    codes = beside.gpu_node * wide + beside.gpu_local
    admitted = allowed[:, beside.gpu_node].T.copy()  # per loaded GPU and class: allowed on its node and not kept off it
    for c, held in enumerate(blocked):
        admitted[:, c] &= ~np.isin(codes, cluster.hw_node[held] * wide + cluster.hw_local[held])
    # GPUs alike in (graph, classes admitted, load) once each, in the order first met (node by
    # node): by one sort of rows, not a Python step per loaded GPU (every GPU of a view of several
    # kinds carries its own memory: 524,288 on 65,536 nodes)
    rows, inverse = unique_rows(np.column_stack([graph_of[beside.gpu_node], admitted.astype(np.int64), beside.gpu_load]))
    first = np.full(len(rows), len(inverse), dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(len(inverse), dtype=np.int64))
    gpus = [
        (found[row[0]], frozenset(c for c in range(len(classes)) if row[1 + c]), beside.distinct[row[-1]])
        for row in rows[np.argsort(first, kind="stable")].tolist()
    ]
    parts = connected_parts(len(classes), frozenset(pair for graph in found for pair in graph.linked))
    return replace(beside, joined=beside_joins(parts, gpus, beside.fits))


def window_per_node(cluster: Cluster, request: ComponentRequest) -> np.ndarray:
    """Per node, the GPUs of a free request's window: what one node offers its groups, read the
    same way by every part of the count model (``kinds.py``, ``windows.py``). Every process of a
    free request has the same window, so the distinct candidates are that window."""
    return np.bincount(cluster.hw_node[request.window_items], minlength=cluster.num_nodes)


def _blocked(
    spec: PlacementSpec, requests: Mapping[str, ComponentRequest], classes: list[CountClass], windows: list[ComponentRequest], per_node: list[np.ndarray]
) -> tuple[np.ndarray, ...] | str:
    """Per class, the GPUs of the rank-string components it is exclusive with and those its
    window (``windows``: what every member's holds; ``per_node``: its GPUs on each node) leaves out of a node it holds in part
    (``windows.py``); where two classes that compete for a node's GPUs are kept off different
    ones, the node's patterns are checked by GPU type (``typed.py``). Refused when a strided
    member's window ranks do not follow GPU ids."""
    determined = {name for name, request in requests.items() if request.determined}
    avoid: list[frozenset[str]] = []
    for count_class in classes:
        names = set()
        for component in spec.components.values():
            mine = component.rule_owner
            others = {spec.owner_of(o) for o in component.constraints.exclusive_with}
            if mine in count_class.members:
                names |= others & determined
            elif mine in determined and others & set(count_class.members):
                names.add(mine)
        avoid.append(frozenset(names))
    partial = [partial_nodes(spec.cluster, held) for held in per_node]
    for count_class, in_part in zip(classes, partial):
        reason = strides_off_ids(spec.cluster, {m: requests[m] for m in count_class.members}, in_part)
        if reason:
            return reason
    return tuple(
        distinct(np.concatenate([outside_window(spec.cluster, window, in_part), *(requests[name].cand_hw for name in sorted(names))]))
        for window, in_part, names in zip(windows, partial, avoid)
    )


def _unsupported(spec: PlacementSpec, requests: Mapping[str, ComponentRequest]) -> str:
    """The first rule of the spec the counts do not state exactly, or '': each rule family's
    node-level form says it (``counts`` of the registry's :class:`Rule`)."""
    for rule in RULES:
        if callable(rule.counts):
            reason = rule.counts(spec, requests)
            if reason:
                return reason
    return ""


def _classes(spec: PlacementSpec, free: Mapping[str, ComponentRequest], blocks: Blocks) -> list[CountClass] | Loose | str:
    """Free components grouped with those they are collocated with, chains and cycles included
    (``followers.py``: the group every member tiles, in config order)."""
    found = collocations(spec, free, blocks)
    if isinstance(found, (str, Loose)):
        return found
    classes = []
    for shape in found:
        name, request = shape.root, free[shape.root]
        levels = domain_levels(spec, free, shape.members, shape.unit)
        groups = request.num_processes * int(request.amount[0]) // shape.unit
        if groups % lcm(*(level.multiple for level in levels)):
            return f"{name}: processes that do not form whole pipelines"
        group = shape.unit // int(request.amount[0])
        classes.append(CountClass(name, shape.members, group, shape.unit, groups, levels, shape.run, shape.step, follows=shape.follows, leader=shape.leader))
    return classes


def in_progressions(spec: PlacementSpec, free: Mapping[str, ComponentRequest], count_class: CountClass) -> CountClass:
    """A class kept off some GPUs, or whose local ids are priced (``weighed.py``), in
    progressions where blocks would not be exact (``strided.class_layout``)."""
    layout = class_layout(spec, free, count_class.members, spread=True)
    if isinstance(layout, str):  # a follower the class could not hold is refused when it is formed
        raise InternalError(f"{count_class.root}: {layout}")
    return replace(count_class, run=layout[0], step=layout[1]) if layout[1] > 1 else count_class


def _allowed_nodes(spec: PlacementSpec, per_node: np.ndarray, count_class: CountClass, blocked: np.ndarray) -> np.ndarray:
    """Nodes the class's window (``per_node``: its GPUs on each) reaches with room for one group
    beside the GPUs it is kept off (``blocked``), and whose memory holds the members' mix."""
    cluster = spec.cluster
    room = np.where(per_node > 0, cluster.gpus_per_node - np.bincount(cluster.hw_node[blocked], minlength=cluster.num_nodes), 0)
    allowed = room >= count_class.width
    memories = [m for name in count_class.members for c in spec.components.values()
                if c.rule_owner == name and (m := c.constraints.memory) is not None]
    if memories:
        need_mb = max(megabytes(running.active) + sum(megabytes(other.idle) for j, other in enumerate(memories) if j != i)
                      for i, running in enumerate(memories))
        limits = np.array([np.inf if m is None else m for m in cluster.gpu_memory_gb], dtype=np.float64)
        allowed &= need_mb <= np.ceil(limits * 1024)  # by arrays: one numpy scalar call per node took 35 ms a class on 65,536 nodes
    return allowed
