"""A few nodes: one whole-node pattern chosen per node, the count model's other form.

Why: the count model counts the nodes of each pattern, which is small whatever the node count
but leaves CP-SAT's linear relaxation loose when nodes are few and patterns many (three nodes,
9,247 patterns of six components in a ring of exclusions: no proof of the fewest nodes under
a peak of 21 GPUs in 3.5 s). Chosen per node, the same patterns are a table constraint per node
(the pattern's index, its groups per class and its ``nodes`` cost), alike nodes ordered by
pattern index (so no two orders of one layout are searched), and CP-SAT proves the same
question in 0.4 s. Its size is the nodes times the patterns, so it is used only while that
stays under ``MOST_CELLS``; both forms answer the same (``peak_levels.LevelSolve``).

It states what the count model states over shapes of whole-node patterns (one table each):
each class's groups, the ``nodes`` term, a peak and a cap on the objective. Required or priced
domains are counted per domain by the count model only (``applies`` says no).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._solver.counts.model import Counts
from solver_placement._solver.counts.patterns import Shape
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.options import Budget, SolverOptions, solve_model

#: Most (node, pattern) pairs the per-node tables hold, summed over nodes: past it the count
#: model's one integer per pattern is the smaller model, and its relaxation tight enough.
MOST_CELLS = 60_000
#: Most nodes the per-node model chooses for: past this many, alike nodes make the count model
#: (one integer per pattern, no symmetry) the better form.
MOST_NODES = 4


def applies(problem: CountProblem, shapes: Sequence[Shape]) -> bool:
    """Whether the per-node model states this count problem: whole-node patterns, no domains
    counted, few nodes and cells."""
    if any(len(shape.tables) != 1 for shape in shapes) or any(c.levels or c.priced is not None for c in problem.classes):
        return False
    nodes = sum(int(shape.nodes.size) for shape in shapes)
    return nodes <= MOST_NODES and sum(int(shape.nodes.size) * len(shape.tables[0].patterns) for shape in shapes) <= MOST_CELLS


def solve_per_node(
    problem: CountProblem,
    shapes: Sequence[Shape],
    loads: Sequence[np.ndarray],
    weights: Mapping[str, int],
    options: SolverOptions,
    budget: Budget,
    peak_at_most: int | None,
    below: int | None,
) -> Counts | None:
    """The best counts of the ``nodes`` term (``balance`` is ``peak_levels.py``'s) with every
    node's load (``loads``: per shape and pattern) at most ``peak_at_most`` and the objective
    under ``below`` (either None: no limit); ``INFEASIBLE`` counts when proven none, None when
    none in time."""
    model = cp_model.CpModel()
    chosen: list[tuple[int, list[cp_model.IntVar]]] = []
    groups: dict[int, list[cp_model.IntVar]] = {}
    costs: list[cp_model.LinearExprT] = []
    for s, shape in enumerate(shapes):
        table = shape.tables[0]
        patterns = np.array(table.patterns, dtype=np.int64).reshape(len(table.patterns), len(table.columns))
        fits = np.flatnonzero(loads[s] <= peak_at_most) if peak_at_most is not None else np.arange(patterns.shape[0])
        if fits.size == 0:
            return Counts({}, "INFEASIBLE", 0, 0)
        rows = [tuple(row) for row in patterns[fits].tolist()]
        previous = None
        for _ in range(int(shape.nodes.size)):
            held = [model.new_int_var(0, int(patterns[:, k].max(initial=0)), "") for k in range(len(table.columns))]
            model.add_allowed_assignments(held, rows)
            for k, var in zip(table.columns, held):
                c = shape.part[k]
                groups.setdefault(c, []).append(var)
                present = model.new_bool_var("")
                model.add(var >= 1).only_enforce_if(present)
                model.add(var == 0).only_enforce_if(~present)
                costs.append(len(problem.classes[c].members) * present)
            if previous is not None and held:
                model.add(previous >= held[0])  # alike nodes: fewer orders of one layout searched
            previous = held[0] if held else None
            chosen.append((s, held))
    for c, count_class in enumerate(problem.classes):
        model.add(cp_model.LinearExpr.sum(groups.get(c, [])) == count_class.groups)
    weighted = int(weights.get("nodes", 0)) * cp_model.LinearExpr.sum(costs)
    if below is not None:
        model.add(weighted <= below - 1)
    model.minimize(weighted)
    solver, status = solve_model(model, SolverOptions(options.time_limit_s, 1, options.seed), budget)  # presolve on: it expands the tables
    if status == cp_model.INFEASIBLE:
        return Counts({}, "INFEASIBLE", 0, 0)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    uses: dict[tuple[int, int, int], int] = {}
    for s, held in chosen:
        index = {pattern: p for p, pattern in enumerate(shapes[s].tables[0].patterns)}  # patterns are distinct
        key = (s, 0, index[tuple(int(solver.value(var)) for var in held)])
        uses[key] = uses.get(key, 0) + 1
    return Counts(uses, solver.status_name(status), int(round(solver.objective_value)), int(round(solver.best_objective_bound)))
