"""Re-planning stated in the count model: the ``changes`` term priced per node shape and pattern.

``changes`` counts the previous hardware sets no process holds any more (``evaluate.py``): a
single GPU is kept when any process of its component takes it, a set of several only by a
strided process taking exactly that set. Which sets a node keeps depends on what it held before,
so the nodes that held something of a part's classes are their own node shapes, one per
distinct previous content (with the GPUs each class is kept off there and the rank strings'
loads: what the node's layout may do with them). A re-plan has few such contents, so the count
model stays per shape, never per GPU. Each pattern on such a shape keeps some number of those
sets; the term is ``changes`` times the sets every layout holds before, less those kept.

How many a pattern keeps is found lazily. First an upper bound (:func:`_upper`): the class's
GPUs there holding the most previous GPUs of its members, and every strided set whose process
the pattern has room for, each class alone. Where the model's answer uses a pattern, a small
exact model of the node (:func:`_node_kept`: every GPU one stack of classes that may share it,
within what it admits, each class its count of GPUs in whole runs of its blocks) gives the most
it keeps and the local ids that keep them. When that is less than the bound and no class there
takes runs, that node model is the flat model's node (one GPU per process), so the pattern's
value is lowered to it and the count model solved again; a class taking runs may keep a set the
blocks cannot (the flat model places a strided process anywhere), so the count path declines
there. The answer's bound is the count model's over values that are exact or upper bounds, so an
answer meeting it is optimal against every layout the flat model allows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._errors import InternalError
from solver_placement._solver.answer import Answer, Declined, PathName, by_component
from solver_placement._solver.assignment import Assignment, window_ranks
from solver_placement._solver.bounds.objective import objective_lower_bound
from solver_placement._solver.counts.fixed_loads import FixedLoad
from solver_placement._solver.counts.kinds import splits
from solver_placement._solver.counts.layout import LayoutFailed, _tile, assignments
from solver_placement._solver.counts.model import NO_COUNT_ANSWER, Counts, solve_counts
from solver_placement._solver.counts.patterns import Shape, TooManyPatterns, beside_of, parts, shapes
from solver_placement._solver.counts.preferred import preferring, variants
from solver_placement._solver.counts.preset import NO_TERMS, preset
from solver_placement._solver.counts.problem import CountProblem, count_problem
from solver_placement._solver.counts.typed import _admitted, part_stacks
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.options import Budget, SolverOptions, SolveStatus, solve_model
from solver_placement._solver.rules.stride import enforced_stride
from solver_placement._solver.solution import Method
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec

Held = Mapping[str, Sequence[Sequence[int]]]
#: Most times the count model is solved again with lowered pattern values: each round makes at
#: least one chosen pattern exact, and a re-plan's answer uses a few patterns per content.
MAX_ROUNDS = 16


@dataclass(frozen=True)
class Content:
    """What one node held before of a part's classes: per class (position in the part), how many
    previous single-GPU sets of its members are on each local id, and its strided members'
    previous sets that one process of theirs may take again (member, amount, stride, local ids)."""

    singles: tuple[tuple[int, ...], ...]
    strided: tuple[tuple[tuple[str, int, int, tuple[int, ...]], ...], ...]


@dataclass(frozen=True)
class _Node:
    """A node shape with a previous content: what its layout may do (local ids each class is
    kept off, the rank strings' loads) and what it held."""

    keep_off: tuple[tuple[int, ...], ...]
    loads: tuple[FixedLoad | None, ...]
    content: Content


@dataclass
class _Kept:
    """Per (shape, pattern) of the shapes with a content, the previous sets kept: ``value`` an
    upper bound (lowered to the node's relaxation once the answer uses the pattern, ``bounded``),
    ``laid`` the most a layout of whole runs keeps and the local ids per class that keep them."""

    value: dict[tuple[int, int], int]
    bounded: set[tuple[int, int]] = field(default_factory=set)
    laid: dict[tuple[int, int], tuple[int, dict[int, np.ndarray]]] = field(default_factory=dict)


def kept_answer(spec: PlacementSpec, held: Held, weights: Mapping[str, int], options: SolverOptions, budget: Budget) -> Answer | Declined | None:
    """The count model's answer with ``changes`` among its terms, proven by its own bound, or why
    it declines; None for the specs it does not state this way (robots, a weighed ``contiguity``,
    components placed first, or a spec the count model reads otherwise): there the caller
    matches the count layout to the previous placement."""
    if weights.get("contiguity") or splits(spec, spec.requests):
        return None
    ready = preset(spec, spec.requests, weights, options, budget)
    if isinstance(ready, Declined):
        return None
    requests = ready.requests
    first = _placed_first(spec, requests, held)
    problem = count_problem(spec, requests)
    if isinstance(problem, str) and preferring(spec):
        return _preferring(spec, held, weights, options, budget)
    if first is None or not isinstance(problem, CountProblem):
        return None
    if ready.nodes and weights.get("balance"):
        problem = replace(problem, load=ready.load)  # placed first: a constant load per node
    fixed_cost = int(weights.get("nodes", 0)) * ready.nodes + int(weights.get("topology", 0)) * ready.topology - int(weights.get("changes", 0)) * first
    cluster = spec.cluster
    found: list[Shape] = []
    nodes: dict[int, _Node] = {}
    for part in parts(problem, bool(weights.get("balance"))):
        try:
            alike = shapes(problem, cluster.gpus_per_node, part, budget.check)
        except TooManyPatterns:
            return None
        for shape in alike:
            for split, node in _by_content(problem, spec, requests, held, shape):
                if node is not None:
                    nodes[len(found)] = node
                found.append(split)
    kept = _Kept({})
    for s, node in nodes.items():
        for p, pattern in enumerate(found[s].tables[0].patterns):
            kept.value[s, p] = _upper(problem, found[s], pattern, node)
    node_start = np.concatenate(([0], np.cumsum(cluster.gpus_per_node)[:-1]))
    weight = int(weights.get("changes", 0))
    for _ in range(MAX_ROUNDS):
        counts = solve_counts(problem, found, weights, node_start, options, budget, lambda model, uses: -weight * _kept_sum(kept.value, uses))
        if counts is None:
            return Declined(PathName.COUNTS, NO_COUNT_ANSWER)
        reason = _made_exact(problem, found, nodes, counts, kept, options, budget)
        if isinstance(reason, str):
            return Declined(PathName.COUNTS, reason)
        if not reason:
            return _laid_out(spec, requests, problem, found, nodes, replace(counts, bound=counts.bound + fixed_cost), kept, held, weights)
    return Declined(PathName.COUNTS, f"the previous placements kept by its patterns were not settled in {MAX_ROUNDS} rounds")


def _preferring(spec: PlacementSpec, held: Held, weights: Mapping[str, int], options: SolverOptions, budget: Budget) -> Answer | Declined | None:
    """A spec preferring domains its units may span (``preferred.py``): the answer with the
    preferences required, proven against every layout that spans a domain, which costs the
    ``topology`` weight more than the least of the spec with them dropped (``changes`` included)."""
    required, dropped = variants(spec)
    answer = kept_answer(required, held, weights, options, budget)
    if not isinstance(answer, Answer) or answer.assignments is None:
        return answer
    value = objective_value(spec, spec.requests, answer.assignments, weights, held)
    spanning = int(weights.get("topology", 0))
    least = spanning + objective_lower_bound(dropped, {**weights, "changes": 0})  # ``changes`` is never below 0
    if value > least:  # the counting bound does not prove it: the count model's with the rules dropped may
        other = kept_answer(dropped, held, weights, options, budget)
        if not isinstance(other, Answer) or other.bound is None:
            return None
        least = max(least, spanning + other.bound)
    bound = min(answer.known("bound"), least)
    status = SolveStatus.OPTIMAL if answer.status == SolveStatus.OPTIMAL and value <= bound else SolveStatus.FEASIBLE
    return replace(answer, status=status, objective=value, bound=min(bound, value), primary=value)


def _placed_first(spec: PlacementSpec, requests: Mapping[str, ComponentRequest], held: Held) -> int | None:
    """The previous sets the components placed first keep (their items are known, ``preset.py``,
    so no layout keeps more of their single GPUs); None when one of them held a strided set
    before, which another order of its processes on the same items might keep."""
    first = {name: request for name, request in requests.items() if request.determined and not spec.requests[name].determined}
    if any(len(items) > 1 and enforced_stride(request) is not None for name, request in first.items() for items in held.get(name, ())):
        return None
    placed = {name: Assignment(r.indptr, r.cand_hw, r.cand_rank, spec.cluster.num_hardware) for name, r in first.items()}
    lost = objective_value(spec, {name: spec.requests[name] for name in first}, placed, {**NO_TERMS, "changes": 1}, held)
    return sum(len(held.get(name, ())) for name in first) - lost


def _kept_sum(value: Mapping[tuple[int, int], int], uses: Mapping[tuple[int, int, int], cp_model.IntVar]) -> cp_model.LinearExpr:
    """The previous sets kept by the model's counts: each pattern's value times its nodes."""
    return cp_model.LinearExpr.sum([kept * uses[s, 0, p] for (s, p), kept in sorted(value.items()) if kept])


def _by_content(
    problem: CountProblem, spec: PlacementSpec, requests: Mapping[str, ComponentRequest], held: Held, shape: Shape
) -> list[tuple[Shape, _Node | None]]:
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
    groups: dict[_Node, list[int]] = {}
    plain = [n for n in shape.nodes.tolist() if n not in per_node]
    for node, (singles, strided) in sorted(per_node.items()):
        content = Content(tuple(tuple(row) for row in singles), tuple(tuple(sorted(row)) for row in strided))
        loads = problem.beside.on_node(node, capacity) if problem.beside is not None else ()
        groups.setdefault(_Node(tuple(o.get(node, ()) for o in off), loads, content), []).append(node)
    split: list[tuple[Shape, _Node | None]] = [(replace(shape, nodes=np.array(plain, dtype=np.int64)), None)] if plain else []
    return split + [(replace(shape, nodes=np.array(ids, dtype=np.int64)), node) for node, ids in groups.items()]


def _upper(problem: CountProblem, shape: Shape, pattern: tuple[int, ...], node: _Node) -> int:
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


def _made_exact(
    problem: CountProblem,
    found: list[Shape],
    nodes: Mapping[int, _Node],
    counts: Counts,
    kept: _Kept,
    options: SolverOptions,
    budget: Budget,
) -> bool | str:
    """Each pattern the answer uses on a shape with a content bounded by the node's relaxation
    and laid out; True when some value was lowered (the model must be solved again), a reason to
    decline when a layout of whole runs keeps less than that bound."""
    lowered = False
    short = []
    for (s, t, p), used in sorted(counts.uses.items()):
        if s not in nodes or not used:
            continue
        shape, key = found[s], (s, p)
        pattern = shape.tables[t].patterns[p]
        runs = any(problem.classes[shape.part[k]].run > 1 for k, g in enumerate(pattern) if g)
        if key not in kept.bounded:
            kept.bounded.add(key)
            relaxed = _node_kept(problem, shape, pattern, nodes[s], options, budget, runs=False)
            if relaxed is None:
                return "a node whose previous placements its pattern could not be laid out beside"
            if relaxed[0] < kept.value[key]:
                kept.value[key] = relaxed[0]
                lowered = True
            if not runs:
                kept.laid[key] = relaxed  # no class takes runs: the relaxation is a layout
        if key not in kept.laid:
            laid = _node_kept(problem, shape, pattern, nodes[s], options, budget, runs=True)
            if laid is None:
                return "a node whose groups could not be tiled by their strides beside its previous placements"
            kept.laid[key] = laid
        if kept.laid[key][0] < kept.value[key]:
            short.append(f"{kept.laid[key][0]} of at most {kept.value[key]}")
    if short and not lowered:
        return f"a node whose processes take runs of GPUs keeps {short[0]} previous placements in whole runs (the flat model may place them otherwise)"
    return lowered


def _node_kept(
    problem: CountProblem, shape: Shape, pattern: tuple[int, ...], node: _Node, options: SolverOptions, budget: Budget, runs: bool
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


def _laid_out(
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    problem: CountProblem,
    found: list[Shape],
    nodes: Mapping[int, _Node],
    counts: Counts,
    kept: _Kept,
    held: Held,
    weights: Mapping[str, int],
) -> Answer | Declined:
    """The count layout (``requests``: the components placed first as rank strings), the nodes
    with a content given the local ids that keep their previous sets; its value is the spec's
    own, its bound the count model's (the components placed first included) with every set held
    before."""
    cluster = spec.cluster
    try:
        placed = assignments(problem, found, counts, requests, cluster)
    except LayoutFailed:
        return Declined(PathName.COUNTS, "a node whose groups could not be tiled by their strides")
    for s in nodes:
        shape = found[s]
        roots = [problem.classes[c] for c in shape.part]
        on = np.stack([np.bincount(cluster.hw_node[placed[c.root].hardware], minlength=cluster.num_nodes)[shape.nodes] // c.width for c in roots], axis=1)
        patterns = {pattern: p for p, pattern in enumerate(shape.tables[0].patterns)}
        for n, row in zip(shape.nodes.tolist(), on.tolist()):
            if any(row):
                placed = _relaid(spec, problem, placed, shape.part, n, kept.laid[s, patterns[tuple(row)]][1])
    for name, request in requests.items():
        if request.determined:
            placed[name] = Assignment(request.indptr, request.cand_hw, request.cand_rank, cluster.num_hardware)
    chosen = by_component(spec, placed)
    value = objective_value(spec, spec.requests, chosen, weights, held)
    every = sum(len(held.get(name, ())) for name, request in spec.requests.items() if not request.determined)
    bound = counts.bound + int(weights.get("changes", 0)) * every
    status = SolveStatus.OPTIMAL if SolveStatus(counts.status) == SolveStatus.OPTIMAL and value <= bound else SolveStatus.FEASIBLE
    return Answer(PathName.COUNTS, Method.COUNTS, chosen, status, value, min(bound, value), primary=value)


def _relaid(
    spec: PlacementSpec, problem: CountProblem, placed: dict[str, Assignment], part: tuple[int, ...], node: int, layout: Mapping[int, np.ndarray]
) -> dict[str, Assignment]:
    """``placed`` with node ``node``'s processes of the part's classes on the local ids of
    ``layout`` (per class position), each group's GPUs tiled by its members as the layout does."""
    cluster = spec.cluster
    start = int(np.concatenate(([0], np.cumsum(cluster.gpus_per_node)))[node])
    for k, local in layout.items():
        count_class = problem.classes[part[k]]
        for member in count_class.members:
            request = spec.requests[member]
            before = placed[member]
            amount = int(request.amount[0])
            rows = np.flatnonzero(cluster.hw_node[before.hardware[before.indptr[:-1]]] == node)
            items = _tile(local.reshape(-1, count_class.width), request) + start
            if items.shape[0] != rows.size:
                raise InternalError(f"{member}: {items.shape[0]} processes laid out on node {node}, where the count layout has {rows.size}")
            hardware = before.hardware.reshape(-1, amount).copy()
            hardware[rows] = items
            flat = hardware.reshape(-1)
            ranks = window_ranks(request.cand_hw, request.cand_rank, before.indptr, flat, int(request.stride or 1), cluster.num_hardware)
            placed = {**placed, member: Assignment(before.indptr, flat, ranks, before.num_hardware)}
    return placed
