"""Re-planning with a weighed ``contiguity``: moves and ranks priced together, in one count model.

Why one model is exact: a node's part of the objective splits in three. Its ranks are ``base x
GPUs`` (which patterns go on which nodes, ``contiguity.py``'s runs of evenly rising bases) plus
the local ids its classes take; the previous sets it keeps depend on those local ids only
(``kept_node.py``). So on a node that held something, once its pattern is chosen, what is left
to choose is its local ids, and the best of them minimise ``contiguity x local ids - changes x
sets kept`` there, whatever the other nodes do: one number per (previous content, pattern).
The count model adds that number, less the ranks its walk already prices, to each pattern of the
nodes of that content; the layout gives each such node the local ids that reach it. Moves and
ranks are then traded at their real weights by CP-SAT itself, and the answer is proven by the
model's own bound (``kept_ranks.py`` priced two layouts against two bounds and declined when
neither met both).

The number is found lazily, as ``kept.py`` finds the sets kept: every pattern starts at a value
no layout of the node beats (the least local ids the walk prices, keeping the most any layout
keeps there, ``kept_node.upper_bound``); where the model's answer uses a pattern, the node's
relaxation (``kept_node.node_kept`` without runs of blocks, the flat model's processes placed
freely) gives its value, and the model is solved again until every pattern it uses has it. The
node is laid out by the same one-node model with each class in whole runs; where that is worse
and every class may take its GPUs anywhere (runs of one GPU, progressions, or ``spread_shape``),
the relaxation is the layout. The answer is proven when its own objective meets the bound.

Components placed first (``preset.py``) keep what their known items keep (``kept.placed_first``)
and cost what they cost. A weighed ``balance`` is the peak over the patterns' loads
(``ranked_search.peak_term``, whole-node patterns as for a fresh spec): local ids move no load. Robots
and whole nodes are stated view by view (``kept_kinds.py`` calls it on each). What it leaves to
``replan.py`` (None): a strided component placed first whose order of processes may give up a
set another order keeps, a spec the count model reads otherwise (a preferred domain is counted
as required and proven against it dropped, as ``kept.py`` does), windows whose ranks do not
follow a node's GPU order, and more than ``MAX_PATTERNS`` patterns over the runs of contents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._errors import counted
from solver_placement._solver.answer import Answer, Declined, PathName, by_component
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.counts.contiguity import Ranked, TooManyLocalStates, Uses, add_term, even_runs, rank_bases
from solver_placement._solver.counts.kept import held_layouts, placed_first, preferring_answer, relaid
from solver_placement._solver.counts.kept_node import Held, HeldNode, NodeModelUnfinished, by_content, contents, node_kept, spread_shape, upper_bound
from solver_placement._solver.counts.kinds import splits
from solver_placement._solver.counts.layout import LayoutFailed, assignments
from solver_placement._solver.counts.local_costs import TooManyWalkStates
from solver_placement._solver.counts.model import NO_COUNT_ANSWER, Counts, solve_counts
from solver_placement._solver.counts.patterns import MAX_PATTERNS, parts
from solver_placement._solver.counts.preferred import preferring
from solver_placement._solver.counts.preset import preset
from solver_placement._solver.counts.pricer import Pricer
from solver_placement._solver.counts.problem import CountProblem, count_problem, in_progressions
from solver_placement._solver.counts.ranked_runs import WalkedRun, walked_runs
from solver_placement._solver.counts.ranked_search import peak_term
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.options import Budget, SolverOptions, SolveStatus
from solver_placement._solver.solution import Method
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec

#: Most times the count model is solved again with patterns' values settled: each round settles
#: at least one pattern the answer uses, and a re-plan's answer uses a few per content.
MAX_ROUNDS = 16


@dataclass
class _Priced:
    """Per (run, pattern) of the runs with a content: ``value``, what the local ids add to the
    objective beyond the ranks the walk prices (at most that until ``settled``), and ``laid``,
    per settled pattern, its layout's own value and local ids per class position; ``spread_laid``
    the keys laid out as the relaxation places a ``spread`` class (``kept_node.spread_shape``);
    ``barred`` the keys no layout holds on that content's nodes (the walk lists a class with
    strided members as consecutive runs of one GPU, a lower bound, so a pattern it lists may not
    fit beside a node's loads): the model may not use them there."""

    value: dict[tuple[int, int], int]
    spread: dict[int, tuple[int, int]]
    settled: set[tuple[int, int]] = field(default_factory=set)
    laid: dict[tuple[int, int], tuple[int, dict[int, np.ndarray]]] = field(default_factory=dict)
    spread_laid: set[tuple[int, int]] = field(default_factory=set)
    barred: set[tuple[int, int]] = field(default_factory=set)


