"""The count model over whole-node patterns, built once and solved at every peak level.

Why: ``peak_levels.py`` asks the same count model one question per peak level, and building
it is most of the time (0.2-0.7 s for 5,000 patterns, each level, while CP-SAT answers in
0.03-0.2 s). Only two things change from level to level: which patterns may be used (those
above the peak are held at 0) and the cap on the objective. Both are bounds in the model's
proto, set in place before each solve, so the model is built once.

It is ``model.solve_counts``'s model for what ``states_whole`` admits (one table of whole-node
patterns per shape, no domains counted): nodes per pattern summing to each shape's nodes, each
class's groups, the ``nodes`` term; with each class on at least its fewest nodes, a cut the
integers keep that lifts CP-SAT's relaxation to whole nodes (``pattern_program.fewest_nodes``).
Once the levels are done, :meth:`LevelModel.low_ranks` moves GPUs to low ranks at the best
value, as ``solve_counts``' second run does, in a model of its own over the few patterns an
answer of that value may use.

Each level asks the model's linear relaxation first (``level_relaxation.py``): its bound at or
past the cap proves the level empty, and its rounded answer at its bound is the level's optimum,
with no CP-SAT run (on 331 nodes of 14,852 patterns, ``other hardware``, every level so: CP-SAT
had needed 7.3 s to find the answer at the first level's bound). Otherwise CP-SAT searches with
the rounded answer as its hint, the cap below it, and only the patterns the relaxation's reduced
costs leave in an answer that cheap. So the model over every pattern is built when a level first
needs CP-SAT, not before: where the relaxation answers every level, it is never built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._errors import InternalError
from solver_placement._solver.counts.count_parameters import COUNT_PARAMETERS, LOW_RANKS_WORK
from solver_placement._solver.counts.level_relaxation import LevelBound, LevelBounds, LevelColumns, relax_level
from solver_placement._solver.counts.model import Counts
from solver_placement._solver.counts.pattern_program import fewest_nodes
from solver_placement._solver.counts.patterns import Shape
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.lean_model import LeanCpModel
from solver_placement._solver.options import Budget, SolverOptions, solve_model

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # a linear bound left open, as ``LinearExpr`` states it
#: CP-SAT's deterministic work for an answer at the relaxation's bound among the patterns its
#: column generation brought in (``LevelModel._at_bound``): a few hundred patterns, most found
#: in a fraction of it; past it the run over every pattern decides, as before.
AT_BOUND_WORK = 0.05


def states_whole(problem: CountProblem, shapes: Sequence[Shape]) -> bool:
    """Whether this model states the count problem: whole-node patterns, no domains counted
    (``solve_counts`` states those)."""
    return all(len(shape.tables) == 1 for shape in shapes) and not any(c.levels or c.priced or c.joint for c in problem.classes)


class LevelModel:
    """The levels' model: the patterns as the relaxation sees them (``columns``), the CP-SAT
    model over every pattern (``stated``, built when a level first needs CP-SAT) and the bounds
    each level sets in it."""

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
        nodes_weight = int(weights.get("nodes", 0))
        self.columns: list[LevelColumns] = []
        self.groups = [c.groups for c in problem.classes]
        for shape, shape_loads in zip(shapes, loads):
            table = shape.tables[0]
            patterns = np.array(table.patterns, dtype=np.int64).reshape(len(table.patterns), len(table.columns))
            members = np.array([len(problem.classes[shape.part[k]].members) for k in table.columns], dtype=np.int64)
            self.columns.append(LevelColumns(shape.part, patterns, nodes_weight * ((patterns > 0) @ members), shape_loads, int(shape.nodes.size)))
        self.least = fewest_nodes([(columns.part, columns.patterns) for columns in self.columns], self.groups)
        self.upper = [np.full(columns.costs.size, columns.nodes) for columns in self.columns]  # each pattern's bound as set
        self.hinted = False  # the greedy's hint is set before the first CP-SAT run that has none
        self.bounds: LevelBounds | None = None  # the bounds alone of ``least_rest``, made when first asked
        self._stated: _Stated | None = None  # the CP-SAT model over every pattern, made when first searched

    @property
    def stated(self) -> _Stated:
        """The CP-SAT model over every pattern, built when a level first needs CP-SAT: where the
        relaxation answers every level (``other hardware:331:11``: 14,852 patterns, every level
        so), it is never built."""
        if self._stated is None:
            self._stated = _Stated(self.columns, self.groups, self.least, [np.arange(columns.costs.size) for columns in self.columns])
        return self._stated

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
        self.stated.hint(chosen)

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
            return Counts(_counted(answer), "OPTIMAL", relaxed.value, relaxed.value)  # its rounding meets its bound
        cap = min(2**62 if answer is None else relaxed.value, 2**62 if below is None else below) - 1  # what a better answer may cost
        if answer is not None:
            self.hinted = True
            self.stated.hint(answer)
            met = self._at_bound(allowed, relaxed, answer)
            if met is not None:
                return met
        found = self._searched([mask & needed for mask, needed in zip(allowed, relaxed.needed(cap))], cap)  # none else in an answer of at most ``cap``
        if answer is not None and (found is None or found.status == "INFEASIBLE"):  # none cheaper than the rounding (or none found in time)
            proven = found is not None
            return Counts(_counted(answer), "OPTIMAL" if proven else "FEASIBLE", relaxed.value, relaxed.value if proven else relaxed.bound)
        return found

    def _at_bound(self, allowed: Sequence[np.ndarray], relaxed: LevelBound, answer: tuple[np.ndarray, ...]) -> Counts | None:
        """An answer at the relaxation's bound (so proven) among only the patterns its column
        generation brought in and the rounding's own, within ``AT_BOUND_WORK``; None when that
        run finds none. Why: the rounding and the dive often end one node above the bound, and
        CP-SAT over every pattern spends most of its time finding the answer that meets it
        (``balance:61:76``: 9,084 patterns, 0.68 s), which the patterns of the relaxation's own
        optimum usually hold (a restricted master problem, as in price-and-branch)."""
        kept = [mask & (brought | (counts > 0)) for mask, brought, counts in zip(allowed, relaxed.generated, answer)]
        found = self._searched(kept, relaxed.bound, work=AT_BOUND_WORK)
        if found is None or found.status == "INFEASIBLE" or found.value > relaxed.bound:
            return None
        return Counts(found.uses, "OPTIMAL", found.value, found.value)

    def least_rest(self, peak: int) -> int | None:
        """``peak_levels.LeastRest``: the relaxation's bound at this peak, no answer sought
        (None when it has none: ``relax_level``), by one program kept from peak to peak
        (``level_relaxation.LevelBounds``)."""
        return self._bounds().bound([loads <= peak for loads in self.loads], self.budget.check)

    def _bounds(self) -> LevelBounds:
        """The relaxation kept from peak to peak (:meth:`least_rest`, :meth:`low_ranks`), made when first asked."""
        if self.bounds is None:
            self.bounds = LevelBounds(self.columns, self.groups)
        return self.bounds

    def _searched(self, allowed: Sequence[np.ndarray], cap: int, work: float | None = None) -> Counts | None:
        """CP-SAT with only the ``allowed`` patterns (per shape) and the objective at most
        ``cap`` (``work``: a bound on its deterministic time); None, no run started, once the
        budget's search time is spent (CP-SAT's setup runs past a spent limit)."""
        if self.budget.search_remaining() <= 0:
            return None
        stated = self.stated
        self._allow(allowed)
        _set(stated.cap_domain(), -(2**62), cap)
        if not self.hinted:
            self._hint()
        bounded = {} if work is None else {"max_deterministic_time": work}
        solver, status = solve_model(stated.model, self.options, self.budget, **COUNT_PARAMETERS, **bounded)
        if status == cp_model.INFEASIBLE:
            return Counts({}, "INFEASIBLE", 0, 0)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return None
        return Counts(stated.uses(solver), solver.status_name(status), int(round(solver.objective_value)), int(round(solver.best_objective_bound)))

    def low_ranks(self, best: Counts, peak: int, value: int, node_start: np.ndarray) -> Counts:
        """``best`` with its GPUs moved to low ranks (each pattern's GPUs times its shape's first
        rank, least) at the same ``nodes`` value and a peak no higher; ``best`` itself when that
        run finds nothing in time (or the search time is spent before it), or when every shape
        has one first rank (every answer's sum is then that rank times the GPUs asked: nothing to
        order, as in ``model.solve_counts``).

        The run's model is its own, over only the patterns an answer of ``value`` at that peak
        may use (the relaxation's reduced costs at the peak, ``_needed``; ``best``'s own kept
        whatever the float margins), so it has the same answers as the model over every pattern,
        a few hundred variables instead of thousands: on ``other hardware:331:11`` 176 of
        14,852 patterns, and the run proves the least low-ranks sum (2,031,811) where the run
        over every pattern stopped at its work limit (``LOW_RANKS_WORK``) at 2,098,332."""
        if len({int(node_start[shape.nodes[0]]) for shape in self.shapes}) < 2 or self.budget.search_remaining() <= 0:
            return best
        low = [(loads - shape.load) * int(node_start[shape.nodes[0]]) for shape, loads in zip(self.shapes, self.loads)]
        used = [np.zeros(columns.costs.size, dtype=np.int64) for columns in self.columns]
        for (s, _, p), nodes in best.uses.items():
            used[s][p] = nodes
        allowed = [loads <= peak for loads in self.loads]
        kept = [np.flatnonzero((mask & needed) | (held > 0)) for mask, needed, held in zip(allowed, self._needed(allowed, value), used)]
        stated = _Stated(self.columns, self.groups, self.least, kept)
        _set(stated.cap_domain(), value, value)
        stated.hint(used)
        stated.minimize(low)
        solver, status = solve_model(stated.model, self.options, self.budget, **COUNT_PARAMETERS, max_deterministic_time=LOW_RANKS_WORK)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return best
        return Counts(stated.uses(solver), best.status, best.value, best.bound)

    def _needed(self, allowed: Sequence[np.ndarray], value: int) -> Sequence[np.ndarray]:
        """Per shape, the ``allowed`` patterns an answer of at most ``value`` may use: those
        whose least value under the relaxation's duals is no more (reduced-cost fixing, as
        ``level_relaxation.LevelBound.needed``); every allowed one where it has no bound."""
        least = self._bounds().least(allowed, self.budget.check)
        return allowed if least is None else [mask & (found <= value) for mask, found in zip(allowed, least)]

    def _allow(self, allowed: Sequence[np.ndarray]) -> None:
        """Each pattern's nodes at most its shape's when ``allowed``, else 0: set in the proto
        where they change (thousands of patterns, a few change from one level to the next)."""
        stated = self.stated
        for columns, row, mask, upper in zip(self.columns, stated.index, allowed, self.upper):
            wanted = np.where(mask, columns.nodes, 0)
            for p in np.flatnonzero(wanted != upper).tolist():
                _set(stated.model.proto.variables[int(row[p])].domain, 0, int(wanted[p]))
            upper[:] = wanted


class _Stated:
    """The count model in CP-SAT's proto over some patterns of each shape (``kept``: their
    indices, ascending): nodes per pattern summing to each shape's nodes, each class's groups,
    each class on at least its fewest nodes, the ``nodes`` term minimised and capped (the cap's
    bounds set by each run).

    Built from the patterns' arrays, one list per constraint, rather than a variable and a term
    at a time: the same proto (the same variables, constraints, terms and order, zero
    coefficients left out as ``LinearExpr`` leaves them), in a third of the time (14,852
    patterns of ``other hardware:331:11``: 0.2 s of Python became 0.06). Variables are kept as
    their proto indices (``index``, per shape, one per kept pattern)."""

    def __init__(self, columns: Sequence[LevelColumns], groups: Sequence[int], least: np.ndarray, kept: Sequence[np.ndarray]) -> None:
        self.model = LeanCpModel()
        self.kept = kept
        proto = self.model.proto
        self.index: list[np.ndarray] = []
        per_class: dict[int, tuple[list[np.ndarray], list[np.ndarray]]] = {}  # per class, its counts' indices and groups, shape by shape
        for shape, chosen in zip(columns, kept):
            patterns = shape.patterns[chosen]
            first = len(proto.variables)
            for _ in range(patterns.shape[0]):
                proto.variables.add().domain.extend((0, shape.nodes))
            row = np.arange(first, first + patterns.shape[0], dtype=np.int64)
            _linear(self.model, row, np.ones(row.size, dtype=np.int64), shape.nodes, shape.nodes)
            self.index.append(row)
            for k, c in enumerate(shape.part):
                held = np.flatnonzero(patterns[:, k])
                found = per_class.setdefault(c, ([], []))
                found[0].append(row[held])
                found[1].append(patterns[held, k])
        for c, asked in enumerate(groups):
            held_vars, counts = per_class.get(c, ([], []))
            _linear(self.model, _joined(held_vars), _joined(counts), asked, asked)
        for c, (holding, _) in sorted(per_class.items()):
            if least[c] > 1:
                joined = _joined(holding)
                _linear(self.model, joined, np.ones(joined.size, dtype=np.int64), int(least[c]), INT64_MAX)
        costs = [shape.costs for shape in columns]
        self.cap = _linear(self.model, _joined(self.index), self._kept_values(costs), INT64_MIN, 2**62)  # its bounds set by each run
        self.minimize(costs)

    def _kept_values(self, values: Sequence[np.ndarray]) -> np.ndarray:
        """Per shape a value per pattern, those of the kept patterns joined in the variables' order."""
        return _joined([shape_values[chosen] for shape_values, chosen in zip(values, self.kept)])

    def minimize(self, coefficients: Sequence[np.ndarray]) -> None:
        """The objective replaced by the sum of each kept pattern's coefficient (per shape, one
        per pattern) times its nodes, its zero terms left out."""
        variables, joined = _joined(self.index), self._kept_values(coefficients)
        self.model.proto.clear_objective()
        objective = self.model.proto.objective
        kept = joined != 0
        objective.vars.extend(variables[kept].tolist())
        objective.coeffs.extend(joined[kept].tolist())
        objective.scaling_factor = 1

    def hint(self, answer: Sequence[np.ndarray]) -> None:
        """CP-SAT's hint replaced by ``answer`` (per shape, nodes per pattern)."""
        self.model.clear_hints()
        hint = self.model.proto.solution_hint
        hint.vars.extend(_joined(self.index).tolist())
        hint.values.extend(self._kept_values(answer).tolist())

    def cap_domain(self) -> object:
        """The domain of the objective's cap, read from the proto where it sits."""
        return self.model.proto.constraints[self.cap].linear.domain

    def uses(self, solver: cp_model.CpSolver) -> dict[tuple[int, int, int], int]:
        """Nodes per (shape, table 0, pattern) of the solver's answer, those used."""
        values = np.asarray(solver.response_proto.solution, dtype=np.int64)
        found = []
        for row, chosen in zip(self.index, self.kept):
            counts = np.zeros(int(chosen.max(initial=-1)) + 1, dtype=np.int64)
            counts[chosen] = values[row]
            found.append(counts)
        return _counted(found)


def _counted(answer: Sequence[np.ndarray]) -> dict[tuple[int, int, int], int]:
    """Nodes per (shape, table 0, pattern) of ``answer`` (per shape, nodes per pattern), those used."""
    return {(s, 0, int(p)): int(counts[p]) for s, counts in enumerate(answer) for p in np.flatnonzero(counts).tolist()}


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


def _set(domain: object, low: int, high: int) -> None:
    """A proto domain of one interval (as every bound here is made) set to ``[low, high]``."""
    if len(domain) != 2:  # type: ignore[arg-type]  # an interval, as built: never user input
        raise InternalError("a bound of the count model's level model is not one interval")
    domain[0], domain[1] = low, high  # type: ignore[index]
