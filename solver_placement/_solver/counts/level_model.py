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
from solver_placement._solver.counts.level_relaxation import LevelBounds, LevelColumns, relax_level
from solver_placement._solver.counts.model import COUNT_PARAMETERS, LOW_RANKS_WORK, Counts
from solver_placement._solver.counts.patterns import Shape
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.counts.reduced_costs import fewest_nodes
from solver_placement._solver.options import Budget, SolverOptions, solve_model

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # a linear bound left open, as ``LinearExpr`` states it


def states_whole(problem: CountProblem, shapes: Sequence[Shape]) -> bool:
    """Whether this model states the count problem: whole-node patterns, no domains counted
    (``solve_counts`` states those)."""
    return all(len(shape.tables) == 1 for shape in shapes) and not any(c.levels or c.priced or c.joint for c in problem.classes)


class LevelModel:
    """The model, its variables per (shape, pattern) and the bounds each level sets.

    Built in CP-SAT's proto from the patterns' arrays, one list per constraint, rather than a
    variable and a term at a time: the same proto (the same variables, constraints, terms and
    order, zero coefficients left out as ``LinearExpr`` leaves them), in a third of the time
    (14,852 patterns of ``other hardware:331:11``: 0.2 s of Python became 0.06). Variables are
    kept as their proto indices (``self.index``, per shape)."""

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
        proto = self.model.proto
        nodes_weight = int(weights.get("nodes", 0))
        self.index: list[np.ndarray] = []  # per shape, its patterns' variables (proto indices)
        per_class: dict[int, tuple[list[np.ndarray], list[np.ndarray]]] = {}  # per class, its counts' indices and groups, shape by shape
        patterns_of = []
        self.columns: list[LevelColumns] = []
        self.groups = [c.groups for c in problem.classes]
        for shape, shape_loads in zip(shapes, loads):
            table = shape.tables[0]
            patterns = np.array(table.patterns, dtype=np.int64).reshape(len(table.patterns), len(table.columns))
            patterns_of.append((shape.part, patterns))
            members = np.array([len(problem.classes[shape.part[k]].members) for k in table.columns], dtype=np.int64)
            costs = (patterns > 0) @ members
            count = int(shape.nodes.size)
            first = len(proto.variables)
            for _ in range(patterns.shape[0]):
                proto.variables.add().domain.extend((0, count))
            row = np.arange(first, first + patterns.shape[0], dtype=np.int64)
            _linear(self.model, row, np.ones(row.size, dtype=np.int64), count, count)
            self.index.append(row)
            for k, c in ((k, shape.part[k]) for k in table.columns):
                held = np.flatnonzero(patterns[:, k])
                found = per_class.setdefault(c, ([], []))
                found[0].append(row[held])
                found[1].append(patterns[held, k])
            self.columns.append(LevelColumns(shape.part, patterns, nodes_weight * costs, shape_loads, count))
        for c, count_class in enumerate(problem.classes):
            held_vars, groups = per_class.get(c, ([], []))
            _linear(self.model, _joined(held_vars), _joined(groups), count_class.groups, count_class.groups)
        least = fewest_nodes(patterns_of, [c.groups for c in problem.classes])
        for c, (holding, _) in sorted(per_class.items()):
            if least[c] > 1:
                joined = _joined(holding)
                _linear(self.model, joined, np.ones(joined.size, dtype=np.int64), int(least[c]), INT64_MAX)
        paid = [(row, columns.costs) for row, columns in zip(self.index, self.columns)]
        self.objective = (_joined([row for row, _ in paid]), _joined([costs for _, costs in paid]))  # the ``nodes`` term: variables and coefficients
        self.cap = _linear(self.model, *self.objective, INT64_MIN, 2**62)  # its bounds set by each solve
        self._minimize(*self.objective)
        self.upper = [np.full(row.size, int(shape.nodes.size)) for shape, row in zip(shapes, self.index)]  # each pattern's bound as set
        self.hinted = False  # the greedy's hint is set before the first CP-SAT run that has none
        self.bounds: LevelBounds | None = None  # the bounds alone of ``least_rest``, made when first asked

    def _minimize(self, variables: np.ndarray, coefficients: np.ndarray) -> None:
        """The model's objective replaced by this sum (its zero terms left out)."""
        self.model.proto.clear_objective()
        objective = self.model.proto.objective
        kept = coefficients != 0
        objective.vars.extend(variables[kept].tolist())
        objective.coeffs.extend(coefficients[kept].tolist())
        objective.scaling_factor = 1

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
        for row, taken in zip(self.index, chosen):
            _hint_at(self.model, row, taken)

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

    def least_rest(self, peak: int) -> int | None:
        """``peak_levels.LeastRest``: the relaxation's bound at this peak, no answer sought
        (None when it has none: ``relax_level``), by one program kept from peak to peak
        (``level_relaxation.LevelBounds``)."""
        if self.bounds is None:
            self.bounds = LevelBounds(self.columns, self.groups)
        return self.bounds.bound([loads <= peak for loads in self.loads], self.budget.check)

    def _searched(self, allowed: Sequence[np.ndarray], cap: int) -> Counts | None:
        """CP-SAT with only the ``allowed`` patterns (per shape) and the objective at most ``cap``."""
        self._allow(allowed)
        _set(self._cap_domain(), -(2**62), cap)
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
        low = [(loads - shape.load) * int(node_start[shape.nodes[0]]) for shape, loads in zip(self.shapes, self.loads)]
        self._bounded(peak, value)
        self.model.clear_hints()  # the greedy's: this run starts from the best answer
        for s, row in enumerate(self.index):
            used = np.zeros(row.size, dtype=np.int64)
            for (shape, _, p), nodes in best.uses.items():
                if shape == s:
                    used[p] = nodes
            _hint_at(self.model, row, used)
        self._minimize(_joined(self.index), _joined(low))
        solver, status = solve_model(self.model, self.options, self.budget, **COUNT_PARAMETERS, max_deterministic_time=LOW_RANKS_WORK)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return best
        return Counts(self._uses(solver), best.status, best.value, best.bound)

    def _bounded(self, peak: int, value: int) -> None:
        """Bounds of the last run: loads at most ``peak``, the ``nodes`` value exactly ``value``."""
        self._allow([loads <= peak for loads in self.loads])
        _set(self._cap_domain(), value, value)

    def _allow(self, allowed: Sequence[np.ndarray]) -> None:
        """Each pattern's nodes at most its shape's when ``allowed``, else 0: set in the proto
        where they change (thousands of patterns, a few change from one level to the next)."""
        for shape, row, mask, upper in zip(self.shapes, self.index, allowed, self.upper):
            wanted = np.where(mask, int(shape.nodes.size), 0)
            for p in np.flatnonzero(wanted != upper).tolist():
                _set(self.model.proto.variables[int(row[p])].domain, 0, int(wanted[p]))
            upper[:] = wanted

    def _cap_domain(self) -> object:
        """The domain of the objective's cap, read from the proto where it sits."""
        return self.model.proto.constraints[self.cap].linear.domain

    def _hinted(self, answer: Sequence[np.ndarray]) -> None:
        """CP-SAT's hint replaced by ``answer`` (nodes per pattern, per shape)."""
        self.hinted = True
        self.model.clear_hints()
        for row, counts in zip(self.index, answer):
            _hint_at(self.model, row, counts)

    @staticmethod
    def _counted(answer: Sequence[np.ndarray]) -> dict[tuple[int, int, int], int]:
        """Nodes per (shape, table 0, pattern) of ``answer``, those used."""
        return {(s, 0, int(p)): int(counts[p]) for s, counts in enumerate(answer) for p in np.flatnonzero(counts).tolist()}

    def _uses(self, solver: cp_model.CpSolver) -> dict[tuple[int, int, int], int]:
        """Nodes per (shape, table 0, pattern) of the solver's answer, those used."""
        values = np.asarray(solver.response_proto.solution, dtype=np.int64)
        return self._counted([values[row] for row in self.index])


