"""One peak level of the count model by its linear relaxation: a proven bound and a rounded answer.

Why: at a peak level the count model (``level_model.py``) is a cutting-stock program, nodes per
whole-node pattern, and CP-SAT's own relaxation bounds it at once, but its search may take
seconds to find an answer that meets the bound: 331 nodes of eight GPUs, 14,852 patterns
(``other hardware``), bound 8,060,000 at the start, the answer that meets it after 7.3 s, the
first fit over patterns (CP-SAT's hint) at 8,840,000. The relaxation's own optimum uses at most
as many patterns as it has rows (a basic solution), so rounded down it leaves a few nodes and
groups, which the same first fit places: an answer close to the bound, often on it. Where it is
not, a dive (one fractional count at a time to its ceiling, or its floor where the ceiling
leaves no answer, the relaxation solved again) usually is: on that spec the rounding gave
8,080,000 and the dive 8,060,000, the bound, in 0.05 s.

The bound is Lagrangian, valid for any dual values ``y`` of the class rows and ``z >= 0`` of
the fewest-nodes rows: every answer costs at least
``y.groups + z.fewest + sum over shapes of nodes * min over its patterns (cost - y.groups_p - z.present_p)``
(the shape rows kept: each node holds one pattern). It is computed here from GLOP's duals over
every pattern the level allows, with a margin for float64 sums, and rounded up (values are whole
numbers). So an answer at that bound is proven optimal with no CP-SAT run, a cap at or under
it proven empty, and otherwise the rounded answer is CP-SAT's hint. Columns are generated: the
patterns enter as their reduced costs turn negative, priced all at once with arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from ortools.linear_solver import pywraplp

from solver_placement._solver.counts.glop import glop, optimal
from solver_placement._solver.counts.pattern_program import fewest_nodes

#: Rounds of column generation before the last round's duals are used as they are (the bound is
#: valid for any duals; later rounds only tighten it).
MAX_ROUNDS = 60
#: Patterns of a shape that join the program per round (the most negative reduced costs).
COLUMNS_PER_ROUND = 24
#: Most counts a dive raises to their ceiling before it gives up (each one solve of the
#: relaxation, milliseconds; a basic solution has at most as many fractional counts as rows).
MAX_DIVES = 60
#: Reduced costs below this share of the objective's scale count as zero.
TOLERANCE = 1e-9


@dataclass(frozen=True)
class LevelColumns:
    """One shape as the relaxation sees it: per pattern its groups per class of ``part``, its
    cost (the ``nodes`` term, weight included) and its weighed GPUs (what the rounding fills by),
    and the shape's node count."""

    part: tuple[int, ...]
    patterns: np.ndarray
    costs: np.ndarray
    loads: np.ndarray
    nodes: int


@dataclass(frozen=True)
class LevelBound:
    """A level's least value of any answer (a whole number) and, when the rounding places every
    group, an answer: per shape, nodes per pattern (with its value)."""

    bound: int
    answer: tuple[np.ndarray, ...] | None
    value: int
    least: tuple[np.ndarray, ...]  # per shape and pattern, the least value of an answer using it (inf: not allowed)
    generated: tuple[np.ndarray, ...] = ()  # per shape, the patterns column generation brought into the program (a mask)

    def needed(self, cap: int) -> tuple[np.ndarray, ...]:
        """Per shape, the patterns an answer of value at most ``cap`` may use: those whose least
        value is no more (reduced-cost fixing; values are whole numbers)."""
        return tuple(least <= cap for least in self.least)


