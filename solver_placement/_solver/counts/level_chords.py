"""Chords of a long run's rise levels where the linear relaxation puts their counts, for the count
model whose patterns are split by rank base (``kind_ranks.py``).

Why: the cost of ordering a run's nodes is ``sum over rise levels of (step) x N (N - 1) / 2``
(``contiguity.add_term``), ``N`` a level's nodes. Up to ``contiguity.SECANTS`` nodes every chord
of that convex function is in the model and its linear relaxation is exact at integers; past it
the model has a product and ``SECANTS`` chords spread over the run, so between two of them the
relaxation lies under the function by up to ``step x w^2 / 8`` (``w``: their spacing, about 60 on
3,809 nodes, 1,024 on 65,536). CP-SAT then closes that gap by branching, level by level: on the
``mixed kinds contiguity`` family (a split model has 20-25 rise levels a run) 4,096 nodes took
9-15 s, 16,384 more than 25 s, 65,536 7.3 s, all past the count path's share of a 5 s limit.

What is added: the chords the run's linear relaxation needs at its optimum, per level. The
relaxation (GLOP, deterministic) holds every pattern of the walked runs (``ranked_runs.py``: the
split models here hold a few hundred), each run's nodes, each class's groups and its fewest
nodes (``pattern_program.fewest_nodes``), each level's count, and a pairs variable per level with
chords joining where a level's count passes under the convex function, until none does. Each
chord ``pairs >= k N - k (k + 1) / 2`` holds at every integer ``N``, so the model states the same
integers and the same optimum: only its relaxation is tighter, near the relaxation's own optimum
(the relaxation's optimum of the three models above, rounded up, was their integer optimum). With
every row in the relaxation from the start (``kind_ranks.SPLIT_SEARCH``) such a model spends its
time in LP solves (0.45-2.7 s); with rows added lazily CP-SAT proves them in 0.25-0.41 s (one
worker, load about 6 on 2 cores), so a model with a run past ``LONG_RUN`` nodes takes
``LONG_RUN_SEARCH``.

Nothing here grows with the node count: one program over the runs' patterns and levels, a few
chords a level.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

import numpy as np
from ortools.linear_solver import pywraplp
from ortools.sat.python import cp_model_helper

from solver_placement._solver.counts.contiguity import SECANTS, Ranked
from solver_placement._solver.counts.glop import glop
from solver_placement._solver.counts.pattern_program import RunColumns, fewest_nodes
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.counts.ranked_runs import WalkedRun

#: Nodes of a split run past which the model takes the relaxation's chords and ``LONG_RUN_SEARCH``.
#: Below it the spread chords lie close (16 nodes apart at most: ``SECANTS`` on 1,024) and the
#: model as it was proves sooner: on the family's cases of 71-965 nodes with a run past
#: ``SECANTS``, the chords and lazy rows took 1.1-4.5 times the branches (965 nodes: 0.036 ->
#: 0.108 s of CP-SAT; 206 nodes: 0.053 -> 0.302 s), and one case fewer (380 nodes: 0.177 ->
#: 0.144 s).
LONG_RUN = 1024
#: CP-SAT's search for a split model with a run past ``LONG_RUN`` nodes, chords added: branching
#: on its linear relaxation, its rows added as its solutions break them.
LONG_RUN_SEARCH: dict[str, object] = {"search_branching": cp_model_helper.SatParameters.LP_SEARCH, "add_lp_constraints_lazily": True}
#: Chords added on each side of every chord the relaxation needed: its optimum is one of many (the
#: model's other rows move it), and one neighbour each side proved 16,384 nodes in 3,531 branches
#: (0.25 s) where the chords alone took 8,335 (1.1 s); three each side, more rows, were no faster.
BESIDE = 1
#: Rounds of chord generation before the relaxation is left as it is (the chords found so far are
#: kept: any chord is valid).
MAX_ROUNDS = 40


def long_runs(ranked: list[Ranked]) -> bool:
    """Whether some run is split by rank base and longer than ``LONG_RUN`` nodes."""
    return any(run.split is not None and run.shape.nodes.size > LONG_RUN for run in ranked)


def with_chords(
    problem: CountProblem, walked: list[WalkedRun], ranked: list[Ranked], weights: Mapping[str, int], check: Callable[[str], None]
) -> list[Ranked]:
    """``ranked`` (the runs of ``walked``, in order) with the relaxation's chords on each run past
    ``SECANTS`` nodes (the shorter ones hold every chord already); as it is when GLOP finds no
    optimum (the model is the same, only slower to prove)."""
    columns = [run.columns(problem, weights) for run in walked]
    chords = relaxed_chords(columns, [c.groups for c in problem.classes], int(weights.get("contiguity", 0)), check)
    if chords is None:
        return ranked
    return [
        replace(run, chords=tuple(sorted(at.items()))) if run.shape.nodes.size > SECANTS and at else run
        for run, at in zip(ranked, chords, strict=True)
    ]


def relaxed_chords(runs: list[RunColumns], groups: list[int], contiguity: int, check: Callable[[str], None]) -> list[dict[int, tuple[int, ...]]] | None:
    """Per run, per rise level (its value) but the lowest, the chords ``k`` the relaxation's level
    counts passed under (``N`` in ``[k, k + 1]``) and ``BESIDE`` more on each side; None when
    GLOP finds no optimum."""
    solver = glop()
    infinity = solver.infinity()
    objective = solver.Objective()
    class_rows = [solver.Constraint(float(g), float(g)) for g in groups]
    least = fewest_nodes([(run.part, run.patterns) for run in runs], groups)
    presence = [solver.Constraint(float(n), infinity) for n in least.tolist()]
    levels_of: list[list[tuple[int, pywraplp.Variable, pywraplp.Variable]]] = []
    for run in runs:
        counts = [solver.NumVar(0.0, float(run.nodes), "") for _ in range(run.costs.size)]
        every = solver.Constraint(float(run.nodes), float(run.nodes))  # rows by coefficients: the natural API's sums cost 50 ms on 965 nodes
        for p, (var, cost) in enumerate(zip(counts, run.costs.tolist(), strict=True)):
            every.SetCoefficient(var, 1.0)
            objective.SetCoefficient(var, float(cost))
            for k in np.flatnonzero(run.patterns[p]).tolist():
                class_rows[run.part[k]].SetCoefficient(var, float(run.patterns[p, k]))
                presence[run.part[k]].SetCoefficient(var, 1.0)
        levels = run.levels
        objective.SetOffset(objective.offset() + contiguity * float(levels[-1]) * run.nodes * (run.nodes - 1) / 2)
        per_level = []
        for j in range(levels.size - 1):
            count = solver.NumVar(0.0, float(run.nodes), "")
            pairs = solver.NumVar(0.0, float(run.nodes * (run.nodes - 1) // 2), "")
            row = solver.Constraint(0.0, 0.0)
            row.SetCoefficient(count, 1.0)
            for p in np.flatnonzero(run.rises >= levels[j]).tolist():
                row.SetCoefficient(counts[p], -1.0)
            objective.SetCoefficient(pairs, float(contiguity * (levels[j] - levels[j + 1])))
            per_level.append((int(levels[j]), count, pairs))
        levels_of.append(per_level)
    objective.SetMinimization()
    chords: list[dict[int, set[int]]] = [{level: set() for level, _, _ in per_level} for per_level in levels_of]
    for _ in range(MAX_ROUNDS):
        check("placing the count model's chords where its linear relaxation puts the level counts")
        if solver.Solve() != pywraplp.Solver.OPTIMAL:
            return None
        values = [[(count.solution_value(), pairs.solution_value()) for _, count, pairs in per_level] for per_level in levels_of]
        added = 0
        for run, per_level, found, at in zip(runs, levels_of, values, chords, strict=True):
            for (level, count, pairs), (n, paired) in zip(per_level, found, strict=True):
                k = min(max(int(np.floor(n + 1e-9)), 0), max(run.nodes - 1, 0))
                if k in at[level] or paired >= k * n - k * (k + 1) / 2 - 1e-6 * (1.0 + abs(paired)):
                    continue
                chord = solver.Constraint(-k * (k + 1) / 2, infinity)
                chord.SetCoefficient(pairs, 1.0)
                chord.SetCoefficient(count, -float(k))
                at[level].add(k)
                added += 1
        if not added:
            break
    return [{level: tuple(sorted({k + d for k in ks for d in range(-BESIDE, BESIDE + 1)})) for level, ks in at.items() if ks} for at in chords]
