"""From counts to GPU ids, by construction: which node gets which pattern, which GPUs each group.

``contiguity`` ("low ranks first") is applied here, as a canonical order among equally good
answers rather than a weighted term the search must prove: the nodes of one shape take their
patterns heaviest first (on nodes of equal size and consecutive ranks that minimises the sum of
the ranks taken for the chosen counts), and on a node the classes, in an order where each one's
neighbours already placed (classes it may not share a GPU with) form a clique, take the lowest
GPUs those neighbours left. The classes of a part that is not chordal (no such order) take the
GPUs of the stacks that cover them (``covers.py``), the node's free GPUs given the stacks in
order, so a stack used twice takes consecutive GPUs (and where a class of consecutive runs is
then split, the stacks holding it first).
A node's local layout depends only on its GPU count and pattern, so it is built once per
distinct pair and stamped onto every node that has it. The result goes to the independent
verifier like any other answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial

import numpy as np

from solver_placement._arrays import row_groups
from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import InternalError
from solver_placement._solver.assignment import Assignment, window_ranks
from solver_placement._solver.counts.covers import Covers, Hole
from solver_placement._solver.counts.crossing import joint_ranks
from solver_placement._solver.counts.domain_levels import member_levels, node_order
from solver_placement._solver.counts.fixed_loads import FixedLoad
from solver_placement._solver.counts.followers import member_items
from solver_placement._solver.counts.graphs import ApartGraph, connected_parts
from solver_placement._solver.counts.model import Counts
from solver_placement._solver.counts.patterns import Shape, beside_of
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.counts.runs import runs_cover
from solver_placement._solver.counts.spanning import spanning_order
from solver_placement._solver.counts.strided import progressions_of
from solver_placement._solver.counts.typed import gpu_types, needs_types, part_stacks, typed_cover
from solver_placement._specification.candidates import ComponentRequest


class LayoutFailed(Exception):
    """No per-node layout in the tried orders keeps every group's items tileable."""


@dataclass(frozen=True)
class _NodeAsk:
    """What one node must hold: ``pattern`` groups per class on ``capacity`` GPUs, class ``c``
    keeping off local ids ``keep_off[c]``, classes paired in ``graph`` on different GPUs, and
    on a GPU with a fixed load only stacks that fit beside it. Nodes asked the same get the
    same local layout."""

    graph: ApartGraph
    capacity: int
    pattern: tuple[int, ...]
    keep_off: tuple[tuple[int, ...], ...]
    loads: tuple[FixedLoad | None, ...] = ()  # per local id, the rank strings' load (``fixed_loads.py``; ``()``: none)
    rows: tuple[tuple[int, int], ...] = ()  # (shape, pattern) of the shapes whose equal patterns the layout tells apart (``Variant``)


@dataclass(frozen=True)
class _NodeLayout:
    """Local GPU ids per member on a node: ``items[member]`` is processes x items per process."""

    items: dict[str, np.ndarray]


#: A weighed ``contiguity``'s layout (``contiguity.py``): ``heavier(shape, row, pattern)`` orders
#: a shape's patterns (``row``: its index in the shape's one table) onto its nodes (largest
#: first), ``local_ids(graph, capacity, pattern, keep_off, loads, rows)`` gives each class's
#: local ids on a node (None: the construction below decides), ``rows`` the node's (shape, row)
#: of each shape whose rows of one pattern are laid out differently (``variant(shape)``: items
#: of several kinds, ``kind_ranks.py``).
Heavier = Callable[[int, int, tuple[int, ...]], int]
Variant = Callable[[int], bool]
LocalIds = Callable[
    [ApartGraph, int, tuple[int, ...], tuple[tuple[int, ...], ...], tuple[FixedLoad | None, ...], tuple[tuple[int, int], ...]], dict[int, np.ndarray] | None
]


