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
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import counted
from solver_placement._solver.answer import Answer, Declined, PathName, by_component
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.bounds.objective import objective_lower_bound
from solver_placement._solver.counts.contiguity import TooManyLocalStates, rank_bases
from solver_placement._solver.counts.kind_ranks import class_bases, kind_ranks
from solver_placement._solver.counts.layout import LayoutFailed, assignments
from solver_placement._solver.counts.level_chords import LONG_RUN
from solver_placement._solver.counts.local_costs import TooManyWalkStates
from solver_placement._solver.counts.maximal import maximal_tables, solve_maximal
from solver_placement._solver.counts.model import NO_COUNT_ANSWER
from solver_placement._solver.counts.objective_windows import Found, first_kept, windowed
from solver_placement._solver.counts.pattern_program import Relaxation
from solver_placement._solver.counts.patterns import MAX_PATTERNS, parts
from solver_placement._solver.counts.peak_levels import solve_balanced
from solver_placement._solver.counts.pricer import Pricer
from solver_placement._solver.counts.problem import CountProblem, in_progressions
from solver_placement._solver.counts.ranked_runs import WalkedRun, described, fewest_walked, walked_runs
from solver_placement._solver.counts.ranked_search import ranks_term, solve_ranked
from solver_placement._solver.counts.reduced_costs import relax
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.options import Budget, SolverOptions, SolveStatus
from solver_placement._solver.solution import Method
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec

log = logging.getLogger(__name__)

#: Most whole-node patterns the walks may list over all runs (arrays, priced at once); the model
#: itself holds at most ``MAX_PATTERNS`` of them, those the relaxation keeps.
MAX_WALKED_PATTERNS = 200_000
#: Whole-node patterns past which the relaxation chooses those the model holds.
RELAXED_PAST = MAX_PATTERNS
#: The same with ``contiguity`` weighed. There CP-SAT's root bound often is the optimum already
#: and its search spends its time finding an answer that meets it among thousands of integers,
#: so the few patterns of least reduced cost answer sooner (``contiguity:3:0``, 2,150 patterns on
#: 3 nodes: the relaxation's bound is the optimum, 199 patterns hold it, 0.19 -> 0.06 s CPU;
#: 3:32, 4:35 and 14:33 of 1,398-3,121 patterns: 0.14-0.28 -> 0.08-0.13). Below it the model is
#: proven as fast whole: 4:10 (741 patterns, bound one below the optimum) needs two models
#: relaxed (74 then 515 patterns) for the 0.1 s one model takes. Up to ``RELAXED_PAST`` the
#: patterns are taken in windows of the objective (``objective_windows.windowed``), after which, where those
#: prove nothing, every pattern is counted (``_solved``).
RANKED_RELAXED_PAST = 1_000
#: The same for a model of split patterns (``kind_ranks.py``: items of several kinds, a rank base
#: per kind), which CP-SAT proves several times slower than one of the same patterns whole (its
#: rises make more levels and chords): windows of the objective answer sooner there from a
#: hundred patterns (``mixed kinds contiguity:102:16``, 882 patterns: 0.46 -> 0.10 s CPU;
#: ``130:17``, 636: 0.41 -> 0.09; ``136:68``, 158: 0.49 -> 0.07). Where the relaxation's bound is
#: far below the optimum the windows cost more than they save (``46:19``, 253 patterns, 1.5%
#: below: 13 windows, 0.05 -> 0.14 s). The family's 20 cases at seeds 0, 60 and 240, in all
#: (best of two, s CPU): 3.05, 4.56, 2.73 with 1,000 (``RANKED_RELAXED_PAST``); 2.22, 3.56, 2.57
#: with 300; 2.17, 2.90, 2.33 with 100. Not where a split run is longer than
#: ``level_chords.LONG_RUN`` nodes: each window's model there takes the relaxation's chords (a
#: GLOP solve of its own), and the rank sums of 65,536 nodes put the optimum tens of thousands of
#: units above the bound (``mixed kinds contiguity:65536:0``: 15 windows, 1.25 -> 1.6 s;
#: ``16384:0`` unproven in its share).
SPLIT_RELAXED_PAST = 100
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
#: Most walked patterns the model holds all of where a class prices a preferred domain's
#: ``topology`` term (``spanning.py``, ``crossing.py``): the relaxation that chooses patterns
#: past ``RELAXED_PAST`` cannot see that term, so its bound for the patterns it leaves out is
#: the spec's without it. ``topology overlaps:861:362`` (4,968 patterns): the 3,892 of least
#: reduced cost held 12,580,000, bounded at 8,580,000 by those left out, and first fit answered
#: 14,980,000; every pattern proves 12,580,000 in 0.25 s.
PRICED_MOST = 20_000
#: Most patterns a run below an answer already found holds (``_solved``): past ``MAX_PATTERNS``,
#: since its window of the objective (from the answer's bound to one below it) makes the model
#: tight where one of as many patterns with no window is not. ``contiguity:4096:2``: the 81
#: patterns of least reduced cost held 376,834,602; the 3,999 of least bound then found it
#: again, unproven, and the window below it over all 4,337 ran out of time after them; at once
#: below it, all 4,337 prove it (1.0 s CPU). ``topology:516:102`` with GLOP's imprecise answers
#: withheld: 7,350,000 among 2,795 patterns; below it among 6,175, 5,170,000, proven (first fit
#: had answered at that bound after 6,880,000 among the 3,935 of least bound).
BELOW_MOST = 12_000


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
        found: Found | Declined = _leveled(problem, walked, weights, cluster, options, budget)
    else:
        found = _relaxed(problem, walked, weights, cluster, options, budget)
    if isinstance(found, Declined):
        return found
    ranked, counts, bound, model = found
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
    claimed = counts.value if _prices_domains(problem) else None
    return _answer(spec, requests, placed, weights, counts.status, bound, (_why_walked(weights), model), claimed)


