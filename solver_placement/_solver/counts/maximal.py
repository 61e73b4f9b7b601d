"""The count model over the patterns no class can grow on, and what each shape gives back.

Why: the count model has one integer per (shape, whole-node pattern), and on nodes of GPUs and
robots whose GPUs carry memory (``item_memory.py``, the ``kinds memory`` benchmark) a shape
lists 400-1,400 patterns, 2,400-3,600 in all: CP-SAT spent 0.05-0.8 s finding and proving the
best ``nodes`` term and another 0.1-0.3 s (its whole work limit) moving GPUs to low ranks. Only
5% of those patterns are *maximal*: no class they hold could take one more group on the node.
Stated over those alone, with per shape and class the groups its nodes give back, the same
model is 20 times smaller (0.002-0.03 s on the same cases).

Why it is exact, where :func:`maximal_tables` finds it so: a node pattern is the groups of each
class on one node, and its ``nodes`` cost depends only on the classes it holds (its support).
Every shape's table lists every pattern its nodes hold and is closed under removing a group (a
layout less one process is a layout: checked, not assumed). Any pattern ``p`` is below a
maximal pattern ``q`` of the same support: raise one held class at a time while the table holds
it. So every answer of the count model is, per node, a maximal pattern of the same cost less
some groups of the classes it holds, at least one of each left; per shape and class, the groups
given back are at most the groups its maximal patterns hold less one per node holding the class.
Conversely any such counts and give-backs are an answer: the groups given back are spread over
the nodes of the shape that hold the class, each keeping one (:func:`given_back`), and every
pattern so lowered is in the table (closed under removal) with the same support, so the same
cost. Both terms the model weighs are linear in these counts: ``nodes`` by the maximal patterns
(support kept), and the second run's low ranks by each shape's GPUs, which the give-backs lower
by their GPUs. So both runs' optima are the full model's.

Not stated so (:func:`maximal_tables` returns None; the full model answers): ``balance`` (a
node's load is not its shape's), required or priced domains (sums per domain), tables per clique,
a further term or a cap (``peak_levels.py``, ``weighed.py``), a hint, and a table not closed under
removal. Below ``MIN_PATTERNS`` the full model answers in milliseconds and its answers are the
ones the digests record: kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._errors import InternalError
from solver_placement._solver.counts.model import COUNT_PARAMETERS, LOW_RANKS_WORK, Counts, add_hints
from solver_placement._solver.counts.patterns import Shape
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.options import Budget, SolverOptions, solve_model

#: Fewest whole-node patterns (over all shapes) for which the count model is stated over the
#: maximal ones: below it the full model proves its answer in milliseconds (856 patterns on
#: ``kinds memory:4:0``: 0.06 s, both runs), and small specs keep the answers recorded for them.
MIN_PATTERNS = 1_000


@dataclass(frozen=True)
class MaximalTable:
    """One shape's table: its patterns (rows), the positions of its maximal ones, and each
    pattern's position (to name a lowered pattern in the shape's own table)."""

    patterns: np.ndarray
    maximal: np.ndarray
    position: dict[tuple[int, ...], int]


def maximal_tables(problem: CountProblem, shapes: Sequence[Shape], weights: Mapping[str, int]) -> list[MaximalTable] | None:
    """Per shape, its table's maximal patterns, when the count model over them is exact (module
    docstring); None where it is not, or the full model is small (``MIN_PATTERNS``)."""
    if weights.get("balance") or sum(shape.size for shape in shapes) < MIN_PATTERNS:
        return None
    if any(c.levels or c.priced or c.joint for c in problem.classes):
        return None
    found = []
    for shape in shapes:
        if len(shape.tables) != 1:
            return None
        table = shape.tables[0]
        patterns = np.array(table.patterns, dtype=np.int64).reshape(len(table.patterns), len(table.columns))
        position = {pattern: p for p, pattern in enumerate(table.patterns)}
        unit = np.eye(patterns.shape[1], dtype=np.int64)
        lower = [tuple(row) in position for k in range(patterns.shape[1]) for row in (patterns[patterns[:, k] > 0] - unit[k]).tolist()]
        if not all(lower):
            return None  # not closed under removing a group: the full model states it
        grows = np.zeros(patterns.shape[0], dtype=bool)
        for k in range(patterns.shape[1]):
            held = np.flatnonzero(patterns[:, k] > 0)
            grows[held] |= np.array([tuple(row) in position for row in (patterns[held] + unit[k]).tolist()], dtype=bool)
        found.append(MaximalTable(patterns, np.flatnonzero(~grows), position))
    return found


def solve_maximal(
    problem: CountProblem,
    shapes: Sequence[Shape],
    tables: Sequence[MaximalTable],
    weights: Mapping[str, int],
    node_start: np.ndarray,
    options: SolverOptions,
    budget: Budget,
) -> Counts | None:
    """``model.solve_counts`` (no term, cap, hint or ``balance``) over the maximal patterns of
    :func:`maximal_tables` and each shape's groups given back: the best ``nodes`` term, then
    among its answers the GPUs on low ranks (the same two runs, the same optima); the counts
    named in the shapes' own tables. None when CP-SAT finds no answer in time."""
    model = cp_model.CpModel()
    uses: dict[tuple[int, int], cp_model.IntVar] = {}  # (shape, maximal pattern's position in its table)
    back: dict[tuple[int, int], cp_model.IntVar] = {}  # (shape, class's position in the part): groups given back
    in_class: dict[int, list[cp_model.LinearExprT]] = {c: [] for c in range(len(problem.classes))}
    costs: list[cp_model.LinearExprT] = []
    low_ranks: list[cp_model.LinearExprT] = []
    for s, (shape, table) in enumerate(zip(shapes, tables)):
        count, start = int(shape.nodes.size), int(node_start[shape.nodes[0]])
        patterns = table.patterns[table.maximal]
        classes = [problem.classes[c] for c in shape.part]
        gpus = patterns @ np.array([c.width * len(c.members) for c in classes], dtype=np.int64)
        cost = (patterns > 0) @ np.array([len(c.members) for c in classes], dtype=np.int64)
        row = [model.new_int_var(0, count, "") for _ in table.maximal]
        for p, var in zip(table.maximal.tolist(), row):
            uses[s, p] = var
        model.add(cp_model.LinearExpr.sum(row) == count)
        costs.append(cp_model.LinearExpr.weighted_sum(row, cost.tolist()))
        shape_gpus = [cp_model.LinearExpr.weighted_sum(row, gpus.tolist())]
        for k, c in enumerate(shape.part):
            holding = np.flatnonzero(patterns[:, k] > 0)
            if holding.size == 0:
                continue
            spare = int((patterns[holding, k] - 1).max()) * count
            given = back[s, k] = model.new_int_var(0, spare, "")
            model.add(given <= cp_model.LinearExpr.weighted_sum([row[i] for i in holding], (patterns[holding, k] - 1).tolist()))
            in_class[c] += [cp_model.LinearExpr.weighted_sum([row[i] for i in holding], patterns[holding, k].tolist()), -given]
            shape_gpus.append(-classes[k].width * len(classes[k].members) * given)
        low_ranks.append(start * cp_model.LinearExpr.sum(shape_gpus))
    for c, terms in in_class.items():
        model.add(cp_model.LinearExpr.sum(terms) == problem.classes[c].groups)
    weighted = int(weights.get("nodes", 0)) * cp_model.LinearExpr.sum(costs)
    model.minimize(weighted)
    one_worker = SolverOptions(options.time_limit_s, 1, options.seed)
    solver, status = solve_model(model, one_worker, budget, **COUNT_PARAMETERS)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    value, bound, proven = int(round(solver.objective_value)), int(round(solver.best_objective_bound)), solver.status_name(status)
    chosen = _values(solver, uses, back)
    if status == cp_model.OPTIMAL and len({int(node_start[shape.nodes[0]]) for shape in shapes}) > 1:
        model.add(weighted == value)
        add_hints(model, [*uses.values(), *back.values()], [*(chosen[0][key] for key in uses), *(chosen[1][key] for key in back)])
        model.minimize(cp_model.LinearExpr.sum(low_ranks))
        solver, moved = solve_model(model, one_worker, budget, **COUNT_PARAMETERS, max_deterministic_time=LOW_RANKS_WORK)
        if moved in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            chosen = _values(solver, uses, back)
    return Counts(given_back(tables, *chosen), proven, value, bound)