def assignments(
    problem: CountProblem,
    shapes: list[Shape],
    counts: Counts,
    requests: Mapping[str, ComponentRequest],
    cluster: Cluster,
    heavier: Heavier | None = None,
    local_ids: LocalIds | None = None,
    variant: Variant | None = None,
) -> dict[str, Assignment]:
    """Assignments of every free member request, processes ordered by node, then by GPU."""
    patterns_on, rows = _patterns_per_node(problem, shapes, counts, cluster.num_nodes, heavier)
    start = np.concatenate(([0], np.cumsum(cluster.gpus_per_node)[:-1]))
    avoided = [problem.blocked_locals(c) for c in range(len(problem.classes))]
    per_member: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {m: [] for c in problem.classes for m in c.members}
    split = {s for s in range(len(shapes)) if variant(s)} if variant is not None else set()
    told = (lambda node: tuple(sorted({(s, p) for s, p in zip(rows[0][node].tolist(), rows[1][node].tolist()) if s in split}))) if split else None
    in_split = np.isin(rows[0], np.array(sorted(split), dtype=np.int64))
    told_rows = np.column_stack([np.where(in_split, rows[0], -1), np.where(in_split, rows[1], -1)]) if split else None
    for key, node_array in _asks(problem, patterns_on, cluster, avoided, told, told_rows).items():
        taken = local_ids(key.graph, key.capacity, key.pattern, key.keep_off, key.loads, key.rows) if local_ids is not None else None
        whole = taken is not None and _whole_runs(problem, requests, taken)
        layout = _items(problem, requests, key, taken) if taken is not None and whole else _node_layout(problem, requests, key)
        for member, local in layout.items.items():
            if local.size:
                per_member[member].append((node_array, start[node_array][:, None, None] + local[None]))
    order_of = {m: _member_order(problem, counts, i, m, patterns_on[:, i]) for i, c in enumerate(problem.classes) for m in c.members}
    return {member: _assignment(requests[member], parts, order_of[member], cluster) for member, parts in per_member.items()}


def _asks(
    problem: CountProblem,
    patterns_on: np.ndarray,
    cluster: Cluster,
    avoided: list[Mapping[int, tuple[int, ...]]],
    told: Callable[[int], tuple[tuple[int, int], ...]] | None = None,
    told_rows: np.ndarray | None = None,
) -> dict[_NodeAsk, np.ndarray]:
    """The nodes holding a pattern, grouped by what they are asked (ascending, the asks in order
    of their first node). A node is asked its graph, GPUs, pattern, the local ids its classes
    are kept off (bit masks, ``CountProblem.blocked_masks``) and its GPUs' loads
    (``Beside.table``): nodes are grouped by rows of those arrays (a dict entry per node took
    0.2-0.7 s on 65,536 nodes, and 1.1 s more where every GPU carries its memory as a load);
    only those kept off somewhere, when a node has too many GPUs for a mask, are read node by
    node. Where the layout tells equal patterns apart (``told``: the (shape,
    pattern) rows of a node's split shapes, ``kind_ranks.py``), those rows (``told_rows``: per
    node and class, -1 outside a split shape) join the arrays' columns: read node by node, they
    took 0.7 s on 16,384 nodes."""
    used = np.flatnonzero(patterns_on.any(axis=1))
    masks = [problem.blocked_masks(c) for c in range(len(problem.classes))]
    by_masks = all(mask is not None for mask in masks)
    special = {node for held in avoided for node in held} if not by_masks else set()
    checked = np.isin(used, np.array(sorted(special), dtype=np.int64))
    plain = used[~checked]
    off = [np.where(patterns_on[plain, c] > 0, mask[plain], 0) for c, mask in enumerate(masks) if by_masks and mask is not None]
    told_of = [told_rows[plain]] if told_rows is not None else []
    loaded = [beside.table[plain]] if (beside := problem.beside) is not None else []
    grouped: dict[_NodeAsk, list[np.ndarray]] = {}
    for rows in row_groups(np.column_stack([problem.graph_of[plain], cluster.gpus_per_node[plain], patterns_on[plain], *off, *told_of, *loaded])):
        node = int(plain[rows[0]])
        grouped.setdefault(_ask(problem, cluster, avoided, patterns_on, told, node), []).append(plain[rows])
    for node in used[checked].tolist():
        grouped.setdefault(_ask(problem, cluster, avoided, patterns_on, told, node), []).append(np.array([node], dtype=np.int64))
    merged = {ask: np.sort(np.concatenate(nodes)) for ask, nodes in grouped.items()}
    return dict(sorted(merged.items(), key=lambda item: int(item[1][0])))


def _ask(
    problem: CountProblem,
    cluster: Cluster,
    avoided: list[Mapping[int, tuple[int, ...]]],
    patterns_on: np.ndarray,
    told: Callable[[int], tuple[tuple[int, int], ...]] | None,
    node: int,
) -> _NodeAsk:
    """What ``node`` is asked (:func:`_asks`): its graph, GPUs, pattern, the local ids each class
    it holds is kept off, its GPUs' loads and the split rows ``told`` tells apart."""
    pattern = tuple(patterns_on[node].tolist())
    keep_off = tuple(avoided[c].get(node, ()) if pattern[c] else () for c in range(len(pattern)))
    capacity = int(cluster.gpus_per_node[node])
    loads = problem.beside.on_node(node, capacity) if problem.beside is not None else ()
    return _NodeAsk(problem.graphs[problem.graph_of[node]], capacity, pattern, keep_off, loads, told(node) if told is not None else ())