def _prices_domains(problem: CountProblem) -> bool:
    """Whether a class prices a preferred domain's ``topology`` term in the model (``spanning.py``,
    ``crossing.py``), which neither the relaxation nor the spec the model is given sees."""
    return any(c.priced or c.joint for c in problem.classes)


def _why_walked(weights: Mapping[str, int]) -> str:
    """Why the count path walked every whole-node pattern, in words for the notes."""
    if weights.get("contiguity"):
        return "contiguity weighed: every whole-node pattern walked with its least rank cost, in runs of evenly rising ranks"
    if weights.get("balance"):
        return "balance weighed past the patterns listed shape by shape: every whole-node pattern walked"
    return "exclusions with no clique tree (a cycle of four or more with no chord), or too many patterns clique by clique: every whole-node pattern walked, each an independent set of the exclusions"


def _leveled(
    problem: CountProblem, walked: list[WalkedRun], weights: Mapping[str, int], cluster: Cluster, options: SolverOptions, budget: Budget
) -> Found | Declined:
    """No ranks weighed, ``balance`` weighed: every walked pattern in the model, ``balance``
    taken level by level (``peak_levels.py``), which proves what the relaxation's pruning could
    not (its bound ignores the peak's trade against nodes)."""
    ranked = [run.ranked(np.ones(run.patterns.shape[0], dtype=bool)) for run in walked]
    least = fewest_walked(problem, walked)
    log.debug("the count model over every whole-node pattern: %s, %s, balance level by level", counted(len(ranked), "run"), counted(sum(run.shape.size for run in ranked), "pattern"))
    node_start = np.concatenate(([0], np.cumsum(cluster.gpus_per_node)[:-1]))
    counts = solve_balanced(problem, [run.shape for run in ranked], weights, node_start, options, budget, ranks_term(problem, ranked, least, 0, 0))
    if counts is None:
        return Declined(PathName.COUNTS, NO_COUNT_ANSWER)
    return ranked, counts, counts.bound, f"counted over all {described(walked)}, balance level by level of its peak"