def relax_level(
    shapes: Sequence[LevelColumns], groups: Sequence[int], allowed: Sequence[np.ndarray], below: int | None, check: Callable[[str], None]
) -> LevelBound | None:
    """The bound and the rounded answer of one level, its patterns those ``allowed`` (per shape,
    a mask); no answer sought when the bound reaches ``below`` (a cap: answers under it are
    asked for, None: no cap). None when GLOP fails, or when a shape allows no pattern (its
    nodes' load placed first is above the peak) or there is no shape at all (every node taken
    by what is placed first): then CP-SAT decides alone. A shape's empty pattern is its
    lightest, so where it allows any it allows that one, first."""
    if not shapes or not all(mask.any() for mask in allowed):
        return None
    step = max(int(np.gcd.reduce(np.concatenate([shape.costs for shape in shapes]).astype(np.int64))), 1)  # every value is a multiple
    kept = [LevelColumns(s.part, s.patterns[mask], s.costs[mask] // step, s.loads[mask], s.nodes) for s, mask in zip(shapes, allowed)]
    index = [np.flatnonzero(mask) for mask in allowed]
    lp = _Program(kept, groups)
    if not lp.solved(check):
        return None
    bound, least_kept = lp.bound()
    least = []
    for shape, where, found in zip(shapes, index, least_kept):
        spread = np.full(shape.costs.size, np.inf)
        spread[where] = step * found
        least.append(spread)
    if below is not None and step * bound >= below:
        return LevelBound(step * bound, None, 0, tuple(least))  # none under the cap: no answer needed
    answer = _rounded(kept, groups, lp.values())
    if answer is None or _value(kept, answer) > bound:
        dived = lp.dived(check)
        if dived is not None and _holds(kept, groups, dived) and (answer is None or _value(kept, dived) < _value(kept, answer)):
            answer = dived
    if answer is None:
        return LevelBound(step * bound, None, 0, tuple(least))
    value = step * _value(kept, answer)
    full, generated = [], []
    for counts, shape, where, active in zip(answer, shapes, index, lp.active):
        spread = np.zeros(shape.costs.size, dtype=np.int64)
        spread[where] = counts
        full.append(spread)
        brought = np.zeros(shape.costs.size, dtype=bool)
        brought[where[active]] = True
        generated.append(brought)
    return LevelBound(step * bound, tuple(full), value, tuple(least), tuple(generated))


class LevelBounds:
    """The bound of :func:`relax_level` at one level after another, by one program kept across
    them: the patterns a level does not allow held at 0, the columns found for earlier levels
    kept, GLOP starting from its last basis. A bound only (no rounding, no dive): what
    ``peak_levels``' bisection asks, three or four levels of the same model in a row, each of
    which built its program and found its columns anew (``other hardware:331:11``: 60-90 ms
    each). Any duals bound the level, so a bound found from another start is as valid; where
    the columns converge it is the same number."""

    def __init__(self, shapes: Sequence[LevelColumns], groups: Sequence[int]) -> None:
        self.step = max(int(np.gcd.reduce(np.concatenate([shape.costs for shape in shapes]).astype(np.int64))), 1) if shapes else 1
        self.program = _Program([LevelColumns(s.part, s.patterns, s.costs // self.step, s.loads, s.nodes) for s in shapes], groups) if shapes else None

    def bound(self, allowed: Sequence[np.ndarray], check: Callable[[str], None]) -> int | None:
        """The least value of any answer using only the ``allowed`` patterns (per shape, a
        mask); None where :func:`relax_level` has none (no shape, a shape allowing no
        pattern, GLOP failing)."""
        found = self._solved(allowed, check)
        return None if found is None else self.step * found[0]

    def least(self, allowed: Sequence[np.ndarray], check: Callable[[str], None]) -> list[np.ndarray] | None:
        """Per shape and pattern, the least value of an answer using only the ``allowed``
        patterns that puts it on a node (``LevelBound.least``; inf: not allowed); None where
        :meth:`bound` is."""
        found = self._solved(allowed, check)
        return None if found is None else [self.step * least for least in found[1]]

    def _solved(self, allowed: Sequence[np.ndarray], check: Callable[[str], None]) -> tuple[int, list[np.ndarray]] | None:
        """The program's ``_Program.bound`` at these ``allowed`` patterns (in the costs' step)."""
        if self.program is None or not all(mask.any() for mask in allowed):
            return None
        self.program.restrict(allowed)
        if not self.program.solved(check):
            return None
        return self.program.bound()


def _holds(shapes: Sequence[LevelColumns], groups: Sequence[int], answer: Sequence[np.ndarray]) -> bool:
    """Whether ``answer`` is one: each shape's nodes, each class's groups, exactly (a dive's
    whole counts, read from floats, are checked so)."""
    held = np.zeros(len(groups), dtype=np.int64)
    for shape, counts in zip(shapes, answer):
        if int(counts.sum()) != shape.nodes or (counts < 0).any():
            return False
        np.add.at(held, np.array(shape.part, dtype=np.int64), counts @ shape.patterns)
    return held.tolist() == list(groups)


def _value(shapes: Sequence[LevelColumns], answer: Sequence[np.ndarray]) -> int:
    """An answer's value: its nodes per pattern times the patterns' costs."""
    return sum(int(counts @ shape.costs) for counts, shape in zip(answer, shapes))


class _Program:
    """The level's relaxation in GLOP, grown by columns: one row per class (its groups, with
    artificial room priced above any answer), per shape (its nodes) and per class placed on at
    least its fewest nodes (a cut the integers keep, ``pattern_program.fewest_nodes``)."""

    def __init__(self, shapes: Sequence[LevelColumns], groups: Sequence[int]) -> None:
        self.shapes = shapes
        self.groups = np.array(groups, dtype=np.float64)
        self.asked = list(groups)
        self.least = fewest_nodes([(shape.part, shape.patterns) for shape in shapes], groups).astype(np.float64)
        self.scale = 1.0 + sum(shape.nodes * float(np.abs(shape.costs).max(initial=0)) for shape in shapes)
        self.solver = glop()
        infinity = self.solver.infinity()
        objective = self.solver.Objective()
        self.classes = [self.solver.Constraint(float(g), float(g)) for g in groups]
        self.present = [self.solver.Constraint(float(n), infinity) for n in self.least.tolist()]
        self.room = []  # the artificial room: used only where the rows hold no answer
        for row, sign in [(row, 1.0) for row in self.classes + self.present] + [(row, -1.0) for row in self.classes]:
            slack = self.solver.NumVar(0.0, infinity, "")
            row.SetCoefficient(slack, sign)
            objective.SetCoefficient(slack, 10.0 * self.scale)
            self.room.append(slack)
        self.convex = [self.solver.Constraint(float(shape.nodes), float(shape.nodes)) for shape in shapes]
        self.columns: list[dict[int, pywraplp.Variable]] = [{} for _ in shapes]
        self.active = [np.zeros(shape.costs.size, dtype=bool) for shape in shapes]  # per shape, the patterns in the program
        self.allowed = [np.ones(shape.costs.size, dtype=bool) for shape in shapes]  # per shape, the patterns the level allows (``restrict``)
        objective.SetMinimization()
        for s in range(len(shapes)):
            self._add(s, 0)

    def restrict(self, allowed: Sequence[np.ndarray]) -> None:
        """Only the ``allowed`` patterns (per shape, a mask; each shape's empty one among them):
        those in the program and not allowed held at 0, none of them priced in (``LevelBounds``)."""
        self.allowed = [mask.copy() for mask in allowed]
        for shape, columns, mask in zip(self.shapes, self.columns, self.allowed):
            for p, var in columns.items():
                var.SetUb(float(shape.nodes) if mask[p] else 0.0)
        self.least = fewest_nodes([(shape.part, shape.patterns[mask]) for shape, mask in zip(self.shapes, self.allowed)], self.asked).astype(np.float64)
        for row, n in zip(self.present, self.least.tolist()):  # the cut of the patterns allowed, as the level's own program has it
            row.SetLb(n)

    def solved(self, check: Callable[[str], None]) -> bool:
        """Solve, generating columns until none prices below zero (or ``MAX_ROUNDS``: the last
        round's duals as they are, their bound valid); False when GLOP fails."""
        for round_ in range(MAX_ROUNDS):
            check("bounding a peak level of the count model by its linear relaxation")
            if not optimal(self.solver):
                return False
            if round_ == MAX_ROUNDS - 1 or not self.add_columns():
                return True
        return True

    def dived(self, check: Callable[[str], None]) -> tuple[np.ndarray, ...] | None:
        """An answer by diving: the most nearly whole fractional count raised to its ceiling (a
        lower bound on its variable) or, when that leaves no answer, to its floor, the
        relaxation solved again with new columns, until every count is whole; None when neither
        way holds every group or the dive runs past ``MAX_DIVES``. Call after :meth:`bound`: it changes the program."""
        for _ in range(MAX_DIVES):
            values = self.values()
            fractional = [(value - np.floor(value + 1e-6), s, p) for s, used in enumerate(values) for p, value in used.items() if abs(value - round(value)) > 1e-6]
            if not fractional:
                found = []
                for shape, used in zip(self.shapes, values):
                    counts = np.zeros(shape.costs.size, dtype=np.int64)
                    for p, value in used.items():
                        counts[p] = round(value)
                    found.append(counts)
                return tuple(found)
            _, s, p = max(fractional, key=lambda item: (item[0], -item[1], -item[2]))
            var = self.columns[s][p]
            value, low = var.solution_value(), var.lb()
            var.SetLb(float(np.ceil(value)))
            if self._feasible(check):
                continue
            var.SetLb(low)  # up leaves no answer: down instead
            var.SetUb(float(np.floor(value)))
            if not self._feasible(check):
                return None
        return None

    def _feasible(self, check: Callable[[str], None]) -> bool:
        """Solve again; whether the relaxation holds every group without its artificial room."""
        return self.solved(check) and sum(slack.solution_value() for slack in self.room) < 1e-6

    def _add(self, s: int, p: int) -> None:
        shape = self.shapes[s]
        var = self.solver.NumVar(0.0, float(shape.nodes), "")
        self.solver.Objective().SetCoefficient(var, float(shape.costs[p]))
        self.convex[s].SetCoefficient(var, 1.0)
        for k, c in enumerate(shape.part):
            if shape.patterns[p, k]:
                self.classes[c].SetCoefficient(var, float(shape.patterns[p, k]))
                self.present[c].SetCoefficient(var, 1.0)
        self.columns[s][p] = var
        self.active[s][p] = True

    def _duals(self) -> tuple[np.ndarray, np.ndarray]:
        """The class rows' duals and the fewest-nodes rows' (at least 0: rows of ``>=``)."""
        return np.array([row.dual_value() for row in self.classes]), np.maximum(np.array([row.dual_value() for row in self.present]), 0.0)

    def _priced(self, y: np.ndarray, z: np.ndarray) -> list[np.ndarray]:
        """Every pattern's cost less what the class and fewest-nodes rows pay for it."""
        return [shape.costs - shape.patterns @ y[list(shape.part)] - (shape.patterns > 0) @ z[list(shape.part)] for shape in self.shapes]

    def add_columns(self) -> int:
        """Patterns of negative reduced cost, the most negative first; how many joined."""
        y, z = self._duals()
        convex = [row.dual_value() for row in self.convex]  # read before any column joins
        added = 0
        for s, priced in enumerate(self._priced(y, z)):
            reduced = priced - convex[s]
            candidates = np.flatnonzero((reduced < -TOLERANCE * self.scale) & ~self.active[s] & self.allowed[s])
            for p in candidates[np.argsort(reduced[candidates], kind="stable")][:COLUMNS_PER_ROUND].tolist():  # ties by index
                self._add(s, p)
                added += 1
        return added

    def bound(self) -> tuple[int, list[np.ndarray]]:
        """The Lagrangian bound of the last duals over every pattern, rounded up past a margin
        for the float64 sums (the costs are whole numbers: :func:`relax_level` divides them by
        their greatest common divisor, the ``nodes`` weight, which also keeps GLOP's numbers
        small); and per shape and pattern the least value of an answer that puts it on a
        node: the bound (before rounding) plus what the pattern costs past its shape's cheapest
        under the duals."""
        y, z = self._duals()
        priced = [np.where(mask, cost, np.inf) for cost, mask in zip(self._priced(y, z), self.allowed)]  # a pattern not allowed never used
        terms = [float(y @ self.groups), float(z @ self.least)]
        terms += [shape.nodes * float(cost.min()) for shape, cost in zip(self.shapes, priced)]
        margin = 1e-9 * (1.0 + sum(abs(term) for term in terms) + sum(float(np.abs(cost[mask]).max()) for cost, mask in zip(priced, self.allowed)))
        floor = sum(terms) - margin
        return int(np.ceil(floor)), [floor + cost - cost.min() for cost in priced]

    def values(self) -> list[dict[int, float]]:
        """Per shape, the relaxation's nodes per pattern it uses."""
        return [{p: var.solution_value() for p, var in sorted(columns.items())} for columns in self.columns]


def _rounded(shapes: Sequence[LevelColumns], groups: Sequence[int], values: Sequence[dict[int, float]]) -> tuple[np.ndarray, ...] | None:
    """The relaxation's nodes per pattern rounded down, then the nodes left filled shape by
    shape with the pattern of the most weighed GPUs among those that pass no class's groups
    still asked (first fit over patterns, as ``level_model.LevelModel``'s hint); None when groups are left over."""
    left = np.array(groups, dtype=np.int64)
    chosen = []
    for shape, used in zip(shapes, values):
        counts = np.zeros(shape.costs.size, dtype=np.int64)
        for p, value in used.items():
            counts[p] = int(np.floor(value + 1e-6))
        chosen.append(counts)
        np.subtract.at(left, np.array(shape.part, dtype=np.int64), counts @ shape.patterns)
    if (left < 0).any():
        return None
    for shape, counts in zip(shapes, chosen):
        index = np.array(shape.part, dtype=np.int64)
        nodes = shape.nodes - int(counts.sum())
        while nodes > 0:
            fits = (shape.patterns <= left[index]).all(axis=1)
            best = int(np.argmax(np.where(fits, shape.loads, -1)))  # the empty pattern always fits
            asked = shape.patterns[best] > 0
            times = min(nodes, int((left[index][asked] // shape.patterns[best][asked]).min())) if asked.any() else nodes
            counts[best] += times
            left[index] -= times * shape.patterns[best]
            nodes -= times
    return tuple(chosen) if not left.any() else None