#: The order a member numbers its processes: per node, its position (processes stable within a
#: node), or, given each process's node, each process's position.
MemberOrder = np.ndarray | Callable[[np.ndarray], np.ndarray]


def _member_order(problem: CountProblem, counts: Counts, c: int, member: str, groups_per_node: np.ndarray) -> MemberOrder:
    """The order ``member`` of class ``c`` numbers its processes: box by box when its preferred
    domains are stated together (``crossing.py``), by its preferred domain's sets when one is
    priced (``spanning.py``), else by its required levels (``domain_levels.py``)."""
    count_class = problem.classes[c]
    for j, joint in enumerate(count_class.joint):
        if joint.member == member:
            return partial(joint_ranks, joint, counts.taken[c, j])
    for j, priced in enumerate(count_class.priced):
        if priced.member == member and priced.ordered:
            return spanning_order(member, count_class, priced, groups_per_node, counts.groupings[c, j])
    return node_order(member_levels(count_class.levels, member), groups_per_node.size)


def _patterns_per_node(
    problem: CountProblem, shapes: list[Shape], counts: Counts, num_nodes: int, heavier: Heavier | None
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Groups of each class per node: each shape's nodes in rank order take its patterns heaviest
    first (by GPUs, or by ``heavier``); and per node and class, the shape that holds it there and
    its pattern's row in the shape's one table (-1: none, or a shape of several tables)."""
    on = np.zeros((num_nodes, len(problem.classes)), dtype=np.int64)
    shape_of, row_of = np.full((num_nodes, len(problem.classes)), -1, dtype=np.int64), np.full((num_nodes, len(problem.classes)), -1, dtype=np.int64)
    for s, shape in enumerate(shapes):
        used = counts.of_shape(s)
        chosen = shape.whole_patterns(used)
        index = [p for (_, p), n in sorted(used.items()) if n] if len(shape.tables) == 1 else [-1] * len(chosen)  # ``glue``'s order
        weight = [
            heavier(s, index[i], pattern) if heavier is not None else sum(g * problem.classes[c].width for c, g in zip(shape.part, pattern))
            for i, (pattern, _) in enumerate(chosen)
        ]  # fmt: skip
        order = sorted(range(len(chosen)), key=lambda i: (-weight[i], tuple(-g for g in chosen[i][0])))
        sequence = np.repeat(np.array(order, dtype=np.int64), [chosen[i][1] for i in order])
        if sequence.size != shape.nodes.size:
            raise InternalError("the count model's nodes per shape do not add up to the shape's nodes")
        table = np.array([pattern for pattern, _ in chosen], dtype=np.int64).reshape(len(chosen), len(shape.part))
        on[np.ix_(shape.nodes, np.array(shape.part, dtype=np.int64))] = table[sequence]
        shape_of[np.ix_(shape.nodes, np.array(shape.part, dtype=np.int64))] = s
        row_of[np.ix_(shape.nodes, np.array(shape.part, dtype=np.int64))] = np.array(index, dtype=np.int64).reshape(-1)[sequence][:, None]
    return on, (shape_of, row_of)


def _node_layout(problem: CountProblem, requests: Mapping[str, ComponentRequest], ask: _NodeAsk) -> _NodeLayout:
    """Local ids of every member's processes on a node asked ``ask``; classes whose groups must
    be tiled by a stride are tried first, then the clique-safe order alone."""
    stacked = _stacked(problem, requests, ask)
    if stacked is None:
        raise LayoutFailed
    present = [c for c in ask.graph.order if ask.pattern[c] and c not in stacked]
    blocky = [c for c in present if _run(problem, requests, c) > 1]
    for order in ([*blocky, *(c for c in present if c not in blocky)], present):
        layout = _try_order(problem, requests, ask, order, stacked)
        if layout is not None:
            return layout
    raise LayoutFailed


def _stacked(problem: CountProblem, requests: Mapping[str, ComponentRequest], ask: _NodeAsk) -> dict[int, np.ndarray] | None:
    """Local ids of the classes of each hole on the node, from the stacks that cover them; None
    when a class's ids do not make whole runs of its stride (the node cannot be tiled this way).
    The classes of a hole avoid the same rank-string GPUs (``problem.py``)."""
    taken: dict[int, np.ndarray] = {}
    for part in connected_parts(len(ask.pattern), problem.apart_somewhere if ask.loads else ask.graph.linked):  # beside a load: the count model's parts
        present = [c for c in part if ask.pattern[c]]
        if present and ask.loads or needs_types([ask.keep_off[c] for c in present], [problem.classes[c].run for c in present], [problem.classes[c].step for c in present]):
            typed = _typed(problem, requests, ask, part)
            if typed is None:
                return None
            taken |= typed
    for found in ask.graph.holes:
        demand = tuple(ask.pattern[c] * problem.classes[c].width for c in found.classes)
        if not any(demand) or set(found.classes) & set(taken):
            continue
        blocked = np.zeros(ask.capacity, dtype=bool)
        blocked[[gpu for c in found.classes for gpu in ask.keep_off[c]]] = True
        free = np.flatnonzero(~blocked)
        stacks = Covers(found).cover(demand, int(free.size))
        if stacks is None:
            raise InternalError("the count model chose a node pattern its stacks do not cover")
        runs = [_run(problem, requests, c) for c in found.classes]
        placed = next((ids for order in _stack_orders(sorted(stacks), found, runs) if (ids := _tile_stacks(found, order, free, demand, runs))), None)
        if placed is None:
            return None
        taken |= placed
    return taken


def _typed(problem: CountProblem, requests: Mapping[str, ComponentRequest], ask: _NodeAsk, part: tuple[int, ...]) -> dict[int, np.ndarray] | None:
    """Local ids of the classes of a connected part whose classes are kept off different GPUs
    here: each GPU type's GPUs take the stacks found for them in order (``typed.py``), a class
    the lowest of the GPUs whose stack holds it; None when its ids do not make whole runs."""
    keep_off = [ask.keep_off[c] if ask.pattern[c] else tuple(range(ask.capacity)) for c in part]
    types, ids = gpu_types(ask.capacity, keep_off, ask.loads)
    demand = tuple(ask.pattern[c] * problem.classes[c].width for c in part)
    stacks = part_stacks(ask.graph, part)
    runs = tuple(_run(problem, requests, c) for c in part)
    steps = tuple(problem.classes[c].step for c in part)
    fits = beside_of(problem, part) if ask.loads else None
    if any(run > 1 for run in runs):
        try:
            holding = runs_cover(stacks, keep_off, ask.capacity, demand, runs, ask.loads, fits, steps)
        except OverflowError:
            return None
        if holding is None:
            return None
    else:
        given = typed_cover(stacks, types, demand, fits)
        if given is None:
            raise InternalError("the count model chose a node pattern its GPU types do not hold")
        holding = [[] for _ in part]
        for type_ids, chosen in zip(ids, given):
            for gpu, stack in zip(type_ids, sorted(chosen)):
                for k in stack:
                    holding[k].append(gpu)
    taken: dict[int, np.ndarray] = {}
    for k, c in enumerate(part):
        if demand[k]:
            held = np.array(sorted(holding[k]), dtype=np.int64)
            found = progressions_of(held, runs[k], steps[k], demand[k]) if steps[k] > 1 else _runs_of(held, runs[k], demand[k])
            if found is None:
                return None
            taken[c] = found
    return taken


def _stack_orders(stacks: list[int], found: Hole, runs: list[int]) -> Iterator[list[int]]:
    """Orders in which the node's GPUs take the stacks: the stacks as found (alike ones side by
    side), then for each class of consecutive runs, the stacks holding it first (its GPUs then
    adjacent)."""
    yield stacks
    for k, run in enumerate(runs):
        if run > 1:
            yield sorted(stacks, key=lambda index: k not in found.sets[index])


def _tile_stacks(found: Hole, order: list[int], free: np.ndarray, demand: tuple[int, ...], runs: list[int]) -> dict[int, np.ndarray] | None:
    """Each class's local ids when the ``free`` GPUs take the hole's stacks in ``order``, or None
    when one class's ids do not make whole runs."""
    given = [found.sets[index] for index in order]
    taken: dict[int, np.ndarray] = {}
    for k, c in enumerate(found.classes):
        if demand[k]:
            chosen = _runs_of(free[[gpu for gpu, stack in enumerate(given) if k in stack]], runs[k], demand[k])
            if chosen is None:
                return None
            taken[c] = chosen
    return taken