def _relaxed(
    problem: CountProblem, walked: list[WalkedRun], weights: Mapping[str, int], cluster: Cluster, options: SolverOptions, budget: Budget
) -> Found | Declined:
    """The model over the patterns the relaxation keeps past ``RELAXED_PAST`` (with
    ``contiguity`` weighed, past ``RANKED_RELAXED_PAST``, window by window of the objective
    first: ``objective_windows.windowed``; ``_solved``).
    Without ranks weighed (a part with no clique tree, a cycle of exclusions with no chord,
    past the patterns ``patterns.shapes`` lists; ``balance`` past ``LEVELED_MOST``) it comes
    here too: first over the maximal patterns of every walked one (``_maximal``); where that is not exact or the
    patterns are few, over every pattern up to ``RELAXED_PAST``, started from the heavy-first
    answer (``heavy_first.py``), which is what orders its ties (8,960 patterns on 201 nodes:
    0.36 s when all were in one model started elsewhere, 0.06 s here)."""
    node_start = np.concatenate(([0], np.cumsum(cluster.gpus_per_node)[:-1]))
    if not weights.get("contiguity") and not any(run.split is not None for run in walked):
        found = _maximal(problem, walked, weights, node_start, options, budget)
        if found is not None:
            return found
    total = sum(run.patterns.shape[0] for run in walked)
    relaxation = None
    past = min(RANKED_RELAXED_PAST, RELAXED_PAST) if weights.get("contiguity") else RELAXED_PAST
    if any(run.split is not None for run in walked) and not any(run.split is not None and run.shape.nodes.size > LONG_RUN for run in walked):
        past = min(past, SPLIT_RELAXED_PAST)
    whole = _prices_domains(problem) and total <= PRICED_MOST  # the relaxation cannot see their term
    if total > past and not whole:
        columns = [run.columns(problem, weights) for run in walked]
        relaxation = relax(columns, [c.groups for c in problem.classes], int(weights.get("contiguity", 0)), int(weights.get("balance", 0)), budget, int(weights.get("nodes", 0)))
    floor = 0  # what windows of the objective refuted: no answer below it
    if relaxation is not None and weights.get("contiguity") and not all(kept.all() for kept in first_kept(relaxation)):
        climbed = windowed(problem, walked, relaxation, weights, node_start, options, budget)
        if not isinstance(climbed, Declined):
            return climbed
        floor = climbed.bound or 0
        if total <= RELAXED_PAST:  # every pattern in one model
            log.debug("the windows of the objective answered nothing: every pattern")
            relaxation = None
    found = _solved(problem, walked, relaxation, weights, node_start, options, budget, floor)
    if relaxation is None or isinstance(found, Declined) or found[2] >= found[1].value:
        return found
    if weights.get("contiguity") or not any(c.levels for c in problem.classes) or total > PRICED_MOST:
        return found
    # required domains the relaxation cannot see (their sums per domain): unproven among the
    # patterns it kept, every pattern in one model (``topology:798:814``: 3,988 of 4,600 kept held
    # 4,720,000, bounded at 4,590,000; all of them prove 4,590,000 in 0.15 s, where first fit
    # answered 4,600,000). Only then: where those kept prove it, every pattern first cost up to
    # twice the time (``topology mixes:729:77``, ``topology:998:437``)
    log.debug("unproven among the patterns the relaxation kept, blind to required domains: every pattern")
    whole = _solved(problem, walked, None, weights, node_start, options, budget, found[2])
    return whole if not isinstance(whole, Declined) and whole[1].value <= found[1].value else found


