"""Re-planning stated in the count model: the ``changes`` term priced per node shape and pattern.

``changes`` counts the previous hardware sets no process holds any more (``evaluate.py``): a
single GPU is kept when any process of its component takes it, a set of several only by a
strided process taking exactly that set. Which sets a node keeps depends on what it held before,
so the nodes that held something of a part's classes are their own node shapes, one per
distinct previous content (with the GPUs each class is kept off there and the rank strings'
loads: what the node's layout may do with them). A re-plan has few such contents, so the count
model stays per shape, never per GPU. Each pattern on such a shape keeps some number of those
sets; the term is ``changes`` times the sets every layout holds before, less those kept.

How many a pattern keeps is found lazily (``kept_node.py`` reads the node). Every pattern starts
at an upper bound (each class alone on the GPUs holding the most). Where the model's answer uses
a pattern, what survived kept in place settles it when it meets that bound; else the node's
relaxation (every GPU one stack of classes that may share it, within what it admits; strided
processes placed as the flat model places them) bounds every layout the flat model allows there:
the pattern's value is lowered to it and the model solved again until the patterns it uses are
bounded. Each is then laid out by the same node model with every class in whole runs of its
blocks (as ``layout.py`` lays strides out); where no class takes runs, the relaxation is that
layout. A class of progressions (a stride that leaves holes, ``strided.py``) is a union of
them in every layout, so the node model states it exactly and lays it out in progression order.
So is a class of blocks whose one strided member's processes may be any progressions of the
node (``kept_node.spread_shape``: its other members take one GPU each): where its runs keep
fewer sets than the relaxation, that node is laid out as the relaxation places them. The
answer's bound is the count model's over values that bound every layout, so an answer whose
layouts keep as many as their values is proven optimal; one whose runs keep fewer (the flat
model may place a strided process where no run of blocks does, and the class has other members
of several GPUs) is declined, and the exact model decides.

The components placed first (``preset.py``) keep what their known items keep; a preferred
domain is counted as required and proven against it dropped (``preferred.py``), or priced
(``spanning.py``), as the count path does without previous placements.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._arrays import row_groups
from solver_placement._errors import InternalError, counted
from solver_placement._solver.answer import Answer, Declined, PathName, by_component
from solver_placement._solver.assignment import Assignment, window_ranks
from solver_placement._solver.bounds.objective import objective_lower_bound
from solver_placement._solver.counts.followers import member_items
from solver_placement._solver.counts.kept_node import (
    Held,
    HeldNode,
    NodeModelUnfinished,
    by_content,
    contents,
    in_place,
    node_kept,
    spread_shape,
    upper_bound,
)
from solver_placement._solver.counts.kinds import splits
from solver_placement._solver.counts.layout import LayoutFailed, assignments
from solver_placement._solver.counts.model import NO_COUNT_ANSWER, Counts, solve_counts
from solver_placement._solver.counts.patterns import MAX_PATTERNS, Shape, TooManyPatterns, parts, shapes
from solver_placement._solver.counts.preferred import forced_spans, preferring, variants
from solver_placement._solver.counts.preset import NO_TERMS, preset
from solver_placement._solver.counts.problem import CountProblem, count_problem
from solver_placement._solver.counts.spanning import spanned_rules, with_priced
from solver_placement._solver.counts.strided import progressions_of
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.options import Budget, SolverOptions, SolveStatus
from solver_placement._solver.rules.stride import enforced_stride
from solver_placement._solver.solution import Method
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.grammar import DomainRule
from solver_placement._specification.placement_spec import PlacementSpec

#: A re-plan's count answer of a spec (``kept_answer``, ``kept_weighed.kept_ranked``): an answer, why
#: it declines, or None for a spec it leaves to the caller.
Stated = Callable[[PlacementSpec, Held, Mapping[str, int], SolverOptions, Budget], Answer | Declined | None]
#: Most times the count model is solved again with lowered pattern values: each round makes at
#: least one chosen pattern exact, and a re-plan's answer uses a few patterns per content.
MAX_ROUNDS = 16


@dataclass
class _Kept:
    """Per (shape, pattern) of the shapes with a content, the previous sets kept: ``value`` an
    upper bound (lowered to the node's relaxation once the answer uses the pattern, ``bounded``),
    ``laid`` the most a layout of whole runs keeps and the local ids per class that keep them.
    ``spread``: per class, the amount and stride of the member whose processes may be any
    progressions (``kept_node.spread_shape``); ``spread_laid``: the keys laid out so, in
    progression order, where runs of blocks kept fewer."""

    value: dict[tuple[int, int], int]
    spread: dict[int, tuple[int, int]] = field(default_factory=dict)
    bounded: set[tuple[int, int]] = field(default_factory=set)
    laid: dict[tuple[int, int], tuple[int, dict[int, np.ndarray]]] = field(default_factory=dict)
    spread_laid: set[tuple[int, int]] = field(default_factory=set)


def kept_answer(
    spec: PlacementSpec,
    held: Held,
    weights: Mapping[str, int],
    options: SolverOptions,
    budget: Budget,
    priced: tuple[tuple[str, DomainRule], ...] = (),
) -> Answer | Declined | None:
    """The count model's answer with ``changes`` among its terms, proven by its own bound, or why
    it declines; None for the specs it does not state this way (robots, which ``kept_kinds.py``
    states view by view; a weighed ``contiguity``, stated with the ranks by ``kept_weighed.py``; a strided
    component placed first, or a spec the count model reads otherwise): there the
    caller matches the count layout to the previous placement, as it does when the previous
    contents make more than ``MAX_PATTERNS`` patterns over their shapes. ``priced``: preferred rules no
    placement keeps, their ``topology`` term stated (``spanning.py``)."""
    if weights.get("contiguity") or splits(spec, spec.requests):
        return None
    ready = preset(spec, spec.requests, weights, options, budget)
    if isinstance(ready, Declined):
        return None
    requests = ready.requests
    first = placed_first(spec, requests, held)
    problem = count_problem(spec, requests)
    if isinstance(problem, str) and preferring(spec):
        return preferring_answer(spec, held, weights, options, budget, kept_answer)
    if first is None or not isinstance(problem, CountProblem):
        return None
    if priced and isinstance(problem := with_priced(problem, spec, requests, priced, budget.check), str):
        return None
    if ready.nodes and weights.get("balance"):
        problem = replace(problem, load=ready.load)  # placed first: a constant load per node
    fixed_cost = (
        int(weights.get("nodes", 0)) * ready.nodes + int(weights.get("topology", 0)) * ready.topology - int(weights.get("changes", 0)) * first
    )
    cluster = spec.cluster
    found: list[Shape] = []
    nodes: dict[int, HeldNode] = {}
    for part in parts(problem, bool(weights.get("balance"))):
        try:
            alike = shapes(problem, cluster.gpus_per_node, part, budget.check)
        except TooManyPatterns:
            return None
        before = contents(problem, spec, requests, held, part)
        for shape in alike:
            for split, node in by_content(problem, shape, before):
                if node is not None:
                    nodes[len(found)] = node
                found.append(split)
    if sum(shape.size for shape in found) > MAX_PATTERNS:
        return None  # contents too many to count shape by shape: the layout is matched node by node
    kept = _Kept({}, {c: found_shape for c, count_class in enumerate(problem.classes) if (found_shape := spread_shape(spec, requests, count_class))})
    for s, node in nodes.items():
        for p, pattern in enumerate(found[s].tables[0].patterns):
            kept.value[s, p] = upper_bound(problem, found[s], pattern, node)
    node_start = np.concatenate(([0], np.cumsum(cluster.gpus_per_node)[:-1]))
    weight = int(weights.get("changes", 0))
    term = (lambda model, uses: -weight * _kept_sum(kept.value, uses)) if nodes else None  # none: low ranks break ties
    for _ in range(MAX_ROUNDS):
        counts = solve_counts(problem, found, weights, node_start, options, budget, term)
        if counts is None:
            return Declined(PathName.COUNTS, NO_COUNT_ANSWER)
        try:
            reason = _made_exact(problem, found, nodes, counts, kept, options, budget)
        except NodeModelUnfinished:
            reason = NodeModelUnfinished.reason
        if isinstance(reason, str):
            return Declined(PathName.COUNTS, reason)
        if not reason:
            return _laid_out(spec, requests, problem, found, nodes, replace(counts, bound=counts.bound + fixed_cost), kept, held, weights)
    return Declined(PathName.COUNTS, f"the previous placements kept by its patterns were not settled in {MAX_ROUNDS} rounds")


def preferring_answer(spec: PlacementSpec, held: Held, weights: Mapping[str, int], options: SolverOptions, budget: Budget, stated: Stated) -> Answer | Declined | None:
    """A spec preferring domains its units may span (``preferred.py``): ``stated``'s answer with
    the preferences required, proven against every layout that spans a domain, which costs the
    ``topology`` weight more than the least of the spec with them dropped (``changes`` included);
    the answer with them dropped where it is better (moves saved outweigh its spans). Where the
    required variant declines, ``kept_answer`` states the spans' term (``_spanning``); the others
    leave the spec to the caller."""
    required, dropped = variants(spec)
    if forced_spans(spec) or isinstance(answer := stated(required, held, weights, options, budget), Declined):  # none keeps them all, or none found that does
        return _spanning(spec, dropped, held, weights, options, budget) if stated is kept_answer else None
    if answer is None or answer.assignments is None:
        return None
    value, kept_whole = objective_value(spec, spec.requests, answer.assignments, weights, held), answer.known("bound")
    spanning = int(weights.get("topology", 0))
    least = spanning + objective_lower_bound(dropped, {**weights, "changes": 0})  # ``changes`` is never below 0
    if value > least:  # the counting bound does not prove it: the count model's with the rules dropped may
        other = stated(dropped, held, weights, options, budget)
        if not isinstance(other, Answer) or other.bound is None or other.assignments is None:
            return None
        least = max(least, spanning + other.bound)
        spans = objective_value(spec, spec.requests, other.assignments, weights, held)
        if spans < value:  # the moves a spanning layout saves outweigh its spans
            answer, value = other, spans
    bound = min(kept_whole, least)  # a layout keeps every preferred domain whole, or spans one
    status = SolveStatus.OPTIMAL if answer.status == SolveStatus.OPTIMAL and value <= bound else SolveStatus.FEASIBLE
    primary = objective_value(spec, spec.requests, answer.assignments, {**weights, "contiguity": 0}, held)
    return replace(answer, status=status, objective=value, bound=min(bound, value), primary=primary)


def _spanning(
    spec: PlacementSpec, dropped: PlacementSpec, held: Held, weights: Mapping[str, int], options: SolverOptions, budget: Budget
) -> Answer | None:
    """A preferred domain no placement keeps, its least spans weighed beside ``changes``
    (``spanning.py``): the answer only when its own objective meets the model's bound."""
    rules = spanned_rules(spec)
    answer = kept_answer(dropped, held, weights, options, budget, priced=tuple(rules)) if rules else None
    if not isinstance(answer, Answer) or answer.status != SolveStatus.OPTIMAL or answer.assignments is None:
        return None
    value = objective_value(spec, spec.requests, answer.assignments, weights, held)
    return replace(answer, objective=value, primary=value) if value <= answer.known("bound") else None


def placed_first(spec: PlacementSpec, requests: Mapping[str, ComponentRequest], held: Held) -> int | None:
    """The previous sets the components placed first keep (their items are known, ``preset.py``,
    so no layout keeps more of their single GPUs); None when one of them held a strided set
    before that its order of processes gives up while another order on the same items might
    keep it: a set is kept only by items that hold all of it, so keeping every such set is the
    most any order keeps."""
    first = {name: request for name, request in requests.items() if request.determined and not spec.requests[name].determined}
    placed = {name: Assignment(r.indptr, r.cand_hw, r.cand_rank, spec.cluster.num_hardware) for name, r in first.items()}
    lost = objective_value(spec, {name: spec.requests[name] for name in first}, placed, {**NO_TERMS, "changes": 1}, held)
    kept = sum(len(held.get(name, ())) for name in first) - lost
    known = {name: set(request.cand_hw.tolist()) for name, request in first.items()}
    most = sum(
        1
        for name, request in first.items()
        for items in held.get(name, ())
        if (len(items) == 1 or enforced_stride(request) is not None) and set(items) <= known[name]
    )
    return kept if kept >= most else None


def _kept_sum(value: Mapping[tuple[int, int], int], uses: Mapping[tuple[int, int, int], cp_model.IntVar]) -> cp_model.LinearExpr:
    """The previous sets kept by the model's counts: each pattern's value times its nodes."""
    return cp_model.LinearExpr.sum([kept * uses[s, 0, p] for (s, p), kept in sorted(value.items()) if kept])


def _made_exact(
    problem: CountProblem,
    found: list[Shape],
    nodes: Mapping[int, HeldNode],
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
        if key not in kept.bounded and (kept_there := in_place(problem, shape, pattern, nodes[s])) is not None and kept_there[0] >= kept.value[key]:
            kept.bounded.add(key)  # what survived kept in place meets the bound: no node model
            kept.laid[key] = kept_there
        if key not in kept.bounded:
            kept.bounded.add(key)
            relaxed = node_kept(problem, shape, pattern, nodes[s], options, budget, runs=False, spread=kept.spread)
            if relaxed is None:
                return "a node whose previous placements its pattern could not be laid out beside"
            if relaxed[0] < kept.value[key]:
                kept.value[key] = relaxed[0]
                lowered = True
            if not runs:
                kept.laid[key] = relaxed  # no class takes runs: the relaxation is a layout
        if key not in kept.laid:
            laid = node_kept(problem, shape, pattern, nodes[s], options, budget, runs=True)
            if (laid is None or laid[0] < kept.value[key]) and all(
                problem.classes[c].run == 1 or problem.classes[c].step > 1 or c in kept.spread for c, g in zip(shape.part, pattern) if g
            ):  # every class taking runs may take its processes anywhere: the relaxation is a layout
                laid = node_kept(problem, shape, pattern, nodes[s], options, budget, runs=False, spread=kept.spread)
                kept.spread_laid.add(key)
            if laid is None:
                return "a node whose groups could not be tiled by their strides beside its previous placements"
            kept.laid[key] = laid
        if kept.laid[key][0] < kept.value[key]:
            short.append(f"{kept.laid[key][0]} of at most {kept.value[key]}")
    if short and not lowered:
        return (
            f"a node whose processes take runs of GPUs keeps {short[0]} previous placements in whole runs (the flat model may place them otherwise)"
        )
    return lowered


def _laid_out(
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    problem: CountProblem,
    found: list[Shape],
    nodes: Mapping[int, HeldNode],
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
    placed = relaid(spec, problem, placed, held_layouts(spec, problem, found, nodes, placed, kept.laid, kept.spread_laid), kept.spread)
    for name, request in requests.items():
        if request.determined:
            placed[name] = Assignment(request.indptr, request.cand_hw, request.cand_rank, cluster.num_hardware)
    chosen = by_component(spec, placed)
    value = objective_value(spec, spec.requests, chosen, weights, held)
    every = sum(len(held.get(name, ())) for name, request in spec.requests.items() if not request.determined)
    bound = counts.bound + int(weights.get("changes", 0)) * every
    status = SolveStatus.OPTIMAL if SolveStatus(counts.status) == SolveStatus.OPTIMAL and value <= bound else SolveStatus.FEASIBLE
    model = (f"re-planning: counted with the placements kept a term of their own (each node's patterns priced by what they keep of its previous sets), over {counted(sum(shape.size for shape in found), 'node pattern')}",)
    return Answer(PathName.COUNTS, Method.COUNTS, chosen, status, value, min(bound, value), primary=value, model=model)


def held_layouts(
    spec: PlacementSpec,
    problem: CountProblem,
    found: list[Shape],
    nodes: Mapping[int, HeldNode],
    placed: Mapping[str, Assignment],
    laid: Mapping[tuple[int, int], tuple[int, dict[int, np.ndarray]]],
    spread_laid: set[tuple[int, int]],
) -> list[tuple[tuple[int, ...], np.ndarray, Mapping[int, np.ndarray], bool]]:
    """Per pattern of the shapes with a content (``nodes``) that the count layout ``placed``
    uses, the nodes holding it and the local ids it was ``laid`` out on, as :func:`relaid` takes
    them (the nodes of one pattern share its layout: grouped by rows, not node by node)."""
    cluster = spec.cluster
    layouts: list[tuple[tuple[int, ...], np.ndarray, Mapping[int, np.ndarray], bool]] = []
    for s in nodes:
        shape = found[s]
        per_node = [np.bincount(cluster.hw_node[placed[problem.classes[c].root].hardware], minlength=cluster.num_nodes) for c in shape.part]
        on = np.stack([held_there[shape.nodes] // problem.classes[c].width for c, held_there in zip(shape.part, per_node)], axis=1)
        patterns = {pattern: p for p, pattern in enumerate(shape.tables[0].patterns)}
        used = np.flatnonzero(on.any(axis=1))
        for group in row_groups(on[used]):
            key = (s, patterns[tuple(on[used[group[0]]].tolist())])
            layouts.append((shape.part, shape.nodes[used[group]], laid[key][1], key in spread_laid))
    return layouts


def relaid(
    spec: PlacementSpec,
    problem: CountProblem,
    placed: dict[str, Assignment],
    layouts: Sequence[tuple[tuple[int, ...], np.ndarray, Mapping[int, np.ndarray], bool]],
    spread: Mapping[int, tuple[int, int]],
) -> dict[str, Assignment]:
    """``placed`` with each node's processes of a part's classes on the local ids of its layout
    (part, the nodes sharing it, local ids per class position, whether it was laid out as the
    relaxation places a ``spread`` class's processes), each group's GPUs tiled by its members as
    the count layout does (a spread class's in the order of its member's progressions, every
    one-GPU member following it); dealt once per layout and written to all its nodes at once (a
    deal per node took 0.5-0.8 s on 65,536 nodes), window ranks computed once per member."""
    cluster = spec.cluster
    start = np.concatenate(([0], np.cumsum(cluster.gpus_per_node)))
    hardware: dict[str, np.ndarray] = {}
    rows_of: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # per member: its processes by node, and where each node's begin
    for part, on_nodes, layout, anywhere in layouts:
        for k, local in layout.items():
            count_class = problem.classes[part[k]]
            run, step = spread[part[k]] if anywhere and part[k] in spread else (count_class.run, count_class.step)
            progressions = step > 1  # dealt in progression order, as ``layout.py`` deals them (``strided.py``)
            ordered = progressions_of(local, run, step, local.size) if progressions else local
            if ordered is None:
                raise InternalError(f"node {int(on_nodes[0])}: the local ids {local.tolist()} laid out for {count_class.root} are not whole progressions")
            follows, leader = (count_class.follows, count_class.leader) if (run, step) == (count_class.run, count_class.step) else ((), "")
            dealt = member_items(ordered.reshape(-1, count_class.width), count_class.members, follows, leader, spec.requests, step)
            for member in count_class.members:
                request = spec.requests[member]
                if member not in hardware:
                    before = placed[member]
                    hardware[member] = before.hardware.reshape(-1, int(request.amount[0])).copy()
                    first = cluster.hw_node[hardware[member][:, 0]]
                    order = np.argsort(first, kind="stable")
                    rows_of[member] = (order, np.searchsorted(first[order], np.arange(cluster.num_nodes + 1)))
                order, bounds = rows_of[member]
                processes = dealt[member].shape[0]
                differ = np.flatnonzero(bounds[on_nodes + 1] - bounds[on_nodes] != processes)
                if differ.size:
                    node = int(on_nodes[differ[0]])
                    raise InternalError(f"{member}: {processes} processes laid out on node {node}, where the count layout has {int(bounds[node + 1] - bounds[node])}")
                rows = order[bounds[on_nodes][:, None] + np.arange(processes)]
                hardware[member][rows.reshape(-1)] = (dealt[member][None] + start[on_nodes][:, None, None]).reshape(-1, dealt[member].shape[1])
    for member, items in hardware.items():
        request, before = spec.requests[member], placed[member]
        flat = items.reshape(-1)
        ranks = window_ranks(request.cand_hw, request.cand_rank, before.indptr, flat, int(request.stride or 1), cluster.num_hardware)
        placed = {**placed, member: Assignment(before.indptr, flat, ranks, before.num_hardware)}
    return placed
