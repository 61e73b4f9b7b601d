"""The linear program of the count model's relaxation over whole-node patterns (``reduced_costs.py``
says what it bounds and why): GLOP, grown by columns (patterns whose reduced costs turn
negative, priced all at once with arrays) and by chords (where the level counts pass under
their convex ``N (N - 1) / 2``), with the patterns each run offers (``RunColumns``) and the
bound and reduced costs one dual solution gives (``Relaxation``).

Why a module of its own: ``reduced_costs.py`` decides what to solve (the program, a branch on
its ``nodes`` term, the least ``balance`` peak); this one states the program and reads its
duals, whatever is asked of it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from ortools.linear_solver import pywraplp

from solver_placement._solver.counts.glop import glop, optimal
from solver_placement._solver.options import Budget

#: Rounds of column and chord generation before the duals of the last round are used as they are
#: (their bound is valid whatever the round; later rounds only tighten it).
MAX_ROUNDS = 60
#: Patterns of a run that join the relaxation per round (the most negative reduced costs).
COLUMNS_PER_ROUND = 24
#: Reduced costs and violations below this share of the objective's scale count as zero.
TOLERANCE = 1e-9
#: The stage the time limit names while the relaxation bounds the count model.
BOUNDING = "bounding the count model by its linear relaxation"


@dataclass(frozen=True)
class RunColumns:
    """One run of alike nodes as the relaxation sees it: per pattern, its groups per class of
    ``part``, its cost on a node apart from its position (weighed: the ranks of the run's first
    node, local ids, ``nodes`` term) and its rise per next node; per class, the GPUs one group
    weighs in ``balance`` (its width times its members); per pattern, what it adds to the
    ``nodes`` term unweighed (``present``; None: not known apart, no rounding cut)."""

    part: tuple[int, ...]
    patterns: np.ndarray
    costs: np.ndarray
    rises: np.ndarray
    nodes: int
    group_gpus: np.ndarray
    present: np.ndarray | None = None

    @property
    def gpus(self) -> np.ndarray:
        """Per pattern, the weighed GPUs it takes on a node (what ``balance`` counts)."""
        return self.patterns @ self.group_gpus

    @property
    def levels(self) -> np.ndarray:
        """The distinct rises, largest first."""
        return np.unique(self.rises)[::-1]


@dataclass(frozen=True)
class Relaxation:
    """The bound ``L(y)`` of one dual solution and every pattern's reduced cost under it, with
    what a pattern adds beyond that by itself (``floors``: the ``balance`` term a node of that
    pattern forces, past the least any answer pays)."""

    bound: float
    reduced: tuple[np.ndarray, ...]
    scale: float
    floors: tuple[np.ndarray, ...]

    def kept(self, value: int) -> tuple[np.ndarray, ...]:
        """Per run, the patterns an answer cheaper than ``value`` may use (the empty one always):
        the objective is a whole number, so a pattern whose least answer exceeds ``value - 1``
        cannot be in one."""
        masks = []
        for least in self._least():
            mask = least - self.margin <= value - 1
            mask[0] = True
            masks.append(mask)
        return tuple(masks)

    def beyond(self, kept: Sequence[np.ndarray]) -> float:
        """The least value of an answer using a pattern left out of ``kept`` (inf: none left out)."""
        least = min((float(cost[~mask].min()) for cost, mask in zip(self._least(), kept) if (~mask).any()), default=float("inf"))
        return least if least == float("inf") else float(np.ceil(least - self.margin))

    def doubled(self, kept: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        """``kept`` with as many patterns again, those of least value next (when the patterns
        kept hold no answer at all)."""
        least = self._least()
        values = np.sort(np.concatenate(least))
        wanted = min(2 * sum(int(mask.sum()) for mask in kept), values.size)
        limit = values[wanted - 1]
        return tuple(mask | (cost <= limit) for mask, cost in zip(kept, least))

    def capped(self, kept: Sequence[np.ndarray], most: int) -> tuple[tuple[np.ndarray, ...], bool]:
        """``kept`` cut to its ``most`` patterns of least value (the empty ones always), and
        whether it was cut."""
        if sum(int(mask.sum()) for mask in kept) <= most:
            return tuple(kept), False
        least = self._least()
        values = np.concatenate([np.where(mask, cost, np.inf) for mask, cost in zip(kept, least)])
        chosen = np.zeros(values.size, dtype=bool)
        chosen[np.argsort(values, kind="stable")[: most - len(kept)]] = True
        masks, start = [], 0
        for mask in kept:
            taken = chosen[start : start + mask.size].copy()
            taken[0] = True
            masks.append(taken)
            start += mask.size
        return tuple(masks), True

    def _least(self) -> list[np.ndarray]:
        """Per run and pattern, the least value of an answer using it."""
        return [self.bound + reduced + floor for reduced, floor in zip(self.reduced, self.floors)]

    @property
    def margin(self) -> float:
        """Room for the floating-point error of the bound and reduced costs (sums of thousands
        of products of float64 duals: relative errors near 1e-12)."""
        return 1e-9 * (1.0 + self.scale)


def generated(lp: PatternProgram, budget: Budget) -> Duals | None:
    """The duals of ``lp`` once no column or chord joins it (or after ``MAX_ROUNDS``, or when GLOP
    fails: the last round's); None when GLOP fails at once."""
    duals: Duals | None = None
    for _ in range(MAX_ROUNDS):
        if not lp.solved(budget, BOUNDING):
            break
        duals, levels = lp.duals(), lp.level_values()
        if not lp.add_chords(levels) + lp.add_columns(duals, budget.check):
            break
    return duals


class PatternProgram:
    """The relaxation's GLOP model, grown by columns and chords."""

    def __init__(self, runs: Sequence[RunColumns], groups: Sequence[int], contiguity: int) -> None:
        self.runs = runs
        self.groups = np.array(groups, dtype=np.float64)
        self.weight = contiguity
        self.solver = glop()
        scale = sum(run.nodes * (float(np.abs(run.costs).max()) + contiguity * float(run.rises.max()) * run.nodes) for run in runs)
        self.scale = 1.0 + scale
        infinity = self.solver.infinity()
        objective = self.solver.Objective()
        self.classes = [self.solver.Constraint(float(g), float(g)) for g in groups]
        for row in self.classes:  # artificial room both ways, priced above any answer
            for sign in (1.0, -1.0):
                slack = self.solver.NumVar(0.0, infinity, "")
                row.SetCoefficient(slack, sign)
                objective.SetCoefficient(slack, 10.0 * self.scale)
        self.convex = [self.solver.Constraint(float(run.nodes), float(run.nodes)) for run in runs]
        self.least = fewest_nodes([(run.part, run.patterns) for run in runs], groups)
        self.presence = [self.solver.Constraint(float(n), infinity) for n in self.least.tolist()]
        for row in self.presence:
            slack = self.solver.NumVar(0.0, infinity, "")
            row.SetCoefficient(slack, 1.0)
            objective.SetCoefficient(slack, 10.0 * self.scale)
        self.levels = [run.levels for run in runs]
        self.columns: list[dict[int, pywraplp.Variable]] = [{} for _ in runs]  # per run, its patterns' counts in the program
        self.level_rows: list[list[pywraplp.Constraint]] = []
        self.level_vars: list[list[pywraplp.Variable]] = []
        self.pair_vars: list[list[pywraplp.Variable]] = []
        self.chords: list[list[dict[int, pywraplp.Constraint]]] = []
        for run, levels in zip(runs, self.levels):
            rows, counts, pairs = [], [], []
            for j in range(levels.size - 1):
                row = self.solver.Constraint(0.0, 0.0)
                count = self.solver.NumVar(0.0, float(run.nodes), "")
                pair = self.solver.NumVar(0.0, float(run.nodes * (run.nodes - 1) // 2), "")
                row.SetCoefficient(count, 1.0)
                objective.SetCoefficient(pair, float(contiguity * (levels[j] - levels[j + 1])))
                rows.append(row)
                counts.append(count)
                pairs.append(pair)
            self.level_rows.append(rows)
            self.level_vars.append(counts)
            self.pair_vars.append(pairs)
            self.chords.append([{} for _ in rows])
        self.active = [np.zeros(run.costs.size, dtype=bool) for run in runs]
        self.pairs: pywraplp.Constraint | None = None  # the ``nodes`` term's row, made by the first ``bound_pairs``
        self.pairs_range: tuple[int | None, int | None] = (None, None)
        self.current = False  # whether GLOP's last solve is optimal: a solution to read
        objective.SetMinimization()
        for s in range(len(runs)):
            self._add(s, 0)

    def solved(self, budget: Budget, stage: str) -> bool:
        """Whether GLOP solved the program to optimality, given what is left of ``budget`` (the
        time limit passed: ``budget.check`` raises). Why the limit: on 16,384 nodes
        (``topology mixes:16384:1``, 2,008 runs of 76,000 columns) one solve took 3.3 s, and
        the count path ended seconds past its share of the time limit, leaving first fit none."""
        budget.check(stage)
        self.current = optimal(self.solver, max(1, math.ceil(1000 * budget.remaining())))
        if self.current:
            return True
        budget.check(stage)
        return False

    def _add(self, s: int, p: int) -> None:
        run = self.runs[s]
        var = self.solver.NumVar(0.0, float(run.nodes), "")
        self.solver.Objective().SetCoefficient(var, float(run.costs[p]))
        self.convex[s].SetCoefficient(var, 1.0)
        for k, c in enumerate(run.part):
            if run.patterns[p, k]:
                self.classes[c].SetCoefficient(var, float(run.patterns[p, k]))
                self.presence[c].SetCoefficient(var, 1.0)
        for j, row in enumerate(self.level_rows[s]):
            if run.rises[p] >= self.levels[s][j]:
                row.SetCoefficient(var, -1.0)
        if self.pairs is not None and run.present is not None:
            self.pairs.SetCoefficient(var, float(run.present[p]))
        self.columns[s][p] = var
        self.active[s][p] = True

    def _pair_terms(self) -> list[tuple[pywraplp.Variable, float]] | None:
        """Each pattern's count in the program with what it adds to the ``nodes`` term, unweighed
        (None where a run does not say it apart)."""
        terms: list[tuple[pywraplp.Variable, float]] = []
        for run, columns in zip(self.runs, self.columns):
            if run.present is None:
                return None
            terms.extend((var, float(run.present[p])) for p, var in columns.items())
        return terms

    def pairs_held(self) -> float | None:
        """The solution's ``nodes`` term, unweighed (None where a run does not say it apart, or
        where GLOP's last solve failed: there is no solution to read, and reading one made
        GLOP log "No solution exists" to stderr once per variable, ``mixed kinds
        contiguity:65:184``)."""
        terms = self._pair_terms()
        return None if terms is None or not self.current else sum(var.solution_value() * count for var, count in terms)

    def bound_pairs(self, low: int | None, high: int | None) -> None:
        """The ``nodes`` term (unweighed) held between ``low`` and ``high`` (None: no limit), over
        every pattern's count, those to come too; with room both ways priced above any answer
        (as the class rows), so a side no answer reaches bounds its answers above them all."""
        infinity = self.solver.infinity()
        if self.pairs is None:
            self.pairs = self.solver.Constraint(-infinity, infinity)
            for sign in (1.0, -1.0):
                slack = self.solver.NumVar(0.0, infinity, "")
                self.pairs.SetCoefficient(slack, sign)
                self.solver.Objective().SetCoefficient(slack, 10.0 * self.scale)
            for var, count in self._pair_terms() or ():
                self.pairs.SetCoefficient(var, count)
        self.pairs.SetBounds(-infinity if low is None else float(low), infinity if high is None else float(high))
        self.pairs_range = (low, high)

    def add_columns(self, duals: Duals, check: Callable[[str], None]) -> int:
        """Patterns of negative reduced cost, the most negative first; how many joined. The time
        limit is checked run by run: on 16,384 nodes (``topology mixes:16384:1``, 2,008 runs) the
        first round added 50,200 columns in 2 s with no check, and the count path ended 2.5 s past
        its share of the time limit, first fit out of time and the solve past ``time_limit_s``."""
        added = 0
        for s, reduced in enumerate(self._pattern_costs(duals)):
            check(BOUNDING)
            candidates = np.flatnonzero((reduced < -TOLERANCE * self.scale) & ~self.active[s])
            for p in candidates[np.argsort(reduced[candidates], kind="stable")][:COLUMNS_PER_ROUND].tolist():
                self._add(s, p)
                added += 1
        return added

    def level_values(self) -> list[list[tuple[float, float]]]:
        """Per run and level, the solution's level count and pairs variable."""
        return [
            [(count.solution_value(), pair.solution_value()) for count, pair in zip(counts, pairs)]
            for counts, pairs in zip(self.level_vars, self.pair_vars)
        ]

    def add_chords(self, values: list[list[tuple[float, float]]]) -> int:
        """Chords ``pairs >= k N - k (k + 1) / 2`` at the level counts that pass under their
        convex term (exact at ``N`` in ``[k, k + 1]``); how many joined."""
        added = 0
        for s, run in enumerate(self.runs):
            for j, (count, pair) in enumerate(zip(self.level_vars[s], self.pair_vars[s])):
                n, paired = values[s][j]
                k = min(max(int(np.floor(n + 1e-9)), 0), max(run.nodes - 1, 0))
                if k in self.chords[s][j] or paired >= k * n - k * (k + 1) / 2 - TOLERANCE * self.scale:
                    continue
                row = self.solver.Constraint(-k * (k + 1) / 2, self.solver.infinity())
                row.SetCoefficient(pair, 1.0)
                row.SetCoefficient(count, -float(k))
                self.chords[s][j][k] = row
                added += 1
        return added

    def duals(self) -> Duals:
        return Duals(
            np.array([row.dual_value() for row in self.classes]),
            np.maximum(np.array([row.dual_value() for row in self.presence]), 0.0),
            np.array([row.dual_value() for row in self.convex]),
            [np.array([row.dual_value() for row in rows]) for rows in self.level_rows],
            [[{k: max(row.dual_value(), 0.0) for k, row in chords.items()} for chords in per_run] for per_run in self.chords],
            self._pairs_dual(),
        )

    def _pairs_dual(self) -> float:
        """The ``nodes`` term row's dual, of the sign its bounds allow (0 without one)."""
        low, high = self.pairs_range
        if self.pairs is None or low is None and high is None:
            return 0.0
        dual = self.pairs.dual_value()
        return max(dual, 0.0) if high is None else min(dual, 0.0) if low is None else dual

    def _pattern_costs(self, duals: Duals) -> list[np.ndarray]:
        """Every pattern's reduced cost ``c - A^T y``."""
        found = []
        for s, run in enumerate(self.runs):
            reduced = (
                run.costs.astype(np.float64)
                - duals.convex[s]
                - run.patterns @ duals.classes[list(run.part)]
                - (run.patterns > 0) @ duals.presence[list(run.part)]
            )
            at_least = run.rises[:, None] >= self.levels[s][None, :-1]  # pattern x level: counted in that level's row
            reduced = reduced + at_least @ duals.levels[s] if at_least.size else reduced
            if duals.pairs and run.present is not None:
                reduced = reduced - duals.pairs * run.present
            found.append(reduced)
        return found

    def relaxation(self, duals: Duals) -> Relaxation:
        """``L(y)`` over every pattern, level count and pairs variable, with the patterns'
        reduced costs."""
        reduced = self._pattern_costs(duals)
        bound = float(duals.classes @ self.groups) + float(duals.presence @ self.least)
        if duals.pairs:
            bound += duals.pairs * float(self.pairs_range[0] if duals.pairs > 0 else self.pairs_range[1])  # type: ignore[arg-type]  # the sign chose a finite bound
        for s, run in enumerate(self.runs):
            bound += duals.convex[s] * run.nodes + np.minimum(reduced[s], 0.0).sum() * run.nodes
            levels = self.levels[s]
            bound += self.weight * float(levels[-1]) * run.nodes * (run.nodes - 1) / 2
            for j in range(levels.size - 1):
                chords = duals.chords[s][j]
                bound -= sum(lam * k * (k + 1) / 2 for k, lam in chords.items())
                count_cost = -duals.levels[s][j] + sum(lam * k for k, lam in chords.items())
                pair_cost = self.weight * float(levels[j] - levels[j + 1]) - sum(chords.values())
                bound += min(count_cost, 0.0) * run.nodes + min(pair_cost, 0.0) * run.nodes * (run.nodes - 1) / 2
        return Relaxation(bound, tuple(np.maximum(r, 0.0) for r in reduced), self.scale, tuple(np.zeros(r.size) for r in reduced))


@dataclass(frozen=True)
class Duals:
    classes: np.ndarray
    presence: np.ndarray
    convex: np.ndarray
    levels: list[np.ndarray]
    chords: list[list[dict[int, float]]]
    pairs: float  # the ``nodes`` term row's (``PatternProgram.bound_pairs``; 0 without it)


def fewest_nodes(runs: Sequence[tuple[tuple[int, ...], np.ndarray]], groups: Sequence[int]) -> np.ndarray:
    """Per class, the fewest nodes any answer puts its groups on: its groups over the most one
    pattern holds, rounded up (a cut the integers keep and fractions break: it is what lifts
    the relaxation's ``nodes`` term to whole nodes)."""
    most = np.zeros(len(groups), dtype=np.int64)
    for part, patterns in runs:
        if patterns.size:
            np.maximum.at(most, np.array(part, dtype=np.int64), patterns.max(axis=0))
    return np.where(most > 0, -(-np.array(groups, dtype=np.int64) // np.maximum(most, 1)), 0)