def kept_ranked(spec: PlacementSpec, held: Held, weights: Mapping[str, int], options: SolverOptions, budget: Budget) -> Answer | Declined | None:
    """The re-plan's answer with ``changes`` and a weighed ``contiguity`` in one count model, proven
    by its own bound, or why it declines; None for the specs it leaves to ``replan.py`` (see the
    module's note)."""
    ranks, balance = int(weights.get("contiguity", 0)), int(weights.get("balance", 0))
    if not ranks or splits(spec, spec.requests):
        return None
    ready = preset(spec, spec.requests, weights, options, budget)
    if isinstance(ready, Declined):
        return None
    requests = ready.requests
    first = placed_first(spec, requests, held)
    problem = count_problem(spec, requests)
    if isinstance(problem, str) and preferring(spec):  # required, proven against the rule dropped (``preferred.py``)
        return preferring_answer(spec, held, weights, options, budget, kept_ranked)
    if first is None or not isinstance(problem, CountProblem):
        return None
    free = {name: request for name, request in requests.items() if not request.determined}
    problem = replace(problem, classes=tuple(in_progressions(spec, free, c) for c in problem.classes))
    if ready.nodes and balance:
        problem = replace(problem, load=ready.load)  # placed first: a constant load per node
    bases = rank_bases(problem, requests, spec.cluster)
    if isinstance(bases, str):
        return None
    try:
        runs, nodes = _runs_by_content(problem, spec, requests, held, bases, budget, bool(balance))
    except TooManyWalkStates:
        return None
    if sum(run.patterns.shape[0] for run in runs) > MAX_PATTERNS:
        return None
    ranked = [run.ranked(np.ones(run.patterns.shape[0], dtype=bool)) for run in runs]
    spread = {c: shape for c, count_class in enumerate(problem.classes) if (shape := spread_shape(spec, requests, count_class))}
    priced = _Priced({key: _least(problem, ranked[key[0]], key[1], nodes[key[0]], weights) for key in _keys(ranked, nodes)}, spread)
    node_start = np.concatenate(([0], np.cumsum(spec.cluster.gpus_per_node)[:-1]))

    def term(model: cp_model.CpModel, uses: Uses) -> cp_model.LinearExpr:
        paying = sorted(key for key, value in priced.value.items() if value)
        kept = cp_model.LinearExpr.weighted_sum([uses[s, 0, p] for s, p in paying], [priced.value[key] for key in paying])
        for s, p in sorted(priced.barred):
            model.add(uses[s, 0, p] == 0)
        return ranks * add_term(model, ranked, uses) + kept + (balance * peak_term(model, problem, ranked, uses) if balance else 0)

    # what each content held before, settled first: most re-plans keep it, and then one round does
    changed = _settled(problem, ranked, nodes, [key for s in sorted(nodes) if (key := _before(problem, ranked[s], s, nodes[s])) in priced.value], priced, weights, options, budget)
    if isinstance(changed, str):
        return Declined(PathName.COUNTS, changed)
    counts = None
    for _ in range(MAX_ROUNDS):  # each round started from the last answer, its values settled
        counts = solve_counts(problem, [run.shape for run in ranked], {**weights, "balance": 0}, node_start, options, budget, term, hint=counts.uses if counts else None)
        if counts is None:
            return Declined(PathName.COUNTS, NO_COUNT_ANSWER)
        used = [(s, p) for (s, _, p), n in sorted(counts.uses.items()) if n and (s, p) in priced.value]  # nodes that held something, and hold something
        changed = _settled(problem, ranked, nodes, used, priced, weights, options, budget)
        if isinstance(changed, str):
            return Declined(PathName.COUNTS, changed)
        if not changed:
            return _laid_out(spec, requests, problem, ranked, nodes, replace(counts, bound=counts.bound - int(weights.get("changes", 0)) * first), priced, held, weights, budget)
    return Declined(PathName.COUNTS, f"the moves and ranks of its patterns on nodes that held something were not settled in {MAX_ROUNDS} rounds")


