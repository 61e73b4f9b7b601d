"""One count model over ranked runs (``contiguity`` or ``balance`` weighed over whole-node
patterns) solved by the search that suits it: chords for long runs, the split search for items
of several kinds, every linear row first with ``contiguity`` weighed, each within an objective
domain when one is given.

Why a module of its own: ``weighed.py`` chooses which patterns a model holds (all of them, the
maximal ones, the relaxation's, windows of the objective); this one states the further terms
(ranks, ``balance``, each class on its fewest nodes) and runs CP-SAT over what it is given.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._solver.counts.contiguity import Ranked, Uses, add_term
from solver_placement._solver.counts.heavy_first import heavy_first
from solver_placement._solver.counts.kind_ranks import SPLIT_SEARCH
from solver_placement._solver.counts.level_chords import LONG_RUN_SEARCH, long_runs, with_chords
from solver_placement._solver.counts.model import Counts, Term, peak_by_levels, solve_counts
from solver_placement._solver.counts.patterns import Shape
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.counts.ranked_runs import WalkedRun
from solver_placement._solver.options import Budget, SolverOptions

log = logging.getLogger(__name__)

#: CP-SAT parameters of the first run with ``contiguity`` weighed (``rows_first``): every
#: linear row in its relaxation from the start, not as its solutions break them.
ROWS_FIRST = {"add_lp_constraints_lazily": False}
#: CP-SAT's deterministic work for that run (the same on any machine): the 14 of 17 specs it
#: proves take at most 0.027 of it.
ROWS_FIRST_WORK = 0.05
#: Patterns past which that work grows with the model (``ROWS_FIRST_WORK`` for each so many):
#: every row in from the start, the root's linear relaxation alone grows with the patterns, and
#: on a few thousand it spent the whole bound there (``contiguity:42:136``, 4,337 patterns, the
#: window below its answer: no branch in 0.05, proven empty after 0.064 where the lazy rows took
#: 0.43). Seeds 0-999 of ``contiguity`` and ``mixed kinds contiguity`` (2,000 specs, 5 s limit,
#: with ``weighed._solved``'s window below an answer): per 2,500 patterns, 1 unproven and 79.3 s
#: CPU in all; per 1,500, 2 and 80.2 s; a fixed bound, 1 and 83.9 s, but ``42:136`` answered
#: 3.7% above its optimum; before both, 4 unproven and 82.0 s.
ROWS_FIRST_PATTERNS = 2_500
#: CP-SAT parameters of the run after it, rows added lazily: its search led by the objective's
#: lower bound (a tree of the relaxation's bounds, best first), not by a fixed order of the
#: counts. What is left there is the proof (the last units of gap, or a window's emptiness),
#: which that search closes by raising the bound: over the 10 such runs of 13 of the hardest
#: ``contiguity`` specs (``42:136``, ``4096:2``, ``30:156``, ``5:15``...), 6.43 -> 3.87 s CPU in
#: all (``4096:2``'s window below its answer 1.63 -> 0.26, ``42:136``'s first run 1.11 -> 0.15;
#: ``195:891``'s one empty window 0.08 -> 0.23, the others within 0.02). Not for the first run,
#: every row in from the start: there it was 22.0 deterministic s against 20.6 lazily and 33.3
#: so, over 38 models of those specs.
LAZY_SEARCH = {"optimize_with_lb_tree_search": True}
#: How far above its bound (a share of the bound) the first run's answer is too far to start the
#: second from: that run is first repeated from the heavy-first answer (``heavy_first.py``).
#: ``contiguity:24:61`` (a cycle of four exclusions, 255 patterns on 24 nodes): its first answer
#: 993,493 against a bound of 512,400, the second run from it unproven at 522,468 after 2.1 s
#: (first fit kept: 514,470); from the heavy-first answer every row proves 512,400 in 0.02 s.
#: Answers near their bound (``contiguity:5:15``, ``29:16``, ``857:65``: within 0.03%) close
#: faster from themselves, and a heavy-first start there cost 0.1-0.5 s (40 cases a family).
FAR_GAP = 0.1


def solve_ranked(
    problem: CountProblem,
    walked: list[WalkedRun],
    ranked: list[Ranked],
    least: np.ndarray,
    weights: Mapping[str, int],
    node_start: np.ndarray,
    options: SolverOptions,
    budget: Budget,
    between: tuple[int, int] | None = None,
) -> tuple[list[Ranked], Counts | None]:
    """The count model over ``ranked`` solved by the search that suits it, its objective kept
    ``between`` (least, most) if given (a proof of none then ``Counts`` with status
    ``INFEASIBLE``); with the runs it was stated over (long runs get chords)."""
    weight = int(weights.get("contiguity", 0))
    term = ranks_term(problem, ranked, least, weight, int(weights.get("balance", 0)))
    start = None if weight or weights.get("balance") else heavy_first(problem, [run.shape for run in ranked])  # ``nodes`` alone: its ties by where it starts
    unbalanced = {**weights, "balance": 0}
    if long_runs(ranked):  # a product per level: chords where the relaxation puts its counts (``level_chords.py``)
        ranked = with_chords(problem, walked, ranked, weights, budget.check)
        term = ranks_term(problem, ranked, least, weight, int(weights.get("balance", 0)))
        return ranked, solve_counts(problem, [run.shape for run in ranked], unbalanced, node_start, options, budget, term, hint=start, tuning=LONG_RUN_SEARCH, between=between)
    if any(run.split is not None for run in ranked):  # a model its default search proves slowly (``kind_ranks.py``)
        return ranked, solve_counts(problem, [run.shape for run in ranked], unbalanced, node_start, options, budget, term, hint=start, tuning=SPLIT_SEARCH, between=between)
    if weight:
        return ranked, rows_first(problem, [run.shape for run in ranked], unbalanced, node_start, options, budget, term, hint=start, between=between)
    return ranked, solve_counts(problem, [run.shape for run in ranked], unbalanced, node_start, options, budget, term, hint=start, between=between)


def rows_first(
    problem: CountProblem,
    shapes: list[Shape],
    weights: Mapping[str, int],
    node_start: np.ndarray,
    options: SolverOptions,
    budget: Budget,
    term: Term,
    hint: Mapping[tuple[int, int, int], int] | None = None,
    between: tuple[int, int] | None = None,
) -> Counts | None:
    """``solve_counts`` with ``contiguity`` weighed: first with every linear row in CP-SAT's
    relaxation from the start (``ROWS_FIRST``), its work bounded by ``ROWS_FIRST_WORK`` (more on
    more patterns: ``ROWS_FIRST_PATTERNS``); where that proves nothing, rows added lazily, started
    from its answer, by LB-tree search (``LAZY_SEARCH``). Every run keeps the objective
    ``between`` (least, most) when given (a window, ``objective_windows.windowed``): a proof of none there is
    ``Counts`` with status ``INFEASIBLE``, and an answer at ``least`` is the window's best.

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
    Not within a window: the heavy-first answer lies far above it, so that run finds nothing
    there either (``contiguity:5:15``: 0.53 -> 0.43 s CPU, ``364:48``: 0.91 -> 0.65).

    The lazy run is kept between the first run's bound and one below its answer (CP-SAT's
    objective domain): an answer at that bound is then proven at once, and a proof that there is
    none proves the first answer. ``contiguity:29:16``'s first run ended at 44,679 over a bound of
    44,678; the lazy run found 44,678 after 0.41 deterministic s, 0.045 with the domain (1.1 ->
    0.3 s CPU); either end alone does not do it (0.09 and 0.42; ``contiguity:5:15``: 0.2 and
    1.05 against 0.11 for both)."""
    work = ROWS_FIRST_WORK * max(1.0, sum(shape.size for shape in shapes) / ROWS_FIRST_PATTERNS)
    first = solve_counts(problem, shapes, weights, node_start, options, budget, term, hint=hint, tuning={**ROWS_FIRST, "max_deterministic_time": work}, between=between)
    if first is not None and first.status in ("OPTIMAL", "INFEASIBLE"):
        return first
    far = first is None or first.value - first.bound > FAR_GAP * max(first.bound, 1)
    start = heavy_first(problem, shapes) if hint is None and between is None and far else None  # within a window, an answer far above it
    if start is not None:  # an answer far from its bound, or none: again from the heavy-first answer
        log.debug("every row in the relaxation found no answer near its bound: again from the heavy-first answer")
        started = solve_counts(problem, shapes, weights, node_start, options, budget, term, hint=start, tuning={**ROWS_FIRST, "max_deterministic_time": work}, between=between)
        if started is not None and started.status == "INFEASIBLE":
            return started
        if started is not None and (started.status == "OPTIMAL" or first is None or started.value < first.value):
            first = started if first is None else replace(started, bound=max(started.bound, first.bound))  # either run's bound holds
        if first is not None and first.status == "OPTIMAL":
            return first
    log.debug("every row in the relaxation proved nothing in its work: again, rows added lazily")
    if first is None:
        return solve_counts(problem, shapes, weights, node_start, options, budget, term, hint=hint, tuning=LAZY_SEARCH, between=between)
    least = first.bound if between is None else max(first.bound, between[0])  # nothing below the domain either
    if first.value <= least:  # the first answer met its bound as the work ran out
        return replace(first, status="OPTIMAL", bound=first.value)
    then = solve_counts(problem, shapes, weights, node_start, options, budget, term, hint=first.uses, tuning=LAZY_SEARCH, between=(least, first.value - 1))
    if then is None:
        return first
    if then.status == "INFEASIBLE":  # nothing better than the first answer: it is the best
        return replace(first, status="OPTIMAL", bound=first.value)
    return then


def ranks_term(problem: CountProblem, ranked: list[Ranked], least: np.ndarray, weight: int, balance: int) -> Term:
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
    """Each class on at least its fewest nodes (``pattern_program.fewest_nodes``): redundant for
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