def _maximal(
    problem: CountProblem, walked: list[WalkedRun], weights: Mapping[str, int], node_start: np.ndarray, options: SolverOptions, budget: Budget
) -> Found | Declined | None:
    """``nodes`` weighed, and ``balance`` level by level of the peak: the count model over every
    walked pattern, stated by the maximal ones (at each level, among those of load at most its
    peak) and what each run gives back (``maximal.py``: exact, its optimum the full model's);
    None where ``maximal.maximal_tables`` finds it not exact or the full model small, or past
    ``MAXIMAL_MOST`` walked patterns (the relaxation chooses among those).

    Why: on the cycles of exclusions of the ``ring`` benchmark (15,211 patterns on 8-GPU nodes)
    the relaxation kept 3,999 of them and CP-SAT took 0.07-0.3 s over those (a heavy-first start
    short of the optimum, or none); their 179 maximal patterns are proven in a few milliseconds.
    On 4,096 nodes (``ring:4096:0``) none was proven among the patterns kept, the count path
    declined and first fit answered (46,130,000); this model proves 46,100,000 in 0.07 s of CPU.
    Which of the equal optima it returns is the maximal model's (its low-ranks run, then the
    give-backs' order), not the heavy-first start's: placements move, objectives do not.
    With ``balance`` weighed past ``LEVELED_MOST``, the relaxation's 3,999 patterns of least
    reduced cost held no answer at all on a cycle of six exclusions (``balance:15:178``, 27,289
    patterns) and the per-node model proved nothing in its share: first fit answered 324,000
    above a bound of 315,000; at peak 15 its 3,181 maximal patterns prove 315,000 in 0.6 s."""
    if sum(run.patterns.shape[0] for run in walked) > MAXIMAL_MOST:
        return None
    ranked = [run.ranked(np.ones(run.patterns.shape[0], dtype=bool)) for run in walked]
    shapes = [run.shape for run in ranked]
    tables = maximal_tables(problem, shapes, bool(weights.get("balance")))
    if tables is None:
        return None
    log.debug("the count model over the maximal patterns of %s", counted(sum(shape.size for shape in shapes), "pattern"))
    counts = solve_maximal(problem, shapes, tables, weights, node_start, options, budget)
    if counts is None:
        return Declined(PathName.COUNTS, NO_COUNT_ANSWER)
    return ranked, counts, counts.bound, f"counted over the maximal ones of {described(walked)} and what each gives back (nodes alone weighed: exact)"


def _solved(
    problem: CountProblem,
    walked: list[WalkedRun],
    relaxation: Relaxation | None,
    weights: Mapping[str, int],
    node_start: np.ndarray,
    options: SolverOptions,
    budget: Budget,
    floor: int = 0,
) -> Found | Declined:
    """The model's answer over the patterns the relaxation keeps, and its bound over every
    pattern: first the patterns of least reduced cost (more while those alone hold no answer);
    when the answer found costs more than an answer with a pattern left out could, once more
    with every pattern that could do better, its objective kept below that answer and above its
    bound (CP-SAT's objective domain; up to ``BELOW_MOST`` patterns of least bound): none there
    proves it, one there is the optimum; never more than the model holds (those of least bound,
    declined unless proven). Without a relaxation, every pattern. ``floor``: a value no answer
    is below (what windows of the objective refuted before, ``objective_windows.py``), the least
    bound of an answer unproven among those of least bound (``contiguity:4096:2``: 376,690,301
    from the relaxation, 376,696,323 refuted).

    Why the window below the answer, where the next run used to search every value again: it
    is the question left (is there a better one?), and CP-SAT answers it in the domain's
    propagation and the answer's bound; ``contiguity:128:364``, ``42:136`` and ``195:891``
    (seeds 0-999, 5 s limit) were unproven after 2.3 s and are proven in about 1 s (with
    ``ranked_search.LAZY_SEARCH``)."""
    everything = [np.ones(run.patterns.shape[0], dtype=bool) for run in walked]
    least = fewest_walked(problem, walked)
    keep: list[np.ndarray] = everything if relaxation is None else first_kept(relaxation)
    unproven: Found | None = None  # the best answer of a narrower run: the next one searches below it
    while True:
        most = MAX_PATTERNS if unproven is None else BELOW_MOST  # below an answer, its window narrows the model
        capped = False
        if relaxation is not None:  # past the model's size: those of least bound, proven only if none left out could beat them
            cut, capped = relaxation.capped(keep, most)
            keep = list(cut)
        ranked = [run.ranked(mask) for run, mask in zip(walked, keep)]
        if sum(run.shape.size for run in ranked) > (most if relaxation is not None or not (_prices_domains(problem) or any(c.levels for c in problem.classes)) else PRICED_MOST):
            return Declined(PathName.COUNTS, f"more than {most:,} whole-node patterns, and no relaxation to choose among them")
        window = None if unproven is None else (unproven[2], unproven[1].value - 1)
        log.debug("the count model with contiguity weighed: %s, %s%s", counted(len(ranked), "run"), counted(sum(run.shape.size for run in ranked), "pattern"), "" if window is None else f", objective in {list(window)}")
        ranked, counts = solve_ranked(problem, walked, ranked, least, weights, node_start, options, budget, between=window)
        beyond = float("inf") if relaxation is None else relaxation.beyond(keep)
        held = sum(run.shape.size for run in ranked)
        if unproven is not None and (counts is None or counts.status == "INFEASIBLE"):  # none below it (or out of time)
            if counts is None:
                return unproven
            proven = unproven[1].value if beyond == float("inf") else min(unproven[1].value, int(beyond))
            return unproven[0], replace(unproven[1], status="OPTIMAL"), max(unproven[2], proven), f"{unproven[3]}; no answer below it among the {held:,} patterns of least bound"
        below = "" if unproven is None else f", below the answer found among the {sum(run.shape.size for run in unproven[0]):,} of least reduced cost"
        model = f"counted over all {described(walked)}" if relaxation is None else (
            f"counted over the {held:,} of {described(walked)} of least reduced cost in the relaxation{below}, proven where none left out could do better"
        )  # fmt: skip
        if counts is not None and (counts.value <= beyond or (counts.status != "OPTIMAL" and not capped)):
            return ranked, counts, max(floor, counts.bound if beyond == float("inf") else min(counts.bound, int(beyond))), model
        if counts is not None and (unproven is None or counts.value < unproven[1].value):  # with its gap to what a pattern left out could do
            unproven = (ranked, counts, max(floor, min(counts.bound, int(beyond))), model)
        if unproven is not None and unproven[2] >= unproven[1].value:  # the windows' floor meets it
            return unproven[0], replace(unproven[1], status="OPTIMAL"), unproven[2], unproven[3]
        if capped and (window is not None or unproven is None):  # the best among those of least bound (or of a narrower run: contiguity:30:156)
            log.debug("unproven among the %s patterns of least bound: the best answer found, bounded by those left out", f"{most:,}")
            return unproven if unproven is not None else Declined(PathName.COUNTS, f"more than {most:,} whole-node patterns a better answer may use, and no answer among those of least bound")
        if relaxation is None or beyond == float("inf") or budget.remaining() <= 0:
            return unproven if unproven is not None else Declined(PathName.COUNTS, NO_COUNT_ANSWER)
        # the patterns kept hold no answer: twice as many; else every pattern that could do better
        wider = list(relaxation.doubled(keep) if counts is None else relaxation.kept(counts.value))
        keep = [w | k for w, k in zip(wider, keep)] if any((w & ~k).any() for w, k in zip(wider, keep)) else everything


