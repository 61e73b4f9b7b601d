"""The count model over whole-node patterns, built once and solved at every peak level.

Why: ``peak_levels.py`` asks the same count model one question per peak level, and building
it is most of the time (0.2-0.7 s for 5,000 patterns, each level, while CP-SAT answers in
0.03-0.2 s). Only two things change from level to level: which patterns may be used (those
above the peak are held at 0) and the cap on the objective. Both are bounds in the model's
proto, set in place before each solve, so the model is built once.

It is ``model.solve_counts``'s model for what ``states_whole`` admits (one table of whole-node
patterns per shape, no domains counted): nodes per pattern summing to each shape's nodes, each
class's groups, the ``nodes`` term; with each class on at least its fewest nodes, a cut the
integers keep that lifts CP-SAT's relaxation to whole nodes (``reduced_costs.fewest_nodes``).
Once the levels are done, :meth:`LevelModel.low_ranks` moves GPUs to low ranks at the best
value, as ``solve_counts``' second run does.

Each level asks the model's linear relaxation first (``level_relaxation.py``): its bound at or
past the cap proves the level empty, and its rounded answer at its bound is the level's optimum,
with no CP-SAT run (on 331 nodes of 14,852 patterns, ``other hardware``, every level so: CP-SAT
had needed 7.3 s to find the answer at the first level's bound). Otherwise CP-SAT searches with
the rounded answer as its hint, the cap below it, and only the patterns the relaxation's reduced
costs leave in an answer that cheap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._errors import InternalError
from solver_placement._solver.counts.level_relaxation import LevelColumns, relax_level
from solver_placement._solver.counts.model import COUNT_PARAMETERS, LOW_RANKS_WORK, Counts, add_hints
from solver_placement._solver.counts.patterns import Shape
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.counts.reduced_costs import fewest_nodes
from solver_placement._solver.options import Budget, SolverOptions, solve_model


def states_whole(problem: CountProblem, shapes: Sequence[Shape]) -> bool:
    """Whether this model states the count problem: whole-node patterns, no domains counted
    (``solve_counts`` states those)."""
    return all(len(shape.tables) == 1 for shape in shapes) and not any(c.levels or c.priced or c.joint for c in problem.classes)


class LevelModel:
    """The model, its variables per (shape, pattern) and the bounds each level sets."""

    def __init__(
        self,
        problem: CountProblem,
        shapes: Sequence[Shape],
        loads: Sequence[np.ndarray],
        weights: Mapping[str, int],
        options: SolverOptions,
        budget: Budget,
    ) -> None:
        self.shapes = shapes
        self.loads = loads
        self.options = SolverOptions(options.time_limit_s, 1, options.seed)
        self.budget = budget
        self.model = cp_model.CpModel()
        self.uses: list[list[cp_model.IntVar]] = []
        per_class: dict[int, tuple[list[cp_model.IntVar], list[int]]] = {}
        present: dict[int, list[cp_model.IntVar]] = {}
        paid: tuple[list[cp_model.IntVar], list[int]] = ([], [])
        patterns_of = []
        self.columns: list[LevelColumns] = []
        self.groups = [c.groups for c in problem.classes]
        for shape, shape_loads in zip(shapes, loads):
            table = shape.tables[0]
            patterns = np.array(table.patterns, dtype=np.int64).reshape(len(table.patterns), len(table.columns))
            patterns_of.append((shape.part, patterns))
            members = np.array([len(problem.classes[shape.part[k]].members) for k in table.columns], dtype=np.int64)
            costs = ((patterns > 0) @ members).tolist()
            count = int(shape.nodes.size)
            row = [self.model.new_int_var(0, count, "") for _ in range(patterns.shape[0])]
            self.model.add(cp_model.LinearExpr.sum(row) == count)
            self.uses.append(row)
            for k, c in ((k, shape.part[k]) for k in table.columns):
                held = np.flatnonzero(patterns[:, k])
                found = per_class.setdefault(c, ([], []))
                found[0].extend(row[p] for p in held.tolist())
                found[1].extend(patterns[held, k].tolist())
                present.setdefault(c, []).extend(row[p] for p in held.tolist())
            paying = [p for p, cost in enumerate(costs) if cost]
            paid[0].extend(row[p] for p in paying)
            paid[1].extend(int(weights.get("nodes", 0)) * costs[p] for p in paying)
            self.columns.append(
                LevelColumns(shape.part, patterns, int(weights.get("nodes", 0)) * np.array(costs, dtype=np.int64), shape_loads, count)
            )
        for c, count_class in enumerate(problem.classes):
            held_vars, groups = per_class.get(c, ([], []))
            self.model.add(cp_model.LinearExpr.weighted_sum(held_vars, groups) == count_class.groups)
        least = fewest_nodes(patterns_of, [c.groups for c in problem.classes])
        for c, holding in sorted(present.items()):
            if least[c] > 1:
                self.model.add(cp_model.LinearExpr.sum(holding) >= int(least[c]))
        self.upper = [np.full(len(row), int(shape.nodes.size)) for shape, row in zip(shapes, self.uses)]  # each pattern's bound as set
        self.hinted = False  # the greedy's hint is set before the first CP-SAT run that has none
        self.objective = cp_model.LinearExpr.weighted_sum(*paid)
        self.cap = self.model.add(self.objective <= 2**62)  # its bounds set by each solve
        self.model.minimize(self.objective)

    def _hint(self) -> None:
        """A first answer for CP-SAT to start from, when a greedy finds one: shape by shape,
        each node takes the pattern that covers the most GPUs still asked without exceeding what
        any class still asks (first fit over patterns). Without it CP-SAT found no answer in a
        second on 739 nodes and 15,211 patterns; the hint changes no answer, only where the
        search starts. Set once, before the first run that has no hint of the relaxation's."""
        self.hinted = True
        left = np.array(self.groups, dtype=np.int64)
        chosen: list[np.ndarray] = []
        for columns in self.columns:
            part, patterns = columns.part, columns.patterns
            index = np.array(part, dtype=np.int64)
            taken = np.zeros(patterns.shape[0], dtype=np.int64)
            weight = columns.loads - columns.loads[0]  # each pattern's weighed GPUs (the empty one's load is the shape's placed first)
            nodes = columns.nodes
            while nodes:
                fits = (patterns <= left[index]).all(axis=1)
                best = int(np.argmax(np.where(fits, weight, -1)))  # the empty pattern always fits
                asked = patterns[best] > 0
                times = min(nodes, int((left[index][asked] // patterns[best][asked]).min())) if asked.any() else nodes  # as often as it fits
                taken[best] += times
                left[index] -= times * patterns[best]
                nodes -= times
            chosen.append(taken)
        if left.any():
            return  # the greedy left groups over: no hint
        for row, taken in zip(self.uses, chosen):
            add_hints(self.model, row, taken.tolist())

    def solve(self, peak: int | None, below: int | None) -> Counts | None:
        """``peak_levels.LevelSolve``: the best counts with every node's load at most ``peak``
        and the objective under ``below`` (None: no limit)."""
        allowed = [loads <= peak if peak is not None else np.ones(loads.size, dtype=bool) for loads in self.loads]
        relaxed = relax_level(self.columns, self.groups, allowed, below, self.budget.check)
        if relaxed is None:
            return self._searched(allowed, 2**62 if below is None else below - 1)
        if below is not None and relaxed.bound >= below:
            return Counts({}, "INFEASIBLE", 0, 0)  # the relaxation proves no answer under the cap
        answer = relaxed.answer if relaxed.answer is not None and (below is None or relaxed.value < below) else None
        if answer is not None and relaxed.value <= relaxed.bound:
            return Counts(self._counted(answer), "OPTIMAL", relaxed.value, relaxed.value)  # its rounding meets its bound
        cap = min(2**62 if answer is None else relaxed.value, 2**62 if below is None else below) - 1  # what a better answer may cost
        if answer is not None:
            self._hinted(answer)
        found = self._searched([mask & needed for mask, needed in zip(allowed, relaxed.needed(cap))], cap)  # none else in an answer of at most ``cap``
        if answer is not None and (found is None or found.status == "INFEASIBLE"):  # none cheaper than the rounding (or none found in time)
            proven = found is not None
            return Counts(self._counted(answer), "OPTIMAL" if proven else "FEASIBLE", relaxed.value, relaxed.value if proven else relaxed.bound)
        return found

    def _searched(self, allowed: Sequence[np.ndarray], cap: int) -> Counts | None:
        """CP-SAT with only the ``allowed`` patterns (per shape) and the objective at most ``cap``."""
        self._allow(allowed)
        _set(self.cap.proto.linear.domain, -(2**62), cap)
        if not self.hinted:
            self._hint()
        solver, status = solve_model(self.model, self.options, self.budget, **COUNT_PARAMETERS)
        if status == cp_model.INFEASIBLE:
            return Counts({}, "INFEASIBLE", 0, 0)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return None
        return Counts(self._uses(solver), solver.status_name(status), int(round(solver.objective_value)), int(round(solver.best_objective_bound)))

    def low_ranks(self, best: Counts, peak: int, value: int, node_start: np.ndarray) -> Counts:
        """``best`` with its GPUs moved to low ranks (each pattern's GPUs times its shape's first
        rank, least) at the same ``nodes`` value and a peak no higher; ``best`` itself when that
        run finds nothing in time, or when every shape has one first rank (every answer's sum is
        then that rank times the GPUs asked: nothing to order, as in ``model.solve_counts``).
        The model's objective is replaced: call it last."""
        if len({int(node_start[shape.nodes[0]]) for shape in self.shapes}) < 2:
            return best
        low: list[tuple[int, cp_model.IntVar]] = []
        for shape, row, loads in zip(self.shapes, self.uses, self.loads):
            start = int(node_start[shape.nodes[0]])
            low.extend(((int(load) - shape.load) * start, var) for var, load in zip(row, loads.tolist()))
        self._bounded(peak, value)
        self.model.clear_hints()  # the greedy's: this run starts from the best answer
        for s, row in enumerate(self.uses):
            add_hints(self.model, row, (best.uses.get((s, 0, p), 0) for p in range(len(row))))
        self.model.minimize(cp_model.LinearExpr.weighted_sum([var for _, var in low], [weight for weight, _ in low]))
        solver, status = solve_model(self.model, self.options, self.budget, **COUNT_PARAMETERS, max_deterministic_time=LOW_RANKS_WORK)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return best
        return Counts(self._uses(solver), best.status, best.value, best.bound)

    def _bounded(self, peak: int, value: int) -> None:
        """Bounds of the last run: loads at most ``peak``, the ``nodes`` value exactly ``value``."""
        self._allow([loads <= peak for loads in self.loads])
        _set(self.cap.proto.linear.domain, value, value)

    def _allow(self, allowed: Sequence[np.ndarray]) -> None:
        """Each pattern's nodes at most its shape's when ``allowed``, else 0: set in the proto
        where they change (thousands of patterns, a few change from one level to the next)."""
        for shape, row, mask, upper in zip(self.shapes, self.uses, allowed, self.upper):
            wanted = np.where(mask, int(shape.nodes.size), 0)
            for p in np.flatnonzero(wanted != upper).tolist():
                _set(self.model.proto.variables[row[p].index].domain, 0, int(wanted[p]))
            upper[:] = wanted

    def _hinted(self, answer: Sequence[np.ndarray]) -> None:
        """CP-SAT's hint replaced by ``answer`` (nodes per pattern, per shape)."""
        self.hinted = True
        self.model.clear_hints()
        for row, counts in zip(self.uses, answer):
            add_hints(self.model, row, counts.tolist())

    @staticmethod
    def _counted(answer: Sequence[np.ndarray]) -> dict[tuple[int, int, int], int]:
        """Nodes per (shape, table 0, pattern) of ``answer``, those used."""
        return {(s, 0, int(p)): int(counts[p]) for s, counts in enumerate(answer) for p in np.flatnonzero(counts).tolist()}

    def _uses(self, solver: cp_model.CpSolver) -> dict[tuple[int, int, int], int]:
        """Nodes per (shape, table 0, pattern) of the solver's answer, those used."""
        found: dict[tuple[int, int, int], int] = {}
        for s, row in enumerate(self.uses):
            for p, var in enumerate(row):
                if value := int(solver.value(var)):
                    found[s, 0, p] = value
        return found


def _set(domain: object, low: int, high: int) -> None:
    """A proto domain of one interval (as every bound here is made) set to ``[low, high]``."""
    if len(domain) != 2:  # type: ignore[arg-type]  # an interval, as built: never user input
        raise InternalError("a bound of the count model's level model is not one interval")
    domain[0], domain[1] = low, high  # type: ignore[index]