def _runs_by_content(
    problem: CountProblem, spec: PlacementSpec, requests: Mapping[str, ComponentRequest], held: Held, bases: np.ndarray, budget: Budget, joint: bool
) -> tuple[list[WalkedRun], dict[int, HeldNode]]:
    """The walked runs (``ranked_runs.py``; whole-node patterns when ``joint``, as ``balance``
    needs them) split by what their nodes held before (``kept_node.by_content``), each split cut
    again where its bases stop rising evenly; and per run index, the content of the runs that
    held something."""
    cluster = spec.cluster
    runs: list[WalkedRun] = []
    nodes: dict[int, HeldNode] = {}
    for part in parts(problem, joint):
        index = list(part)
        widths = np.array([problem.classes[c].width for c in part], dtype=np.int64)
        before = contents(problem, spec, requests, held, part)
        for run in walked_runs(problem, part, cluster, bases, requests, budget.check):
            for split, node in by_content(problem, run.shape, before):
                for alike in even_runs(split.nodes, bases[index]):
                    head = bases[index][:, alike[0]]
                    step = bases[index][:, alike[1]] - head if alike.size > 1 else np.zeros(len(part), dtype=np.int64)
                    if node is not None:
                        nodes[len(runs)] = node
                    runs.append(WalkedRun(replace(split, nodes=alike), run.patterns, run.local, head * widths, step * widths))
    return runs, nodes


def _keys(ranked: list[Ranked], nodes: Mapping[int, HeldNode]) -> list[tuple[int, int]]:
    """(run, pattern) of every non-empty pattern of the runs with a content."""
    return [(s, p) for s in sorted(nodes) for p, pattern in enumerate(ranked[s].shape.tables[0].patterns) if any(pattern)]


def _least(problem: CountProblem, run: Ranked, p: int, node: HeldNode, weights: Mapping[str, int]) -> int:
    """A value no layout of pattern ``p`` on a node of ``run`` goes below: its local ids cost at
    least the least the walk prices (``run.local``, a bound of every layout, ``contiguity.py``),
    and it keeps at most the most any layout keeps there (``kept_node.upper_bound``)."""
    return -int(weights.get("changes", 0)) * upper_bound(problem, run.shape, run.shape.tables[0].patterns[p], node)