def _answer(
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    placed: Mapping[str, Assignment],
    weights: Mapping[str, int],
    status: str,
    model_bound: int,
    model: tuple[str, ...],
    claimed: int | None = None,
) -> Answer:
    """The answer with the spec's own objective of ``placed``; the bound is the model's plus what
    the components placed before counting cost (``preset.py``: free in the spec, fixed here), or
    the counting bound (``bounds/objective.py``) where that is higher.
    ``claimed``: the model's own value where it prices preferred domains that ``spec`` (their rules
    dropped) does not hold (``spanning.py``), which the caller checks on the spec itself.
    Proven when the model is and the layout met its bound (a node whose least-cost stacks break
    a stride's runs is laid out another way, and may cost more)."""
    assignments_ = by_component(spec, placed)
    value = objective_value(spec, spec.requests, assignments_, weights, {})
    preset = {name: spec.requests[name] for name, request in requests.items() if request.determined and not spec.requests[name].determined}
    fixed = objective_value(spec, preset, {name: placed[name] for name in preset}, {**weights, "balance": 0}, {}) if preset else 0  # their load is in the model's
    if claimed is not None:  # the model's value with preferred domains ``spec`` drops priced (``spanning.py``): the caller checks it on the spec itself
        value = claimed + fixed
    bound = min(model_bound + fixed, value)
    if bound < value:  # the counting bound where the model's is weaker (an answer among the patterns of least bound); read only then: it reads every candidate
        bound = max(bound, objective_lower_bound(spec, weights))
    proven = SolveStatus.OPTIMAL if status == "OPTIMAL" and value == bound else SolveStatus.FEASIBLE
    primary = value if claimed is not None else objective_value(spec, spec.requests, assignments_, {**weights, "contiguity": 0}, {})
    return Answer(PathName.COUNTS, Method.COUNTS, assignments_, proven, value, bound, primary=primary, model=model)
