"""The windows of the objective: the count model with ``contiguity`` weighed answered window by
window of its objective, each model holding only the patterns an answer in its window may use.

Why a module of its own: ``weighed.py`` chooses among the ways of counting walked patterns
(every pattern, the maximal ones, those the relaxation keeps); this is the way that climbs
from the relaxation's bound, and what each of its windows refutes is a bound the others keep.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence

import numpy as np

from solver_placement._errors import counted
from solver_placement._solver.answer import Declined, PathName
from solver_placement._solver.counts.contiguity import Ranked
from solver_placement._solver.counts.model import NO_COUNT_ANSWER, Counts
from solver_placement._solver.counts.pattern_program import Relaxation
from solver_placement._solver.counts.patterns import MAX_PATTERNS
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.counts.ranked_runs import WalkedRun, described, fewest_walked
from solver_placement._solver.counts.ranked_search import solve_ranked
from solver_placement._solver.options import Budget, SolverOptions

log = logging.getLogger(__name__)

#: How much wider each window of the objective is than the one before (``windowed``).
WINDOW_GROWTH = 2
#: The ceiling of the window that holds every walked pattern, the last (``windowed``): above any
#: objective value (sums of weighed terms far below it). Windows go on until one holds every
#: pattern, its floor what the windows before proved, where they used to stop at three quarters
#: of the patterns for one model of every pattern with no domain: ``mixed kinds
#: contiguity:22:64``, 282 patterns, four windows proving nothing below 8,609; that model proved
#: 8,624 in 1.2 s, the window from 8,609 to 8,624 (213 patterns) in 0.04 s; the same model from
#: 8,609 up took 0.4 s. With ``contiguity``'s, the family's 40 cases at seeds 0, 60, 240 (best
#: of two, s CPU): 2.89, 5.74, 3.53 -> 2.97, 4.66, 2.99, the same answers. The worst it made:
#: ``contiguity:22:67``, 0.49 -> 0.65 s (windows of 1,482 and 2,020 of its 2,491 patterns before
#: the last proves 205,062, where one model of every pattern did).
OPEN_ABOVE = 2**60
#: What a way of counting the walked patterns found: the runs it kept, its counts, its bound, and
#: which model it was, in words for the notes.
Found = tuple[list[Ranked], Counts, int, str]


def windowed(
    problem: CountProblem, walked: list[WalkedRun], relaxation: Relaxation, weights: Mapping[str, int], node_start: np.ndarray, options: SolverOptions, budget: Budget
) -> Found | Declined:
    """The model's answer found window by window of the objective, from the relaxation's bound
    up, each window twice as wide as the one before (``WINDOW_GROWTH``; after a window that held
    no pattern more than the one before, up to where one joins: ``_leap``): each model holds only
    the patterns an answer in its window may use, and keeps the objective in the window (CP-SAT's
    objective domain). A window with no answer proves none anywhere in it, since any answer there
    uses only the patterns it holds, so the next starts above it; the first window with one
    holds the optimum, and CP-SAT's bound there holds for every answer; a window holding every
    pattern is the last, with no ceiling (``OPEN_ABOVE``). Declined once a window would hold more
    than the model holds (``MAX_PATTERNS``), or when a run finds nothing in its time.

    Why windows rather than one run over the patterns of least reduced cost, then every pattern:
    where the relaxation's bound sits below the optimum, those patterns hold no answer, and every
    pattern is a model CP-SAT proves slowly. ``contiguity:5:15`` (2,421 patterns, bound 80,443,
    optimum 80,453): windows of 41, 157, 329 and 412 patterns, the last proving 80,453,
    0.65-0.8 -> 0.43 s CPU; ``contiguity:4:75``, ``29:16`` and ``mixed kinds contiguity:39:73``:
    0.31-0.37 -> 0.07-0.14 s (alternating runs against the trial before). The tight domain itself
    helps: ``5:15``'s window up to 80,463 finds 80,453 at once; kept up to the next pattern's
    least value (82,940) its first answer is 80,468, proven only by a second run of 0.6 s.
    Past ``MAX_PATTERNS`` (``contiguity:28:253``, 4,337 patterns): the patterns of least reduced
    cost held an answer 2.8% above the optimum, and only the run over the 3,999 of least bound
    found and proved 354,605, after 1.2 s; windows prove it in 0.13 s CPU."""
    least = fewest_walked(problem, walked)
    low = first_low = math.ceil(relaxation.bound - relaxation.margin)
    high = low
    total = sum(run.patterns.shape[0] for run in walked)
    held, width = -1, 1  # the patterns the window before held, and this window's width
    while True:
        keep = relaxation.kept(high + 1)
        holding = sum(int(mask.sum()) for mask in keep)
        if holding > MAX_PATTERNS:
            return Declined(PathName.COUNTS, NO_COUNT_ANSWER, bound=low)  # every value below refuted
        last = holding == total  # every pattern: the last window, with no ceiling
        if last:
            high = OPEN_ABOVE
        ranked = [run.ranked(mask) for run, mask in zip(walked, keep)]
        log.debug("the count model with contiguity weighed: %s, %s, objective in [%d, %d]", counted(len(ranked), "run"), counted(sum(run.shape.size for run in ranked), "pattern"), low, high)
        ranked, counts = solve_ranked(problem, walked, ranked, least, weights, node_start, options, budget, between=(low, high))
        if counts is not None and counts.status == "INFEASIBLE" and not last:
            width *= WINDOW_GROWTH
            reach = high + width
            if holding == held:  # no pattern joined: up to where one does, the same model (``_leap``)
                reach = max(reach, _leap(relaxation, keep))
            low, high, held = high + 1, reach, holding
            continue
        if counts is None or counts.status == "INFEASIBLE":
            return Declined(PathName.COUNTS, NO_COUNT_ANSWER, bound=low)
        window = "at or above" if last else "in"
        where = f"{low:,}" if last else f"[{low:,}, {high:,}]"
        return ranked, counts, counts.bound, (
            f"counted over {holding:,} of {described(walked)}, window by window of the objective from the relaxation's bound "
            f"{first_low:,} up: the window {window} {where} holds the optimum, and every pattern an answer there may use"
        )  # fmt: skip


def _leap(relaxation: Relaxation, keep: Sequence[np.ndarray]) -> int:
    """The last value whose answers use only the patterns ``keep`` holds (one below the least value
    of an answer using one it leaves out; -1 where it leaves out none): where a window held no
    pattern more than the one before, the next one reaches that far, its model the same, only
    its domain wider. Why: where the relaxation's bound is far below the optimum in units,
    doubling from a width of one took 14 windows of the same 297 patterns after the set stopped
    growing (``contiguity:65536:0``, 986,683 above the bound: 20 windows, 0.35 s; 8 now, the last
    proving the optimum in 3 branches), and ``mixed kinds contiguity:7:0`` (12% above) passed the
    share of its patterns windows may hold, so every pattern was counted after them (0.27 ->
    0.19 s). A wider window from the start holds more patterns with a looser domain, which
    CP-SAT proves slower (``contiguity:5:15``, whose patterns grow with every window)."""
    beyond = relaxation.beyond(keep)
    return -1 if beyond == float("inf") else int(beyond) - 1


def first_kept(relaxation: Relaxation) -> list[np.ndarray]:
    """Per run, the patterns of least reduced cost a first model holds: those an answer one above
    the relaxation's bound may use. Where that is every pattern, a first window would be the whole
    model's first run, which ``_relaxed`` then runs once, not twice (``contiguity:364:48``)."""
    return list(relaxation.kept(math.ceil(relaxation.bound - relaxation.margin) + 1))


__all__ = ["Found", "OPEN_ABOVE", "WINDOW_GROWTH", "first_kept", "windowed"]