def _before(problem: CountProblem, run: Ranked, s: int, node: HeldNode) -> tuple[int, int] | None:
    """The (run, pattern) of what a node of ``run`` held before (per class, the GPUs its members
    held there, in groups), or None when that is no pattern of the run."""
    groups = []
    for k, c in enumerate(run.shape.part):
        ids = {gpu for gpu, n in enumerate(node.content.singles[k]) if n} | {gpu for *_, local in node.content.strided[k] for gpu in local}
        groups.append(len(ids) // problem.classes[c].width)
    patterns = run.shape.tables[0].patterns
    return (s, patterns.index(tuple(groups))) if tuple(groups) in patterns else None


def _settled(
    problem: CountProblem,
    ranked: list[Ranked],
    nodes: Mapping[int, HeldNode],
    keys: list[tuple[int, int]],
    priced: _Priced,
    weights: Mapping[str, int],
    options: SolverOptions,
    budget: Budget,
) -> bool | str:
    """Each of ``keys`` (run, pattern: runs with a content) not settled yet given its value (the
    node's relaxation) and a layout, or barred where the relaxation holds none (it bounds every
    layout the flat model allows there, so none exists); True when a value changed or a pattern
    was barred (the model must be solved again), a reason to decline when the relaxation holds a
    pattern whose groups no layout tiles."""
    ranks, changes = int(weights.get("contiguity", 0)), int(weights.get("changes", 0))
    changed = False
    try:
        for key in keys:
            if key in priced.settled:
                continue
            s, p = key
            shape, pattern = ranked[s].shape, ranked[s].shape.tables[0].patterns[p]
            prices = (changes, tuple(ranks * len(problem.classes[c].members) for c in shape.part))
            relaxed = node_kept(problem, shape, pattern, nodes[s], options, budget, runs=False, spread=priced.spread, prices=prices)
            priced.settled.add(key)
            if relaxed is None:
                priced.barred.add(key)
                changed = True
                continue
            value = -relaxed[0] - ranks * ranked[s].local[p]
            changed |= value != priced.value[key]
            priced.value[key] = value
            blocks = [c for c, g in zip(shape.part, pattern, strict=True) if g and problem.classes[c].run > 1 and problem.classes[c].step == 1]
            laid = node_kept(problem, shape, pattern, nodes[s], options, budget, runs=True, prices=prices) if blocks else relaxed
            if (laid is None or laid[0] < relaxed[0]) and all(c in priced.spread for c in blocks):
                laid = relaxed  # every class may take its GPUs anywhere there: the relaxation is a layout
                priced.spread_laid.add(key)
            if laid is None:
                return "a node whose groups could not be tiled by their strides beside its previous placements"
            priced.laid[key] = laid
    except NodeModelUnfinished:
        return NodeModelUnfinished.reason
    return changed


def _laid_out(
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    problem: CountProblem,
    ranked: list[Ranked],
    nodes: Mapping[int, HeldNode],
    counts: Counts,
    priced: _Priced,
    held: Held,
    weights: Mapping[str, int],
    budget: Budget,
) -> Answer | Declined:
    """The count layout, least local ids on nodes that held nothing (``weighed.Pricer``), the
    settled ones on nodes that did; its value is the spec's own, its bound the model's (``counts``:
    the sets the components placed first keep taken off) with every set held before and what
    those components cost besides."""
    cluster = spec.cluster
    shapes = [run.shape for run in ranked]
    try:
        placed = assignments(
            problem, shapes, counts, requests, cluster, lambda s, row, pattern: ranked[s].rise(pattern, row), Pricer(problem, requests, sorted({s.part for s in shapes}), budget, ranked).ids
        )
    except LayoutFailed:
        return Declined(PathName.COUNTS, "a node whose groups could not be tiled by their strides")
    except (TooManyLocalStates, TooManyWalkStates):
        return Declined(PathName.COUNTS, "more local layouts of a node's pattern than the contiguity term searches")
    placed = relaid(spec, problem, placed, held_layouts(spec, problem, shapes, nodes, placed, priced.laid, priced.spread_laid), priced.spread)
    for name, request in requests.items():
        if request.determined:
            placed[name] = Assignment(request.indptr, request.cand_hw, request.cand_rank, cluster.num_hardware)
    chosen = by_component(spec, placed)
    value = objective_value(spec, spec.requests, chosen, weights, held)
    every = sum(len(held.get(name, ())) for name, request in spec.requests.items() if not request.determined)
    first = {name: spec.requests[name] for name, request in requests.items() if request.determined and not spec.requests[name].determined}
    fixed = objective_value(spec, first, {name: placed[name] for name in first}, {**weights, "changes": 0, "balance": 0}, {}) if first else 0  # ``preset.py``; their load is in the model's
    bound = counts.bound + fixed + int(weights.get("changes", 0)) * every
    status = SolveStatus.OPTIMAL if SolveStatus(counts.status) == SolveStatus.OPTIMAL and value <= bound else SolveStatus.FEASIBLE
    primary = objective_value(spec, spec.requests, chosen, {**weights, "contiguity": 0}, held)
    model = (
        "re-planning with contiguity weighed: counted with moves and ranks in one objective, each node's whole-node patterns "
        f"priced by what they keep of its previous sets and by their least local ids, over {counted(sum(shape.size for shape in shapes), 'node pattern')}",
    )  # fmt: skip
    return Answer(PathName.COUNTS, Method.COUNTS, chosen, status, value, min(bound, value), primary=primary, model=model)
