"""The count path when ``contiguity`` is weighed as a term: patterns, counts and layout with the
ranks priced (``contiguity.py``), and the answer proven only when its own value meets the bound.

Why a path of its own: with contiguity only a tie-break, the count model proves ``nodes`` and
``balance`` and orders ties afterwards (``model.py``'s second run); weighed, the ranks trade
against the other terms, so they join the one objective, every shape is cut into runs whose ranks
rise evenly, and the layout gives each node the stacks of its least local cost. Whole-node
patterns are needed (a node's local cost is of its whole pattern), as for ``balance``, which
takes this path too past the whole-node patterns ``patterns.shapes`` lists (contiguity 0 then).

How it stays small and fast: one walk over a node's GPUs lists every whole-node pattern with its
least local ids (``local_costs.py``, arrays: tens of thousands in milliseconds); up to
``RELAXED_PAST`` of them (``RANKED_RELAXED_PAST`` with ``contiguity`` weighed) all become the
model's integers; past that a linear relaxation
(``reduced_costs.py``) keeps those an answer better than the one found may use, and the answer
is proven only when no pattern left out could beat it. Each class on at least its fewest nodes
and ``balance`` by load levels keep CP-SAT's own relaxation near the optimum. With ``nodes``
alone weighed, every walked pattern is stated by the maximal ones instead (``maximal.py``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import replace

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import counted
from solver_placement._solver.answer import Answer, Declined, PathName, by_component
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.bounds.objective import objective_lower_bound
from solver_placement._solver.counts.contiguity import Ranked, TooManyLocalStates, Uses, add_term, rank_bases
from solver_placement._solver.counts.heavy_first import heavy_first
from solver_placement._solver.counts.kind_ranks import SPLIT_SEARCH, class_bases, kind_ranks
from solver_placement._solver.counts.layout import LayoutFailed, assignments
from solver_placement._solver.counts.level_chords import LONG_RUN_SEARCH, long_runs, with_chords
from solver_placement._solver.counts.local_costs import TooManyWalkStates
from solver_placement._solver.counts.maximal import maximal_tables, solve_maximal
from solver_placement._solver.counts.model import NO_COUNT_ANSWER, Counts, Term, peak_by_levels, solve_counts
from solver_placement._solver.counts.patterns import MAX_PATTERNS, Shape, parts
from solver_placement._solver.counts.peak_levels import solve_balanced
from solver_placement._solver.counts.pricer import Pricer
from solver_placement._solver.counts.problem import CountProblem, in_progressions
from solver_placement._solver.counts.ranked_runs import WalkedRun, walked_runs
from solver_placement._solver.counts.reduced_costs import Relaxation, fewest_nodes, relax
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.options import Budget, SolverOptions, SolveStatus
from solver_placement._solver.solution import Method
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec

log = logging.getLogger(__name__)

#: Most whole-node patterns the walks may list over all runs (arrays, priced at once); the model
#: itself holds at most ``MAX_PATTERNS`` of them, those the relaxation keeps.
MAX_WALKED_PATTERNS = 200_000
#: CP-SAT parameters of the first run with ``contiguity`` weighed (``_rows_first``): every
#: linear row in its relaxation from the start, not as its solutions break them.
ROWS_FIRST = {"add_lp_constraints_lazily": False}
#: CP-SAT's deterministic work for that run (the same on any machine): the 14 of 17 specs it
#: proves take at most 0.027 of it.
ROWS_FIRST_WORK = 0.05
#: How far above its bound (a share of the bound) the first run's answer is too far to start the
#: second from: that run is first repeated from the heavy-first answer (``heavy_first.py``).
#: ``contiguity:24:61`` (a cycle of four exclusions, 255 patterns on 24 nodes): its first answer
#: 993,493 against a bound of 512,400, the second run from it unproven at 522,468 after 2.1 s
#: (first fit kept: 514,470); from the heavy-first answer every row proves 512,400 in 0.02 s.
#: Answers near their bound (``contiguity:5:15``, ``29:16``, ``857:65``: within 0.03%) close
#: faster from themselves, and a heavy-first start there cost 0.1-0.5 s (40 cases a family).
FAR_GAP = 0.1
#: Whole-node patterns past which the relaxation chooses those the model holds.
RELAXED_PAST = MAX_PATTERNS
#: The same with ``contiguity`` weighed. There CP-SAT's root bound often is the optimum already
#: and its search spends its time finding an answer that meets it among thousands of integers,
#: so the few patterns of least reduced cost answer sooner (``contiguity:3:0``, 2,150 patterns on
#: 3 nodes: the relaxation's bound is the optimum, 199 patterns hold it, 0.19 -> 0.06 s CPU;
#: 3:32, 4:35 and 14:33 of 1,398-3,121 patterns: 0.14-0.28 -> 0.08-0.13). Below it the model is
#: proven as fast whole: 4:10 (741 patterns, bound one below the optimum) needs two models
#: relaxed (74 then 515 patterns) for the 0.1 s one model takes. Up to ``RELAXED_PAST`` it is a
#: trial, one run of bounded work, after which every pattern is counted (``_solved``).
RANKED_RELAXED_PAST = 1_000
#: Most walked patterns listed whole (as the tables' rows) for the maximal model when ``nodes``
#: alone is weighed (``_maximal``): 15,211 on the ``ring`` benchmark's 8-GPU nodes cost a few
#: milliseconds; past it the relaxation chooses the patterns, as before. Raised from 20,000:
#: ``ring:272:68`` walks 27,289, and over the 3,999 the relaxation kept CP-SAT found nothing in
#: its 2.4 s (first fit then met the counting bound, 2.5 s); the maximal model proves it in
#: 0.17 s CPU (``ring``, 40 cases at seed 60: p95 1.09 -> 0.13 s on 129-1,024 nodes).
MAXIMAL_MOST = 50_000
#: Most whole-node patterns the model holds all of when ``balance`` alone is weighed: each peak
#: level holds those above it at 0, which CP-SAT propagates at once (``peak_levels.py``), so
#: more than ``RELAXED_PAST`` stay fast (5,174 on 60 nodes: each level in 0.1-0.3 s).
LEVELED_MOST = 20_000


def counted_with_ranks(
    problem: CountProblem,
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    weights: Mapping[str, int],
    options: SolverOptions,
    budget: Budget,
) -> Answer | Declined:
    """The count problem solved with ``contiguity`` weighed (``weights["contiguity"]`` > 0), or
    past the whole-node patterns ``patterns.shapes`` lists with ``balance`` weighed or a part
    with no clique tree (contiguity 0: only the tie-break, left out); its value is the spec's objective of the layout built, its
    bound the model's (or the relaxation's, for answers using a pattern left out). A class whose
    root takes GPUs a stride apart is laid out in progressions here (``strided.py``): its
    blocks would be priced as single GPUs, a bound its layout may miss."""
    free = {name: request for name, request in requests.items() if not request.determined}
    problem = replace(problem, classes=tuple(in_progressions(spec, free, c) for c in problem.classes))
    cluster = spec.cluster
    ranks = bool(weights.get("contiguity"))
    bases = rank_bases(problem, requests, cluster) if ranks else np.zeros((len(problem.classes), cluster.num_nodes), dtype=np.int64)
    kinds = None
    if isinstance(bases, str):  # items of several kinds: several bases on a node (``kind_ranks.py``)
        by_base = kind_ranks(problem, requests, cluster)
        if isinstance(by_base, str):
            return Declined(PathName.COUNTS, by_base)
        kinds, bases = by_base, class_bases(by_base, cluster)
    walked: list[WalkedRun] = []
    try:
        for part in parts(problem, bool(weights.get("balance"))):
            walked += walked_runs(problem, part, cluster, bases, requests, budget.check, priced=ranks, kinds=kinds)
    except TooManyWalkStates:
        return Declined(PathName.COUNTS, "more local layouts of node patterns than the contiguity term prices")
    if sum(run.patterns.shape[0] for run in walked) > MAX_WALKED_PATTERNS:
        return Declined(PathName.COUNTS, f"more than {MAX_WALKED_PATTERNS:,} whole-node patterns, once cut into runs of evenly rising ranks")
    if not ranks and weights.get("balance") and sum(run.patterns.shape[0] for run in walked) <= LEVELED_MOST:  # every pattern
        found: tuple[list[Ranked], Counts, int] | Declined = _leveled(problem, walked, weights, cluster, options, budget)
    else:
        found = _relaxed(problem, walked, weights, cluster, options, budget)
    if isinstance(found, Declined):
        return found
    ranked, counts, bound = found
    try:
        placed = assignments(
            problem,
            [run.shape for run in ranked],
            counts,
            requests,
            cluster,
            lambda s, row, pattern: ranked[s].rise(pattern, row),
            Pricer(problem, requests, sorted({run.shape.part for run in walked}), budget, ranked).ids,
            lambda s: ranked[s].split is not None,
        )
    except LayoutFailed:
        return Declined(PathName.COUNTS, "a node whose groups could not be tiled by their strides")
    except (TooManyLocalStates, TooManyWalkStates):
        return Declined(PathName.COUNTS, "more local layouts of a node's pattern than the contiguity term searches")
    for name, request in requests.items():
        if request.determined:
            placed[name] = Assignment(request.indptr, request.cand_hw, request.cand_rank, cluster.num_hardware)
    return _answer(spec, requests, placed, weights, counts.status, bound)


def _leveled(
    problem: CountProblem, walked: list[WalkedRun], weights: Mapping[str, int], cluster: Cluster, options: SolverOptions, budget: Budget
) -> tuple[list[Ranked], Counts, int] | Declined:
    """No ranks weighed, ``balance`` weighed: every walked pattern in the model, ``balance``
    taken level by level (``peak_levels.py``), which proves what the relaxation's pruning could
    not (its bound ignores the peak's trade against nodes)."""
    ranked = [run.ranked(np.ones(run.patterns.shape[0], dtype=bool)) for run in walked]
    least = fewest_nodes([(run.shape.part, run.patterns) for run in walked], [c.groups for c in problem.classes])
    log.debug("the count model over every whole-node pattern: %s, %s, balance level by level", counted(len(ranked), "run"), counted(sum(run.shape.size for run in ranked), "pattern"))
    node_start = np.concatenate(([0], np.cumsum(cluster.gpus_per_node)[:-1]))
    counts = solve_balanced(problem, [run.shape for run in ranked], weights, node_start, options, budget, _ranks_term(problem, ranked, least, 0, 0))
    if counts is None:
        return Declined(PathName.COUNTS, NO_COUNT_ANSWER)
    return ranked, counts, counts.bound


def _relaxed(
    problem: CountProblem, walked: list[WalkedRun], weights: Mapping[str, int], cluster: Cluster, options: SolverOptions, budget: Budget
) -> tuple[list[Ranked], Counts, int] | Declined:
    """The model over the patterns the relaxation keeps past ``RELAXED_PAST`` (with
    ``contiguity`` weighed, ``RANKED_RELAXED_PAST``; ``_solved``).
    With neither ranks nor ``balance`` weighed (a part with no clique tree, a cycle of exclusions
    with no chord, past the patterns ``patterns.shapes`` lists) it comes here too: first over
    the maximal patterns of every walked one (``_maximal``); where that is not exact or the
    patterns are few, over every pattern up to ``RELAXED_PAST``, started from the heavy-first
    answer (``heavy_first.py``), which is what orders its ties (8,960 patterns on 201 nodes:
    0.36 s when all were in one model started elsewhere, 0.06 s here)."""
    node_start = np.concatenate(([0], np.cumsum(cluster.gpus_per_node)[:-1]))
    if not weights.get("contiguity") and not weights.get("balance") and not any(run.split is not None for run in walked):
        found = _maximal(problem, walked, weights, node_start, options, budget)
        if found is not None:
            return found
    total = sum(run.patterns.shape[0] for run in walked)
    relaxation = None
    if total > (min(RANKED_RELAXED_PAST, RELAXED_PAST) if weights.get("contiguity") else RELAXED_PAST):
        columns = [run.columns(problem, weights) for run in walked]
        relaxation = relax(columns, [c.groups for c in problem.classes], int(weights.get("contiguity", 0)), int(weights.get("balance", 0)), budget)
    if relaxation is not None and total <= RELAXED_PAST and not all(kept.all() for kept in _first_kept(relaxation)):  # a trial: every pattern where it proves nothing
        tried = _solved(problem, walked, relaxation, weights, node_start, options, budget, trial=True)
        if not isinstance(tried, Declined):
            return tried
        log.debug("the patterns of least reduced cost proved nothing: every pattern")
        relaxation = None
    return _solved(problem, walked, relaxation, weights, node_start, options, budget)


def _maximal(
    problem: CountProblem, walked: list[WalkedRun], weights: Mapping[str, int], node_start: np.ndarray, options: SolverOptions, budget: Budget
) -> tuple[list[Ranked], Counts, int] | Declined | None:
    """``nodes`` alone weighed: the count model over every walked pattern, stated by the
    maximal ones and what each run gives back (``maximal.py``: exact, its ``nodes`` optimum the
    full model's); None where ``maximal.maximal_tables`` finds it not exact or the full model
    small, or past ``MAXIMAL_MOST`` walked patterns (the relaxation chooses among those).

    Why: on the cycles of exclusions of the ``ring`` benchmark (15,211 patterns on 8-GPU nodes)
    the relaxation kept 3,999 of them and CP-SAT took 0.07-0.3 s over those (a heavy-first start
    short of the optimum, or none); their 179 maximal patterns are proven in a few milliseconds.
    On 4,096 nodes (``ring:4096:0``) none was proven among the patterns kept, the count path
    declined and first fit answered (46,130,000); this model proves 46,100,000 in 0.07 s of CPU.
    Which of the equal optima it returns is the maximal model's (its low-ranks run, then the
    give-backs' order), not the heavy-first start's: placements move, objectives do not."""
    if sum(run.patterns.shape[0] for run in walked) > MAXIMAL_MOST:
        return None
    ranked = [run.ranked(np.ones(run.patterns.shape[0], dtype=bool)) for run in walked]
    shapes = [run.shape for run in ranked]
    tables = maximal_tables(problem, shapes)
    if tables is None:
        return None
    log.debug("the count model over the maximal patterns of %s", counted(sum(shape.size for shape in shapes), "pattern"))
    counts = solve_maximal(problem, shapes, tables, weights, node_start, options, budget)
    if counts is None:
        return Declined(PathName.COUNTS, NO_COUNT_ANSWER)
    return ranked, counts, counts.bound


def _solved(
    problem: CountProblem,
    walked: list[WalkedRun],
    relaxation: Relaxation | None,
    weights: Mapping[str, int],
    node_start: np.ndarray,
    options: SolverOptions,
    budget: Budget,
    trial: bool = False,
) -> tuple[list[Ranked], Counts, int] | Declined:
    """The model's answer over the patterns the relaxation keeps, and its bound over every
    pattern: first the patterns of least reduced cost (more while those alone hold no answer);
    when the answer found costs more than an answer with a pattern left out could, again with
    every pattern that could do better, so that none left out beats it; never more than the
    model holds (those of least bound, declined unless proven). Without a relaxation, every
    pattern. A ``trial`` (``RANKED_RELAXED_PAST``) is one run over the patterns of least reduced
    cost, its work bounded (``ROWS_FIRST_WORK``): its answer when it is proven best and none left
    out could beat it, else declined (the caller then counts every pattern). Why not widen as above:
    where the relaxation's bound sits below the optimum, the patterns of least reduced cost hold
    no answer or only hard ones (``contiguity:5:15``, 2,421 patterns: 41 and 82 hold none, 164
    one CP-SAT cannot prove in a second, while all of them are proven in 0.9 s CPU)."""
    everything = [np.ones(run.patterns.shape[0], dtype=bool) for run in walked]
    least = fewest_nodes([(run.shape.part, run.patterns) for run in walked], [c.groups for c in problem.classes])
    keep: list[np.ndarray] = everything if relaxation is None else _first_kept(relaxation)
    weight = int(weights.get("contiguity", 0))
    capped = False
    unproven: tuple[list[Ranked], Counts, int] | None = None  # the best answer of a narrower run, kept for when a wider one finds none
    while True:
        if relaxation is not None:  # past the model's size: those of least bound, proven only if none left out could beat them
            cut, capped = relaxation.capped(keep, MAX_PATTERNS)
            keep = list(cut)
        ranked = [run.ranked(mask) for run, mask in zip(walked, keep)]
        if sum(run.shape.size for run in ranked) > MAX_PATTERNS:
            return Declined(PathName.COUNTS, f"more than {MAX_PATTERNS:,} whole-node patterns, and no relaxation to choose among them")
        log.debug("the count model with contiguity weighed: %s, %s", counted(len(ranked), "run"), counted(sum(run.shape.size for run in ranked), "pattern"))
        term = _ranks_term(problem, ranked, least, weight, int(weights.get("balance", 0)))
        start = None if weight or weights.get("balance") else heavy_first(problem, [run.shape for run in ranked])  # ``nodes`` alone: its ties by where it starts
        bounded = {"max_deterministic_time": ROWS_FIRST_WORK} if trial else {}
        if long_runs(ranked):  # a product per level: chords where the relaxation puts its counts (``level_chords.py``)
            ranked = with_chords(problem, walked, ranked, weights, budget.check)
            term = _ranks_term(problem, ranked, least, weight, int(weights.get("balance", 0)))
            counts = solve_counts(problem, [run.shape for run in ranked], {**weights, "balance": 0}, node_start, options, budget, term, hint=start, tuning={**LONG_RUN_SEARCH, **bounded})
        elif any(run.split is not None for run in ranked):  # a model its default search proves slowly (``kind_ranks.py``)
            counts = solve_counts(problem, [run.shape for run in ranked], {**weights, "balance": 0}, node_start, options, budget, term, hint=start, tuning={**SPLIT_SEARCH, **bounded})
        elif weight:
            counts = _rows_first(problem, [run.shape for run in ranked], {**weights, "balance": 0}, node_start, options, budget, term, hint=start, again=not trial)
        else:
            counts = solve_counts(problem, [run.shape for run in ranked], {**weights, "balance": 0}, node_start, options, budget, term, hint=start)
        beyond = float("inf") if relaxation is None else relaxation.beyond(keep)
        if trial:
            proven = counts is not None and counts.status == "OPTIMAL" and counts.value <= beyond
            return (ranked, counts, counts.bound) if counts is not None and proven else Declined(PathName.COUNTS, NO_COUNT_ANSWER)
        if counts is not None and (counts.value <= beyond or (counts.status != "OPTIMAL" and not capped)):
            return ranked, counts, counts.bound if beyond == float("inf") else min(counts.bound, int(beyond))
        # Unproven among the patterns of least bound: the other paths (first fit meets the counting
        # bound more often). Holding every pattern that could do better proves nothing sooner:
        # the relaxation's bound sits below the integer optimum (``contiguity`` is convex in the
        # counts, seen only through chords, and few nodes split fractionally), so thousands stay
        # under the answer (a cycle of five on 3 nodes: 7,809; of six on 8 nodes: 9,084), and
        # CP-SAT proves neither model in its share of the time.
        if counts is not None and (unproven is None or counts.value < unproven[1].value):  # with its gap to what a pattern left out could do
            unproven = (ranked, counts, min(counts.bound, int(beyond)))
        if capped and unproven is not None:  # the best among those of least bound (or of a narrower run: contiguity:30:156)
            log.debug("unproven among the %s patterns of least bound: the best answer found, bounded by those left out", f"{MAX_PATTERNS:,}")
            return unproven
        if capped:
            return Declined(PathName.COUNTS, f"more than {MAX_PATTERNS:,} whole-node patterns a better answer may use, and no answer among those of least bound")
        if relaxation is None or beyond == float("inf") or budget.remaining() <= 0:
            return unproven if unproven is not None else Declined(PathName.COUNTS, NO_COUNT_ANSWER)
        # the patterns kept hold no answer: twice as many; else every pattern that could do better
        wider = list(relaxation.doubled(keep) if counts is None else relaxation.kept(counts.value))
        keep = [w | k for w, k in zip(wider, keep)] if any((w & ~k).any() for w, k in zip(wider, keep)) else everything


def _first_kept(relaxation: Relaxation) -> list[np.ndarray]:
    """Per run, the patterns of least reduced cost a first model holds: those an answer one above
    the relaxation's bound may use. Where that is every pattern, a trial would be the whole
    model's first run, which ``_relaxed`` then runs once, not twice (``contiguity:364:48``)."""
    return list(relaxation.kept(math.ceil(relaxation.bound - relaxation.margin) + 1))


def _rows_first(
    problem: CountProblem,
    shapes: list[Shape],
    weights: Mapping[str, int],
    node_start: np.ndarray,
    options: SolverOptions,
    budget: Budget,
    term: Term,
    hint: Mapping[tuple[int, int, int], int] | None = None,
    again: bool = True,
) -> Counts | None:
    """``solve_counts`` with ``contiguity`` weighed: first with every linear row in CP-SAT's
    relaxation from the start (``ROWS_FIRST``), its work bounded by ``ROWS_FIRST_WORK``; where
    that proves nothing and ``again``, as before, started from its answer.

    Why: added lazily (CP-SAT's default), the rise levels' rows and their chords
    (``contiguity.add_term``) join the relaxation only as its solutions break them, so its bound
    climbs for hundreds of milliseconds while the search finds nothing better than its first
    answer (``contiguity:3:0``, 2,150 patterns on 3 nodes: 0.26 s CPU, the bound at the optimum
    only after 0.45 s of a 0.74 s run on a loaded machine); all in from the start, the root's
    bound is the optimum and the first answer meets it (0.07 s). Of 17 specs of the benchmark's
    ``contiguity`` family on 2-16 nodes (2,454 patterns at most), 14 are proven within
    ``ROWS_FIRST_WORK`` (at most 0.027 of it; 0.2-1.1 s CPU down to 0.01-0.09 on eight of them);
    the other three close their last unit of gap faster with rows added lazily, so they go on
    so, from the answer found (one of them, ``contiguity:5:15``, 0.26 -> 0.59 s CPU). A first
    run with no answer, or one more than ``FAR_GAP`` above its bound, is first repeated from the
    heavy-first answer with the same work: from a far answer the lazy run rarely closes the gap.

    The lazy run is kept between the first run's bound and one below its answer (CP-SAT's
    objective domain): an answer at that bound is then proven at once, and a proof that there is
    none proves the first answer. ``contiguity:29:16``'s first run ended at 44,679 over a bound of
    44,678; the lazy run found 44,678 after 0.41 deterministic s, 0.045 with the domain (1.1 ->
    0.3 s CPU); either end alone does not do it (0.09 and 0.42; ``contiguity:5:15``: 0.2 and
    1.05 against 0.11 for both)."""
    first = solve_counts(problem, shapes, weights, node_start, options, budget, term, hint=hint, tuning={**ROWS_FIRST, "max_deterministic_time": ROWS_FIRST_WORK})
    if (first is not None and first.status == "OPTIMAL") or not again:
        return first
    start = heavy_first(problem, shapes) if hint is None and (first is None or first.value - first.bound > FAR_GAP * max(first.bound, 1)) else None
    if start is not None:  # an answer far from its bound, or none: again from the heavy-first answer
        log.debug("every row in the relaxation found no answer near its bound: again from the heavy-first answer")
        started = solve_counts(problem, shapes, weights, node_start, options, budget, term, hint=start, tuning={**ROWS_FIRST, "max_deterministic_time": ROWS_FIRST_WORK})
        if started is not None and (started.status == "OPTIMAL" or first is None or started.value < first.value):
            first = started if first is None else replace(started, bound=max(started.bound, first.bound))  # either run's bound holds
        if first is not None and first.status == "OPTIMAL":
            return first
    log.debug("every row in the relaxation proved nothing in its work: again, rows added lazily")
    if first is None:
        return solve_counts(problem, shapes, weights, node_start, options, budget, term, hint=hint)
    if first.value <= first.bound:  # the first answer met its bound as the work ran out
        return replace(first, status="OPTIMAL")
    then = solve_counts(problem, shapes, weights, node_start, options, budget, term, hint=first.uses, between=(first.bound, first.value - 1))
    if then is None:
        return first
    if then.status == "INFEASIBLE":  # nothing better than the first answer: it is the best
        return replace(first, status="OPTIMAL", bound=first.value)
    return then


def _ranks_term(problem: CountProblem, ranked: list[Ranked], least: np.ndarray, weight: int, balance: int) -> Term:
    """The model's further terms: the ranks (``add_term``) and ``balance`` (``peak_term``) weighed,
    beside the fewest-nodes cuts."""

    def term(model: cp_model.CpModel, uses: Uses) -> cp_model.LinearExpr:
        _fewest(model, ranked, uses, least)
        terms: list[cp_model.LinearExprT] = []
        if weight:
            terms.append(weight * add_term(model, ranked, uses))
        if balance:
            terms.append(balance * peak_term(model, problem, ranked, uses))
        return cp_model.LinearExpr.sum(terms)

    return term


def peak_term(model: cp_model.CpModel, problem: CountProblem, ranked: list[Ranked], uses: Uses) -> cp_model.LinearExpr:
    """The most weighed GPUs on a node (the ``balance`` term), by load levels (``model.py``)."""
    loads: list[tuple[int, cp_model.IntVar]] = []
    for s, run in enumerate(ranked):
        for p, pattern in enumerate(run.shape.tables[0].patterns):
            load = sum(g * problem.classes[c].width * len(problem.classes[c].members) for c, g in zip(run.shape.part, pattern, strict=True))
            if load:
                loads.append((load + run.shape.load, uses[s, 0, p]))
    staircase = peak_by_levels(model, loads, sum(int(run.shape.nodes.size) for run in ranked))
    if problem.load is None:
        return staircase
    placed_first = int(problem.load.max(initial=0))  # components placed first load their nodes whatever the patterns (``preset.py``)
    peak = model.new_int_var(placed_first, max([placed_first, *(load for load, _ in loads)]), "peak GPUs taken on a node")
    model.add(peak >= staircase)
    return peak


def _fewest(model: cp_model.CpModel, ranked: list[Ranked], uses: Uses, least: np.ndarray) -> None:
    """Each class on at least its fewest nodes (``reduced_costs.fewest_nodes``): redundant for
    the integers, but what lets CP-SAT's linear relaxation see whole nodes; adds nothing to the
    objective."""
    holding: dict[int, list[cp_model.IntVar]] = {}
    for s, run in enumerate(ranked):  # per class, the counts of the patterns holding it, run by run
        patterns = np.array(run.shape.tables[0].patterns, dtype=np.int64).reshape(len(run.shape.tables[0].patterns), len(run.shape.part))
        for k, c in enumerate(run.shape.part):
            with_class = np.flatnonzero(patterns[:, k]).tolist()
            if with_class:
                holding.setdefault(c, []).extend(uses[s, 0, p] for p in with_class)
    for c, held in sorted(holding.items()):
        if least[c] > 1:
            model.add(cp_model.LinearExpr.sum(held) >= int(least[c]))


def _answer(
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    placed: Mapping[str, Assignment],
    weights: Mapping[str, int],
    status: str,
    model_bound: int,
) -> Answer:
    """The answer with the spec's own objective of ``placed``; the bound is the model's plus what
    the components placed before counting cost (``preset.py``: free in the spec, fixed here), or
    the counting bound (``bounds/objective.py``) where that is higher.
    Proven when the model is and the layout met its bound (a node whose least-cost stacks break
    a stride's runs is laid out another way, and may cost more)."""
    assignments_ = by_component(spec, placed)
    value = objective_value(spec, spec.requests, assignments_, weights, {})
    preset = {name: spec.requests[name] for name, request in requests.items() if request.determined and not spec.requests[name].determined}
    fixed = objective_value(spec, preset, {name: placed[name] for name in preset}, {**weights, "balance": 0}, {}) if preset else 0  # their load is in the model's
    bound = min(model_bound + fixed, value)
    if bound < value:  # the counting bound where the model's is weaker (an answer among the patterns of least bound); read only then: it reads every candidate
        bound = max(bound, objective_lower_bound(spec, weights))
    proven = SolveStatus.OPTIMAL if status == "OPTIMAL" and value == bound else SolveStatus.FEASIBLE
    primary = objective_value(spec, spec.requests, assignments_, {**weights, "contiguity": 0}, {})
    return Answer(PathName.COUNTS, Method.COUNTS, assignments_, proven, value, bound, primary=primary)