def _run(problem: CountProblem, requests: Mapping[str, ComponentRequest], c: int) -> int:
    """The consecutive GPUs the class's layout is made of: a process of several GPUs takes ranks
    ``h, h + stride, ...``, so ``amount * stride`` consecutive GPUs hold ``stride`` such
    processes (1: any GPU will do). A multiple of every member's (``CountClass.run``); it
    divides the group width (``followers.py`` declines a class where it does not)."""
    return problem.classes[c].run


def _whole_runs(problem: CountProblem, requests: Mapping[str, ComponentRequest], taken: Mapping[int, np.ndarray]) -> bool:
    """Whether each class's local ids (ascending) make whole runs of every member's stride
    blocks, lowest first (what ``followers.tile`` deals out)."""
    for c, gpus in taken.items():
        count_class = problem.classes[c]
        if count_class.step > 1:  # progressions (``strided.py``): the ids must split into whole ones
            if progressions_of(gpus, count_class.run, count_class.step, gpus.size) is None:
                return False
            continue
        for member in count_class.members:
            amount, step = int(requests[member].amount[0]), int(requests[member].stride or 1)
            run = amount * step if amount > 1 else 1
            if run > 1 and (gpus.size % run or (np.diff(gpus.reshape(-1, run), axis=1) != 1).any()):
                return False
    return True


