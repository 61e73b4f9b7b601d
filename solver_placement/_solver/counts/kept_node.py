"""One node's part of re-planning in the count model: what it held before, and how many of
those sets a pattern keeps there (``kept.py`` states the term and lays the answer out).

A node's previous content is read per class of a part (:func:`by_content`): the single GPUs its
members held, counted per local id, and the strided sets one process may take again. A pattern
keeps at most :func:`upper_bound` of them (each class alone, on the GPUs holding the most), and
exactly :func:`node_kept`: a small CP-SAT model of one node, whose every GPU holds one stack of
classes that may share it (``typed.py``'s stacks, within what the GPU admits beside its load),
each class its pattern's count of GPUs. Laid out in whole runs of its blocks (``layout.py``'s
rule for strides), a strided set is kept by the run holding its process; relaxed, by a process
of its member starting there, the member's processes (``h, h + stride, ...``) holding each of its
class's GPUs once, anywhere, as the flat model places them: that bounds every layout the flat
model allows on the node. A class of progressions (``strided.py``) is a union of progressions in
every layout: the model chooses them, and a set of the root's shape is kept by the one from its
first GPU, laid out or relaxed alike. So is a class of blocks whose one member of several GPUs
a process is strided and whose others take one GPU each (:func:`spread_shape`): its processes
may be any disjoint progressions of the node (the flat model's), so where runs of blocks keep
fewer sets than the relaxation, the relaxation (its processes chosen among those progressions)
is laid out instead, and it keeps what it bounds.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._arrays import distinct, row_groups
from solver_placement._solver.bounds.needs import tensor_group_on_node
from solver_placement._solver.counts.fixed_loads import FixedLoad
from solver_placement._solver.counts.patterns import Shape, beside_of
from solver_placement._solver.counts.problem import CountClass, CountProblem
from solver_placement._solver.counts.strided import progressions_of
from solver_placement._solver.counts.typed import admitted_stacks, part_stacks
from solver_placement._solver.lean_model import LeanCpModel
from solver_placement._solver.options import Budget, SolverOptions, solve_model
from solver_placement._solver.previous import as_held_sets
from solver_placement._solver.rules.stride import enforced_stride
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec

Held = Mapping[str, Sequence[Sequence[int]]]


class NodeModelUnfinished(Exception):
    """The one-node model (:func:`node_kept`) ran out of the call's time before proving its
    answer or that none exists: the caller declines (``reason``) rather than read it either way."""

    reason = "a node whose previous placements its one-node model did not settle in the time limit"


@dataclass(frozen=True)
class Content:
    """What one node held before of a part's classes: per class (position in the part), how many
    previous single-GPU sets of its members are on each local id, and its strided members'
    previous sets that one process of theirs may take again (member, amount, stride, local ids)."""

    singles: tuple[tuple[int, ...], ...]
    strided: tuple[tuple[tuple[str, int, int, tuple[int, ...]], ...], ...]


@dataclass(frozen=True)
class HeldNode:
    """A node shape with a previous content: what its layout may do (local ids each class is
    kept off, the rank strings' loads) and what it held."""

    keep_off: tuple[tuple[int, ...], ...]
    loads: tuple[FixedLoad | None, ...]
    content: Content


@dataclass(frozen=True)
class HeldContents:
    """What the nodes held before of a part's classes: the ``nodes`` that held something
    (ascending), each one's content as an index into ``distinct`` (``content_of``, aligned)."""

    nodes: np.ndarray
    content_of: np.ndarray
    distinct: tuple[Content, ...]


def contents(problem: CountProblem, spec: PlacementSpec, requests: Mapping[str, ComponentRequest], held: Held, part: tuple[int, ...]) -> HeldContents:
    """Per node that held something of the classes of ``part``, what it held (a set on several
    nodes is kept by no layout and left out). Read from the sets' arrays (``HeldSets``): one row
    per node (its GPUs, its members' single GPUs counted per local id, their strided sets counted
    per first local id), a :class:`Content` per distinct row. Why: a re-plan on 65,536 nodes holds
    hundreds of thousands of sets, and a list per set and a tuple per node took 1-1.5 s."""
    cluster = spec.cluster
    widest = int(cluster.gpus_per_node.max()) if cluster.num_nodes else 0
    nodes: list[np.ndarray] = []  # per entry (a single GPU, or a strided set one process may take again): its node
    columns: list[np.ndarray] = []  # and its column of the node's row
    strided: list[tuple[int, str, int, int]] = []  # per block of columns after the singles: class position, member, amount, stride
    for k, c in enumerate(part):
        for name in problem.classes[c].members:
            sets = as_held_sets(held.get(name, ()))
            sizes = np.diff(sets.indptr)
            one = sets.ids[sets.indptr[:-1][sizes == 1]]
            nodes.append(cluster.hw_node[one].astype(np.int64))
            columns.append(k * widest + cluster.hw_local[one].astype(np.int64))
        for name in problem.classes[c].members:
            request = requests[name]
            step, amount = enforced_stride(request), int(request.amount[0])
            if step is None or amount == 1:
                continue
            sets = as_held_sets(held.get(name, ()))
            sized = sets.ids[sets.indptr[:-1][np.diff(sets.indptr) == amount][:, None] + np.arange(amount)]
            on, local = cluster.hw_node[sized], np.sort(cluster.hw_local[sized], axis=1)
            one_process = (on == on[:, :1]).all(axis=1) & (np.diff(local, axis=1) == step).all(axis=1)  # what a process of it may take
            nodes.append(on[one_process, 0].astype(np.int64))
            columns.append((len(part) + len(strided)) * widest + local[one_process, 0].astype(np.int64))
            strided.append((k, name, amount, step))
    every = np.concatenate(nodes) if nodes else np.zeros(0, dtype=np.int64)
    touched = distinct(every)
    table = np.zeros((touched.size, 1 + (len(part) + len(strided)) * widest), dtype=np.int64)
    table[:, 0] = cluster.gpus_per_node[touched]  # a content's singles are as long as the node's GPUs
    np.add.at(table, (np.searchsorted(touched, every), 1 + (np.concatenate(columns) if columns else every)), 1)
    content_of = np.zeros(touched.size, dtype=np.int64)
    found: list[Content] = []
    for group in row_groups(table):
        content_of[group] = len(found)
        found.append(_content(table[group[0]].tolist(), len(part), widest, strided))
    return HeldContents(touched, content_of, tuple(found))


def _content(row: list[int], classes: int, widest: int, strided: Sequence[tuple[int, str, int, int]]) -> Content:
    """The :class:`Content` of one row of :func:`contents`' table (the node's GPUs, then the
    counts by class and local id, then by strided member and first local id)."""
    gpus, counts = row[0], row[1:]
    sets: list[list[tuple[str, int, int, tuple[int, ...]]]] = [[] for _ in range(classes)]
    for j, (k, name, amount, step) in enumerate(strided):
        block = counts[(classes + j) * widest : (classes + j + 1) * widest]
        for first, n in enumerate(block):
            sets[k] += [(name, amount, step, tuple(range(first, first + amount * step, step)))] * n
    return Content(tuple(tuple(counts[k * widest : k * widest + gpus]) for k in range(classes)), tuple(tuple(sorted(found)) for found in sets))


def by_content(problem: CountProblem, shape: Shape, held: HeldContents) -> list[tuple[Shape, HeldNode | None]]:
    """``shape`` split by what its nodes ``held`` before (:func:`contents`), with the ids each
    class is kept off there and their loads: the nodes that held nothing keep ``shape``. The
    nodes are grouped by their content, the local ids each class is kept off (bit masks,
    ``CountProblem.blocked_masks``) and their GPUs' loads (``Beside.table``) by arrays; only
    those kept off somewhere, when a node has too many GPUs for a mask, are read node by node."""
    off = [problem.blocked_locals(c) for c in shape.part]
    masks = [problem.blocked_masks(c) for c in shape.part]
    by_masks = all(mask is not None for mask in masks)
    at = np.minimum(np.searchsorted(held.nodes, shape.nodes), max(held.nodes.size - 1, 0))
    was_held = held.nodes[at] == shape.nodes if held.nodes.size else np.zeros(shape.nodes.size, dtype=bool)
    special = {node for kept_off in off for node in kept_off} if not by_masks else set()
    checked = was_held & np.isin(shape.nodes, np.array(sorted(special), dtype=np.int64))
    alike = was_held & ~checked
    beside = problem.beside

    def held_node(node: int, content: int) -> HeldNode:
        loads = beside.on_node(node, shape.capacity) if beside is not None else ()
        return HeldNode(tuple(o.get(node, ()) for o in off), loads, held.distinct[content])

    groups: dict[HeldNode, list[np.ndarray]] = {}
    loaded = [beside.table[shape.nodes[alike]]] if beside is not None else []
    rows = np.column_stack([held.content_of[at[alike]], *(mask[shape.nodes[alike]] for mask in masks if by_masks and mask is not None), *loaded])
    for group in row_groups(rows):
        node, first = int(shape.nodes[alike][group[0]]), int(held.content_of[at[alike][group[0]]])
        groups.setdefault(held_node(node, first), []).append(shape.nodes[alike][group])
    for node, index in zip(shape.nodes[checked].tolist(), held.content_of[at[checked]].tolist(), strict=True):
        groups.setdefault(held_node(node, index), []).append(np.array([node], dtype=np.int64))
    split: list[tuple[Shape, HeldNode | None]] = [(replace(shape, nodes=shape.nodes[~was_held]), None)] if not was_held.all() else []
    merged = sorted(((np.sort(np.concatenate(ids)), node) for node, ids in groups.items()), key=lambda item: int(item[0][0]))
    return split + [(replace(shape, nodes=ids), node) for ids, node in merged]


def spread_shape(spec: PlacementSpec, requests: Mapping[str, ComponentRequest], count_class: CountClass) -> tuple[int, int] | None:
    """The ``(amount, stride)`` of a class of blocks whose processes a node may hold as any
    disjoint progressions, as the flat model places them, else None. That holds when one member
    takes several GPUs a process, with a stride (``h, h + stride, ...``), and every other takes
    one GPU (each lies in one of its processes, so inside one of its groups): dealt in the order
    of those progressions, a one-GPU member's tensor-parallel groups hold whole progressions when
    their size is a multiple of the amount (a strided follower nests in them), or are too small
    to hold one (nothing nests). Every member's groups lie on one node (no required domain lets
    them span nodes), so each node's groups are its own."""
    if count_class.run == 1 or count_class.step > 1:
        return None
    several = [name for name in count_class.members if int(requests[name].amount[0]) > 1]
    if len(several) != 1 or enforced_stride(requests[several[0]]) is None:
        return None
    amount, stride = int(requests[several[0]].amount[0]), int(requests[several[0]].stride or 1)
    for name in count_class.members:
        tp = spec.components[name].constraints.tensor_parallel_size
        if tensor_group_on_node(spec, requests[name]) != tp or (name != several[0] and tp >= amount and tp % amount):
            return None
    return amount, stride


def upper_bound(problem: CountProblem, shape: Shape, pattern: tuple[int, ...], node: HeldNode) -> int:
    """At most the previous sets a node of ``shape`` holding ``pattern`` keeps: per class, its
    GPUs there on the ids holding the most previous single GPUs of its members (each member holds
    every GPU of its class), and per strided member as many of its sets as it has processes there."""
    bound = 0
    most = _most_held(node)
    for k, groups in enumerate(pattern):
        if groups:
            gpus = groups * problem.classes[shape.part[k]].width
            prefix, strided = most[k]
            bound += prefix[min(gpus, len(prefix) - 1)] + sum(min(n, gpus // amount) for amount, n in strided)
    return bound


@lru_cache(maxsize=4096)
def _most_held(node: HeldNode) -> tuple[tuple[tuple[int, ...], tuple[tuple[int, int], ...]], ...]:
    """Per class, the previous single GPUs its ``g`` best GPUs hold (by ``g``, from 0), and per
    strided member its amount and sets: what :func:`upper_bound` sums for every pattern."""
    found = []
    for k, row in enumerate(node.content.singles):
        best = sorted((n for gpu, n in enumerate(row) if gpu not in node.keep_off[k]), reverse=True)
        members = Counter((name, amount) for name, amount, _, _ in node.content.strided[k])
        found.append((tuple(itertools.accumulate(best, initial=0)), tuple((amount, n) for (_, amount), n in sorted(members.items()))))
    return tuple(found)


def in_place(problem: CountProblem, shape: Shape, pattern: tuple[int, ...], node: HeldNode) -> tuple[int, dict[int, np.ndarray]] | None:
    """The layout keeping each class on the GPUs it held (fewer: those holding the most; more:
    the lowest others a stack there admits), with what it keeps; None when that is no layout
    (a stack the GPU does not admit, a class taking runs on other GPUs than before). Most
    re-plans keep what survived in place, and then no node model is needed."""
    capacity = shape.capacity
    graph = problem.graphs[int(problem.graph_of[shape.nodes[0]])]
    stacks, fits = part_stacks(graph, shape.part), beside_of(problem, shape.part) if node.loads else None
    everyone = range(len(pattern))
    choices = [
        admitted_stacks(stacks, tuple(k for k in everyone if gpu not in node.keep_off[k]), node.loads[gpu] if node.loads else None, fits)
        for gpu in range(capacity)
    ]
    on: list[set[int]] = [set() for _ in range(capacity)]
    taken: dict[int, np.ndarray] = {}
    for k, groups in enumerate(pattern):
        if not groups:
            continue
        count_class = problem.classes[shape.part[k]]
        need = groups * count_class.width
        before = {gpu for gpu, n in enumerate(node.content.singles[k]) if n} | {gpu for *_, local in node.content.strided[k] for gpu in local}
        if count_class.run > 1 and len(before) != need:
            return None
        ranked = sorted(before, key=lambda gpu: (-node.content.singles[k][gpu], gpu))[:need]
        ranked += [gpu for gpu in range(capacity) if gpu not in before][: need - len(ranked)] if count_class.run == 1 else []
        chosen: list[int] = []
        for gpu in ranked + [gpu for gpu in range(capacity) if gpu not in ranked]:
            if len(chosen) < need and any(on[gpu] | {k} <= set(stack) for stack in choices[gpu]):
                chosen.append(gpu)
                on[gpu].add(k)
        ids = np.array(sorted(chosen), dtype=np.int64)
        if count_class.step > 1:  # a union of progressions (``strided.py``), dealt in their order
            ordered = progressions_of(ids, count_class.run, count_class.step, need) if len(chosen) == need else None
            if ordered is None:
                return None
            ids = ordered
        elif len(chosen) < need or not _whole_runs(ids, [amount * step for _, amount, step, _ in node.content.strided[k]] + [count_class.run]):
            return None
        taken[k] = ids
    return _kept_by(node, taken, {k: problem.classes[shape.part[k]].step for k in taken}), taken


def _whole_runs(ids: np.ndarray, sizes: Sequence[int]) -> bool:
    """Whether the ids (ascending) make whole runs of consecutive ids of every block size."""
    return all(ids.size % size == 0 and not (np.diff(ids.reshape(-1, size), axis=1) != 1).any() for size in sizes if size > 1)


def _kept_by(node: HeldNode, taken: Mapping[int, np.ndarray], steps: Mapping[int, int]) -> int:
    """The previous sets a node keeps with each class (position) on ``taken`` local ids: the
    single GPUs it takes, and the strided sets one process of their member takes (its blocks of
    ``amount * stride`` ids dealt out as ``layout.py`` tiles them; a class of progressions,
    ``steps`` above 1, holds its ids in progression order, one process after another)."""
    kept = 0
    for k, ids in taken.items():
        kept += sum(node.content.singles[k][gpu] for gpu in ids.tolist())
        for _, amount, step, local in node.content.strided[k]:
            in_blocks = steps[k] == 1 and step > 1
            processes = ids.reshape(-1, amount, step).transpose(0, 2, 1).reshape(-1, amount) if in_blocks else ids.reshape(-1, amount)
            kept += int((processes == np.array(local)).all(axis=1).any())
    return kept


def _free_processes(
    model: cp_model.CpModel, taken: Sequence[cp_model.IntVar], strided: Sequence[tuple[str, int, int, tuple[int, ...]]]
) -> dict[str, list[cp_model.IntVar]]:
    """Per strided member with previous sets here, one boolean per first GPU of a process
    (``h, h + stride, ...``), its processes holding each of its class's GPUs once, as the flat
    model places them (no runs of blocks)."""
    found: dict[str, list[cp_model.IntVar]] = {}
    for name, amount, step, _ in strided:
        if name not in found:
            found[name] = _progressions(model, taken, amount, step)
    return found


def _progressions(model: cp_model.CpModel, taken: Sequence[cp_model.IntVar], amount: int, step: int) -> list[cp_model.IntVar]:
    """One boolean per first GPU ``h`` of a progression ``h, h + step, ...`` of ``amount`` GPUs,
    the ``taken`` GPUs exactly a disjoint union of the chosen ones."""
    span = (amount - 1) * step
    firsts = [model.new_bool_var("") for _ in range(max(0, len(taken) - span))]
    for gpu, holds in enumerate(taken):
        model.add(holds == sum(firsts[h] for h in range(max(0, gpu - span), min(gpu, len(firsts) - 1) + 1) if (gpu - h) % step == 0))
    return firsts


def node_kept(
    problem: CountProblem,
    shape: Shape,
    pattern: tuple[int, ...],
    node: HeldNode,
    options: SolverOptions,
    budget: Budget,
    runs: bool,
    spread: Mapping[int, tuple[int, int]] | None = None,
    prices: tuple[int, tuple[int, ...]] | None = None,
) -> tuple[int, dict[int, np.ndarray]] | None:
    """The most previous sets a node of ``shape`` holding ``pattern`` keeps, and per class
    (position) its local ids that keep them; None when no layout holds the pattern. Every GPU
    holds one stack of classes that may share it, within what it admits (the classes not kept
    off it, beside its load); with ``runs`` each class takes whole runs of its blocks, and a
    strided set is kept by the block holding its process, else (a relaxation of every layout
    the flat model allows there) by a process of its member placed freely (``_free_processes``).
    A class of ``spread`` (class index: the amount and stride of :func:`spread_shape`) is, without
    ``runs``, exactly a union of its member's progressions, as every layout of the flat model
    has it: its ids are then a layout, dealt in progression order. ``prices`` (the ``changes``
    weight, and per class position what each unit of its local ids adds to ``contiguity``
    weighed): the most of ``changes`` times the sets kept less those ranks instead, the node's
    part of the objective that depends on its local ids (``kept_weighed.py``). None is proven:
    no layout holds the pattern there; a run that proves neither raises
    :class:`NodeModelUnfinished`."""
    capacity = shape.capacity
    present = [k for k, groups in enumerate(pattern) if groups]
    graph = problem.graphs[int(problem.graph_of[shape.nodes[0]])]
    stacks = part_stacks(graph, shape.part)
    fits = beside_of(problem, shape.part) if node.loads else None
    model = LeanCpModel()
    taken: dict[int, list[cp_model.IntVar]] = {k: [model.new_bool_var("") for _ in range(capacity)] for k in present}
    for gpu in range(capacity):
        admitted = tuple(k for k in present if gpu not in node.keep_off[k])
        for k in present:
            if k not in admitted:
                model.add(taken[k][gpu] == 0)
        choices = admitted_stacks(stacks, admitted, node.loads[gpu] if node.loads else None, fits)
        picks = [model.new_bool_var("") for _ in choices]
        model.add(sum(picks) <= 1)
        for k in admitted:
            model.add(taken[k][gpu] <= sum(pick for pick, stack in zip(picks, choices) if k in stack))
    gains: list[cp_model.LinearExprT] = []
    for k in present:
        count_class = problem.classes[shape.part[k]]
        model.add(sum(taken[k]) == pattern[k] * count_class.width)
        gains += [n * taken[k][gpu] for gpu, n in enumerate(node.content.singles[k]) if n]
        run = count_class.run
        if count_class.step > 1:  # progressions (``strided.py``): the class's GPUs are a union of them in every layout
            firsts = _progressions(model, taken[k], run, count_class.step)
            for _, amount, step, local in node.content.strided[k]:
                keeps = model.new_bool_var("")
                gains.append(keeps)  # a set of the root's shape is kept by the progression from its first GPU
                model.add(keeps <= firsts[local[0]]) if (amount, step) == (run, count_class.step) and local[0] < len(firsts) else model.add(keeps == 0)
            continue
        if not runs and spread and shape.part[k] in spread:  # its member's processes, exactly (``spread_shape``)
            amount_of, stride_of = spread[shape.part[k]]
            firsts = _progressions(model, taken[k], amount_of, stride_of)
            for _, amount, step, local in node.content.strided[k]:
                keeps = model.new_bool_var("")
                gains.append(keeps)
                model.add(keeps <= firsts[local[0]]) if (amount, step) == (amount_of, stride_of) and local[0] < len(firsts) else model.add(keeps == 0)
            continue
        starts = [model.new_bool_var("") for _ in range(capacity - run + 1)] if runs and run > 1 else []
        if starts:
            for gpu in range(capacity):
                model.add(taken[k][gpu] == sum(starts[h] for h in range(max(0, gpu - run + 1), min(gpu, capacity - run) + 1)))
        processes = {} if starts else _free_processes(model, taken[k], node.content.strided[k])
        for name, amount, step, local in node.content.strided[k]:
            keeps = model.new_bool_var("")
            gains.append(keeps)
            if not starts:
                model.add(keeps <= processes[name][local[0]])
            else:  # a run from ``h`` holds the member's blocks of ``amount * step`` from ``h`` on
                block = amount * step
                holding = [starts[h] for h in range(max(0, local[-1] - run + 1), min(local[0], capacity - run) + 1) if (local[0] - h) % block < step]
                model.add(keeps <= sum(holding)) if holding and run % block == 0 else model.add(keeps == 0)
    if prices is None:
        model.maximize(cp_model.LinearExpr.sum(gains))
    else:
        changes, per_id = prices
        ranks = [per_id[k] * gpu * taken[k][gpu] for k in present for gpu in range(1, capacity) if per_id[k]]
        model.maximize(changes * cp_model.LinearExpr.sum(gains) - cp_model.LinearExpr.sum(ranks))
    solver, status = solve_model(model, SolverOptions(options.time_limit_s, 1, options.seed), budget)
    if status == cp_model.INFEASIBLE:
        return None
    if status != cp_model.OPTIMAL:
        raise NodeModelUnfinished
    layout = {k: np.array([gpu for gpu in range(capacity) if solver.value(taken[k][gpu])], dtype=np.int64) for k in present}
    return int(round(solver.objective_value)), layout
