"""A linear relaxation of the count model over whole-node patterns (``contiguity`` or
``balance`` weighed), to leave out patterns no better answer uses.

Why: such a model has one integer per whole-node pattern (2,400 for five components in a cycle
of exclusions on 8 GPUs, 49,347 for six), and CP-SAT spends seconds on them though an optimum
uses a handful. Linear programming duality says which ones can matter: for any dual values ``y``
of the relaxation's rows, every answer costs at least ``L(y) = y.b + sum over variables of
min(d lb, d ub)`` (``d = c - A^T y``, the reduced costs), and an answer that puts a pattern of
reduced cost ``d_p > 0`` on a node costs at least ``L(y) + d_p``. So once an answer of value
``V`` is known, the patterns with ``L(y) + d_p > V - 1`` (values are whole numbers) can be left
out of the search without losing any better answer, and the smallest such ``L(y) + d_p`` bounds
every answer that uses one (``Relaxation.beyond``).

The relaxation is the count model's rows over every pattern (each run's nodes, each class's
groups, each rise level's nodes) with its convex term ``N (N - 1) / 2`` stated by chords, which
is exact at integers (``contiguity.py``), and each class on at least its fewest nodes (a cut the
integers keep: without it the ``nodes`` term splits nodes and the bound is far off); pipeline
domains are dropped, which only lowers it. ``balance`` stays out of the program: every answer
pays at least the least peak the relaxation allows, and a heavier pattern its own load (its
floor). It is solved by column generation with GLOP (deterministic): the patterns enter as their
reduced costs turn negative, priced all at once with arrays, and chords as the level counts need
them (``pattern_program.py``). The bound is computed from the duals GLOP gives, over every
pattern, whatever their accuracy: it is a bound for any duals of the right signs (a margin
covers float64 sums). Where the optimum splits a node (a fractional ``nodes`` term), both sides
of that term's next whole value are solved, and the lesser bound kept (``_branched``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from solver_placement._solver.counts.pattern_program import MAX_ROUNDS, TOLERANCE, PatternProgram, Relaxation, RunColumns, generated
from solver_placement._solver.options import Budget


def relax(runs: Sequence[RunColumns], groups: Sequence[int], contiguity: int, balance: int, budget: Budget, nodes: int = 0) -> Relaxation | None:
    """The relaxation's bound and reduced costs (None when GLOP fails at once, then nothing is
    left out); ``groups[c]`` is class ``c``'s groups, ``contiguity``, ``balance`` and ``nodes``
    the terms' weights. With ``nodes`` weighed, where the optimum's ``nodes`` term is fractional
    the program is branched on it (``_branched``). ``balance`` (the most weighed GPUs on a node)
    stays out of the linear program: every answer pays it at least for the heavier of its
    patterns and the GPUs spread evenly over every node, so a pattern heavier than that adds the
    difference by itself (its floor).

    Where GLOP fails in a later round, the last round's duals give the bound: ``L(y)`` bounds
    every answer for any duals of the right signs, the later rounds only tighten it. Why: on
    4,096 nodes (``topology:4096:0``, 512 runs, 21,001 columns, objective scale 1.2e8) GLOP ends
    its third round ABNORMAL, and with no relaxation the count path declined and first fit
    answered."""
    lp = PatternProgram(runs, groups, contiguity)
    duals = generated(lp, budget)
    if duals is None:  # GLOP failed at once: nothing is left out
        return None
    found = lp.relaxation(duals)
    held = lp.pairs_held()
    if nodes and held is not None and abs(held - round(held)) > TOLERANCE * (1.0 + held):
        found = _branched(lp, found, held, budget)
    least_peak = _least_peak(runs, groups, budget) if balance else 0
    floors = tuple(balance * np.maximum(run.gpus - least_peak, 0).astype(np.float64) for run in runs)
    return Relaxation(found.bound + balance * least_peak, found.reduced, found.scale + balance * max(float(run.gpus.max()) for run in runs), floors)


def _branched(lp: PatternProgram, found: Relaxation, held: float, budget: Budget) -> Relaxation:
    """``found`` (the relaxation whose optimum holds a fractional ``held`` of the ``nodes`` term,
    unweighed) tightened by branching on that term: every answer has at most ``floor(held)`` or
    at least ``ceil(held)`` (the term is a whole number), so the lesser bound of the two programs
    bounds every answer, and a pattern's least value is the lesser of its two (each no lower
    than in ``found``: kept where higher). Why: weighed beside ``contiguity`` the relaxation
    splits a node between patterns where that saves ranks; ``mixed kinds contiguity:7:0``'s
    bound sat 8,801 below its optimum of 82,214 (a node is 10,000), so the windows of the
    objective (``objective_windows.windowed``) climbed it doubling from a width of one: 13 models, 0.2 s.
    Branched, the bound is 82,114: 7 models, 0.13 s."""
    sides = []
    for low, high in ((None, math.floor(held)), (math.ceil(held), None)):
        lp.bound_pairs(low, high)
        duals = generated(lp, budget)
        if duals is None:
            return found
        sides.append(lp.relaxation(duals))
    bound = min(side.bound for side in sides)
    least = [np.maximum(found.bound + own, np.minimum(*(side.bound + side.reduced[s] for side in sides))) for s, own in enumerate(found.reduced)]
    return replace(found, bound=max(bound, found.bound), reduced=tuple(np.maximum(cost - max(bound, found.bound), 0.0) for cost in least))


def _least_peak(runs: Sequence[RunColumns], groups: Sequence[int], budget: Budget) -> int:
    """A least ``balance`` peak of every answer: the least load whose patterns (those no heavier)
    still hold every group in the relaxation, found by halving among the loads from the weighed
    GPUs of all groups spread over every node, rounded up (a run's node is one node: with
    ``balance`` one part holds every class). An answer of a lower peak uses only lighter
    patterns, which the relaxation, a fortiori the integers, cannot fit."""
    per_group = np.zeros(len(groups), dtype=np.int64)
    for run in runs:
        for k, c in enumerate(run.part):
            per_group[c] = max(per_group[c], run.group_gpus[k])
    total = int(per_group @ np.array(groups, dtype=np.int64))
    spread = max(-(-total // max(sum(run.nodes for run in runs), 1)), int(per_group.max(initial=0)))
    loads = [int(load) for load in np.unique(np.concatenate([run.gpus for run in runs])) if load >= spread]
    if not loads:
        return spread
    low, high = 0, len(loads) - 1  # the answer lies in loads[low:high + 1], or is the heaviest
    while low < high:
        middle = (low + high) // 2
        if _fits(runs, groups, loads[middle], budget):
            high = middle
        else:
            low = middle + 1
    return max(spread, loads[low])


def _fits(runs: Sequence[RunColumns], groups: Sequence[int], peak: int, budget: Budget) -> bool:
    """Whether the relaxation holds every group with patterns of load ``peak`` at most: its
    artificial room alone priced, which a feasible relaxation leaves empty."""
    lighter = []
    for run in runs:
        mask = run.gpus <= peak
        flat = np.zeros(int(mask.sum()))
        lighter.append(RunColumns(run.part, run.patterns[mask], flat, flat.astype(np.int64), run.nodes, run.group_gpus, None if run.present is None else run.present[mask]))
    lp = PatternProgram(lighter, groups, 0)
    for _ in range(MAX_ROUNDS):
        if not lp.solved(budget, "bounding the balance term by its linear relaxation"):
            return True  # unknown: assume it fits (the weaker bound)
        if not lp.add_columns(lp.duals(), budget.check):
            break
    return bool(lp.solver.Objective().Value() <= 1e-6 * lp.scale)


__all__ = ["relax"]
