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
them. The bound is computed here from the duals GLOP gives, over every pattern, whatever their
accuracy: it is a bound for any duals of the right signs (a margin covers float64 sums).
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
    weighs in ``balance`` (its width times its members)."""

    part: tuple[int, ...]
    patterns: np.ndarray
    costs: np.ndarray
    rises: np.ndarray
    nodes: int
    group_gpus: np.ndarray

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


def relax(runs: Sequence[RunColumns], groups: Sequence[int], contiguity: int, balance: int, budget: Budget) -> Relaxation | None:
    """The relaxation's bound and reduced costs (None when GLOP fails at once, then nothing is
    left out); ``groups[c]`` is class ``c``'s groups, ``contiguity`` and ``balance`` the terms'
    weights. ``balance`` (the most weighed GPUs on a node) stays out of the linear program: every
    answer pays it at least for the heavier of its patterns and the GPUs spread evenly over
    every node, so a pattern heavier than that adds the difference by itself (its floor).

    Where GLOP fails in a later round, the last round's duals give the bound: ``L(y)`` bounds
    every answer for any duals of the right signs, the later rounds only tighten it. Why: on
    4,096 nodes (``topology:4096:0``, 512 runs, 21,001 columns, objective scale 1.2e8) GLOP ends
    its third round ABNORMAL, and with no relaxation the count path declined and first fit
    answered."""
    lp = _Lp(runs, groups, contiguity)
    duals: _Duals | None = None
    for _ in range(MAX_ROUNDS):
        if not lp.solved(budget, BOUNDING):
            break
        duals, levels = lp.duals(), lp.level_values()
        if not lp.add_chords(levels) + lp.add_columns(duals, budget.check):
            break
    if duals is None:  # GLOP failed at once: nothing is left out
        return None
    found = lp.relaxation(duals)
    least_peak = _least_peak(runs, groups, budget) if balance else 0
    floors = tuple(balance * np.maximum(run.gpus - least_peak, 0).astype(np.float64) for run in runs)
    return Relaxation(found.bound + balance * least_peak, found.reduced, found.scale + balance * max(float(run.gpus.max()) for run in runs), floors)


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
        lighter.append(RunColumns(run.part, run.patterns[mask], flat, flat.astype(np.int64), run.nodes, run.group_gpus))
    lp = _Lp(lighter, groups, 0)
    for _ in range(MAX_ROUNDS):
        if not lp.solved(budget, "bounding the balance term by its linear relaxation"):
            return True  # unknown: assume it fits (the weaker bound)
        if not lp.add_columns(lp.duals(), budget.check):
            break
    return bool(lp.solver.Objective().Value() <= 1e-6 * lp.scale)


class _Lp:
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
        objective.SetMinimization()
        for s in range(len(runs)):
            self._add(s, 0)

    def solved(self, budget: Budget, stage: str) -> bool:
        """Whether GLOP solved the program to optimality, given what is left of ``budget`` (the
        time limit passed: ``budget.check`` raises). Why the limit: on 16,384 nodes
        (``topology mixes:16384:1``, 2,008 runs of 76,000 columns) one solve took 3.3 s, and
        the count path ended seconds past its share of the time limit, leaving first fit none."""
        budget.check(stage)
        self.solver.SetTimeLimit(max(1, math.ceil(1000 * budget.remaining())))
        if optimal(self.solver):
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
        self.active[s][p] = True

    def add_columns(self, duals: _Duals, check: Callable[[str], None]) -> int:
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

    def duals(self) -> _Duals:
        return _Duals(
            np.array([row.dual_value() for row in self.classes]),
            np.maximum(np.array([row.dual_value() for row in self.presence]), 0.0),
            np.array([row.dual_value() for row in self.convex]),
            [np.array([row.dual_value() for row in rows]) for rows in self.level_rows],
            [[{k: max(row.dual_value(), 0.0) for k, row in chords.items()} for chords in per_run] for per_run in self.chords],
        )

    def _pattern_costs(self, duals: _Duals) -> list[np.ndarray]:
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
            found.append(reduced)
        return found

    def relaxation(self, duals: _Duals) -> Relaxation:
        """``L(y)`` over every pattern, level count and pairs variable, with the patterns'
        reduced costs."""
        reduced = self._pattern_costs(duals)
        bound = float(duals.classes @ self.groups) + float(duals.presence @ self.least)
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
class _Duals:
    classes: np.ndarray
    presence: np.ndarray
    convex: np.ndarray
    levels: list[np.ndarray]
    chords: list[list[dict[int, float]]]


def fewest_nodes(runs: Sequence[tuple[tuple[int, ...], np.ndarray]], groups: Sequence[int]) -> np.ndarray:
    """Per class, the fewest nodes any answer puts its groups on: its groups over the most one
    pattern holds, rounded up (a cut the integers keep and fractions break: it is what lifts
    the relaxation's ``nodes`` term to whole nodes)."""
    most = np.zeros(len(groups), dtype=np.int64)
    for part, patterns in runs:
        if patterns.size:
            np.maximum.at(most, np.array(part, dtype=np.int64), patterns.max(axis=0))
    return np.where(most > 0, -(-np.array(groups, dtype=np.int64) // np.maximum(most, 1)), 0)