def _values(
    solver: cp_model.CpSolver, uses: Mapping[tuple[int, int], cp_model.IntVar], back: Mapping[tuple[int, int], cp_model.IntVar]
) -> tuple[dict[tuple[int, int], int], dict[tuple[int, int], int]]:
    """The run's nodes per (shape, maximal pattern) and groups given back per (shape, class)."""
    return {key: int(solver.value(var)) for key, var in uses.items()}, {key: int(solver.value(var)) for key, var in back.items()}


def given_back(tables: Sequence[MaximalTable], uses: Mapping[tuple[int, int], int], back: Mapping[tuple[int, int], int]) -> dict[tuple[int, int, int], int]:
    """Nodes per (shape, table 0, pattern) once each shape gives its groups back: class by
    class in the part's order, from the shape's patterns in their table's order, each node
    lowered to one group of the class before the next is touched (the fewest nodes changed,
    so the fewest distinct patterns for the layout)."""
    found: dict[tuple[int, int, int], int] = {}
    for s, table in enumerate(tables):
        held = {tuple(table.patterns[p].tolist()): n for (shape, p), n in sorted(uses.items()) if shape == s and n}
        for k in range(table.patterns.shape[1]):
            left = back.get((s, k), 0)
            for pattern in sorted(held):
                if not left:
                    break
                spare = pattern[k] - 1
                if spare <= 0:
                    continue
                nodes = held[pattern]
                whole = min(nodes, left // spare)  # nodes lowered to one group of the class
                part = left - whole * spare if whole < nodes else 0  # one more node lowered by the rest
                lowered = [(1, whole), (pattern[k] - part, 1 if part else 0)]
                held[pattern] -= whole + (1 if part else 0)
                for value, many in lowered:
                    if many:
                        key = (*pattern[:k], value, *pattern[k + 1 :])
                        held[key] = held.get(key, 0) + many
                left -= whole * spare + part
                if not held[pattern]:
                    del held[pattern]
            if left:
                raise InternalError(f"shape {s} gives back {left} more groups of class {k} than its nodes hold past one each")  # the model bounds them
        for pattern, nodes in sorted(held.items()):
            found[s, 0, table.position[pattern]] = nodes
    return found


__all__ = ["MIN_PATTERNS", "MaximalTable", "given_back", "maximal_tables", "solve_maximal"]