def _linear(model: cp_model.CpModel, variables: np.ndarray, coefficients: np.ndarray, low: int, high: int) -> int:
    """A linear constraint ``low <= sum(coefficients * variables) <= high`` added to the
    model's proto (its zero terms left out, as ``LinearExpr`` leaves them); its index."""
    kept = coefficients != 0
    proto = model.proto
    linear = proto.constraints.add().linear
    linear.vars.extend(variables[kept].tolist())
    linear.coeffs.extend(coefficients[kept].tolist())
    linear.domain.extend((low, high))
    return len(proto.constraints) - 1


def _joined(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """The arrays one after another (empty: an empty array of integers)."""
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)


def _hint_at(model: cp_model.CpModel, variables: np.ndarray, values: np.ndarray) -> None:
    """``model.add_hint`` of each variable (a proto index) and its value, in order."""
    hint = model.proto.solution_hint
    hint.vars.extend(variables.tolist())
    hint.values.extend(np.asarray(values, dtype=np.int64).tolist())


def _set(domain: object, low: int, high: int) -> None:
    """A proto domain of one interval (as every bound here is made) set to ``[low, high]``."""
    if len(domain) != 2:  # type: ignore[arg-type]  # an interval, as built: never user input
        raise InternalError("a bound of the count model's level model is not one interval")
    domain[0], domain[1] = low, high  # type: ignore[index]