def _runs_of(free: np.ndarray, run: int, need: int) -> np.ndarray | None:
    """``need`` of the ``free`` local ids (ascending), as whole runs of ``run`` consecutive ids,
    lowest first; None when the free ids do not hold that many runs."""
    if run == 1:
        return free[:need] if free.size >= need else None
    breaks = np.flatnonzero(np.diff(free) != 1) + 1
    taken = [chunk[: chunk.size // run * run] for chunk in np.split(free, breaks)]
    joined = np.concatenate(taken) if taken else free[:0]
    return joined[:need] if joined.size >= need else None


def _try_order(
    problem: CountProblem, requests: Mapping[str, ComponentRequest], ask: _NodeAsk, order: list[int], stacked: Mapping[int, np.ndarray]
) -> _NodeLayout | None:
    """The node's layout with the classes of ``order`` placed in it, each on the lowest GPUs its
    placed neighbours left, beside the stacked classes; None when a stride cannot be tiled."""
    taken: dict[int, np.ndarray] = dict(stacked)
    for c in order:
        blocked = np.zeros(ask.capacity, dtype=bool)
        blocked[list(ask.keep_off[c])] = True
        for other, gpus in taken.items():
            if (min(c, other), max(c, other)) in ask.graph.pairs:
                blocked[gpus] = True
        chosen = _runs_of(np.flatnonzero(~blocked), _run(problem, requests, c), ask.pattern[c] * problem.classes[c].width)
        if chosen is None:
            return None
        taken[c] = chosen
    return _items(problem, requests, ask, taken)


def _items(problem: CountProblem, requests: Mapping[str, ComponentRequest], ask: _NodeAsk, taken: Mapping[int, np.ndarray]) -> _NodeLayout:
    """The node's layout from each class's local ids: its groups' GPUs tiled by every member."""
    items: dict[str, np.ndarray] = {}
    for c, gpus in taken.items():
        count_class = problem.classes[c]
        if count_class.step > 1:  # the ids in progression order, lowest first (``strided.py``)
            ordered = progressions_of(gpus, count_class.run, count_class.step, gpus.size)
            if ordered is None:
                raise InternalError(f"{count_class.root}: a node's GPUs for it do not split into whole progressions")
            gpus = ordered
        groups = gpus.reshape(ask.pattern[c], count_class.width)
        items |= member_items(groups, count_class.members, count_class.follows, count_class.leader, requests, count_class.step)
    return _NodeLayout(items)


def _assignment(request: ComponentRequest, parts: list[tuple[np.ndarray, np.ndarray]], node_order: MemberOrder, cluster: Cluster) -> Assignment:
    """Processes in the member's order (by node: stable within a node), from per-key (nodes,
    physical ids) blocks."""
    amount = int(request.amount[0])
    nodes = np.concatenate([np.repeat(node_array, items.shape[1]) for node_array, items in parts])
    hardware = np.concatenate([items.reshape(-1, amount) for _, items in parts])
    order = np.argsort(node_order(nodes) if callable(node_order) else node_order[nodes], kind="stable")
    hardware = hardware[order]
    if hardware.shape[0] != request.num_processes:
        raise InternalError(f"{request.name}: the count layout placed {hardware.shape[0]} of {request.num_processes} processes")
    flat = hardware.reshape(-1).astype(np.int64)
    indptr = np.arange(request.num_processes + 1, dtype=np.int64) * amount
    ranks = window_ranks(request.cand_hw, request.cand_rank, indptr, flat, int(request.stride or 1), cluster.num_hardware)
    return Assignment(indptr=indptr, hardware=flat, ranks=ranks, num_hardware=cluster.num_hardware)
