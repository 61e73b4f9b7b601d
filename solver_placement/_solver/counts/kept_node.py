"""One node's part of re-planning in the count model: what it held before, and how many of
those sets a pattern keeps there (``kept.py`` states the term and lays the answer out).

A node's previous content is read per class of a part (:func:`by_content`): the single GPUs its
members held, counted per local id, and the strided sets one process may take again. A pattern
keeps at most :func:`upper_bound` of them (each class alone, on the GPUs holding the most), and
exactly :func:`node_kept`: a small CP-SAT model of one node, whose every GPU holds one stack of
classes that may share it (``typed.py``'s stacks, within what the GPU admits beside its load),
each class its pattern's count of GPUs. Laid out in whole runs of its blocks (``layout.py``'s
rule for strides), a strided set is kept by the run holding its process; relaxed (the flat
model places a strided process anywhere), by the class taking all of its GPUs, which bounds
every layout the flat model allows on the node.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._solver.counts.fixed_loads import FixedLoad
from solver_placement._solver.counts.patterns import Shape, beside_of
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.counts.typed import _admitted, part_stacks
from solver_placement._solver.options import Budget, SolverOptions, solve_model
from solver_placement._solver.rules.stride import enforced_stride
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec

Held = Mapping[str, Sequence[Sequence[int]]]


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


def by_content(
    problem: CountProblem, spec: PlacementSpec, requests: Mapping[str, ComponentRequest], held: Held, shape: Shape
) -> list[tuple[Shape, HeldNode | None]]:
    """``shape`` split by what its nodes held before of its classes (with the ids each class is
    kept off there and their loads): the nodes that held nothing keep ``shape`` as it is."""
    cluster = spec.cluster
    capacity = shape.capacity
    members = [problem.classes[c].members for c in shape.part]
    off = [problem.blocked_locals(c) for c in shape.part]
    per_node: dict[int, tuple[list[list[int]], list[list[tuple[str, int, int, tuple[int, ...]]]]]] = {}
    on_shape = set(shape.nodes.tolist())
    for k, names in enumerate(members):
        for name in names:
            request = requests[name]
            step = enforced_stride(request)
            amount = int(request.amount[0])
            for items in held.get(name, ()):
                node_of = {int(cluster.hw_node[i]) for i in items}
                node = node_of.pop()
                if node_of or node not in on_shape:
                    continue  # on several nodes, or where the part has no room: no layout keeps it
                local = tuple(sorted(int(cluster.hw_local[i]) for i in items))
                singles, strided = per_node.setdefault(node, ([[0] * capacity for _ in members], [[] for _ in members]))
                if len(local) == 1:
                    singles[k][local[0]] += 1
                elif step is not None and len(local) == amount and local == tuple(range(local[0], local[0] + amount * step, step)):
                    strided[k].append((name, amount, step, local))
    groups: dict[HeldNode, list[int]] = {}
    plain = [n for n in shape.nodes.tolist() if n not in per_node]
    for node, (singles, strided) in sorted(per_node.items()):
        content = Content(tuple(tuple(row) for row in singles), tuple(tuple(sorted(row)) for row in strided))
        loads = problem.beside.on_node(node, capacity) if problem.beside is not None else ()
        groups.setdefault(HeldNode(tuple(o.get(node, ()) for o in off), loads, content), []).append(node)
    split: list[tuple[Shape, HeldNode | None]] = [(replace(shape, nodes=np.array(plain, dtype=np.int64)), None)] if plain else []
    return split + [(replace(shape, nodes=np.array(ids, dtype=np.int64)), node) for node, ids in groups.items()]


def upper_bound(problem: CountProblem, shape: Shape, pattern: tuple[int, ...], node: HeldNode) -> int:
    """At most the previous sets a node of ``shape`` holding ``pattern`` keeps: per class, its
    GPUs there on the ids holding the most previous single GPUs of its members (each member holds
    every GPU of its class), and per strided member as many of its sets as it has processes there."""
    bound = 0
    for k, groups in enumerate(pattern):
        if not groups:
            continue
        count_class = problem.classes[shape.part[k]]
        gpus = groups * count_class.width
        singles = sorted((n for gpu, n in enumerate(node.content.singles[k]) if gpu not in node.keep_off[k]), reverse=True)
        bound += sum(singles[:gpus])
        by_member = Counter((name, amount) for name, amount, _, _ in node.content.strided[k])
        bound += sum(min(n, gpus // amount) for (_, amount), n in by_member.items())
    return bound


def node_kept(
    problem: CountProblem, shape: Shape, pattern: tuple[int, ...], node: HeldNode, options: SolverOptions, budget: Budget, runs: bool
) -> tuple[int, dict[int, np.ndarray]] | None:
    """The most previous sets a node of ``shape`` holding ``pattern`` keeps, and per class
    (position) its local ids that keep them; None when no layout holds the pattern. Every GPU
    holds one stack of classes that may share it, within what it admits (the classes not kept
    off it, beside its load); with ``runs`` each class takes whole runs of its blocks, and a
    strided set is kept by the block holding its process, else (a relaxation of every layout
    the flat model allows there) by the class taking all its GPUs."""
    capacity = shape.capacity
    present = [k for k, groups in enumerate(pattern) if groups]
    graph = problem.graphs[int(problem.graph_of[shape.nodes[0]])]
    stacks = part_stacks(graph, shape.part)
    fits = beside_of(problem, shape.part) if node.loads else None
    model = cp_model.CpModel()
    taken: dict[int, list[cp_model.IntVar]] = {k: [model.new_bool_var("") for _ in range(capacity)] for k in present}
    for gpu in range(capacity):
        admitted = tuple(k for k in present if gpu not in node.keep_off[k])
        for k in present:
            if k not in admitted:
                model.add(taken[k][gpu] == 0)
        choices = _admitted(stacks, admitted, node.loads[gpu] if node.loads else None, fits)
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
        starts = [model.new_bool_var("") for _ in range(capacity - run + 1)] if runs and run > 1 else []
        if starts:
            for gpu in range(capacity):
                model.add(taken[k][gpu] == sum(starts[h] for h in range(max(0, gpu - run + 1), min(gpu, capacity - run) + 1)))
        for _, amount, step, local in node.content.strided[k]:
            keeps = model.new_bool_var("")
            gains.append(keeps)
            if not starts:
                model.add_bool_and([taken[k][gpu] for gpu in local]).only_enforce_if(keeps)
            else:  # a run from ``h`` holds the member's blocks of ``amount * step`` from ``h`` on
                block = amount * step
                holding = [starts[h] for h in range(max(0, local[-1] - run + 1), min(local[0], capacity - run) + 1) if (local[0] - h) % block < step]
                model.add(keeps <= sum(holding)) if holding and run % block == 0 else model.add(keeps == 0)
    model.maximize(cp_model.LinearExpr.sum(gains))
    solver, status = solve_model(model, SolverOptions(options.time_limit_s, 1, options.seed), budget)
    if status != cp_model.OPTIMAL:
        return None
    layout = {k: np.array([gpu for gpu in range(capacity) if solver.value(taken[k][gpu])], dtype=np.int64) for k in present}
    return int(round(solver.objective_value)), layout
