"""``balance`` level by level (``counts/peak_levels.py``): the levels no answer can win are ruled
out by the relaxation's bounds, found by bisection, and the answer is the one every level
solved in turn finds (issue 34: eight levels of ``other hardware:331:11``, each its own
relaxation, became three bounds)."""

from __future__ import annotations

import math
import random
import time

import pytest

from solver_placement._solver.counts.model import Counts
from solver_placement._solver.counts.peak_levels import _ruled_out, by_levels
from solver_placement._solver_settings import Budget


class Levels:
    """A drawn level problem: answers ``(rest, peak)``; a level's solve is the least ``rest``
    (the first on a tie) with a peak at most the level and ``rest`` under the cap, as the
    count model's levels answer; ``least_rest`` a valid bound (the least ``rest`` at that
    peak, less a drawn slack). The answer's peak is read back from its uses."""

    def __init__(self, rng: random.Random) -> None:
        self.answers = [(rng.randint(50, 120), rng.randint(3, 12)) for _ in range(rng.randint(1, 8))]
        self.slack = [rng.choice((0, 0, 0, 1, 5)) for _ in range(13)]
        self.solves = 0

    def solve(self, peak: int | None, below: int | None) -> Counts:
        self.solves += 1
        fitting = [(rest, p) for rest, p in self.answers if (peak is None or p <= peak) and (below is None or rest < below)]
        if not fitting:
            return Counts({}, "INFEASIBLE", 0, 0)
        rest, p = min(fitting, key=lambda answer: answer[0])
        return Counts({(0, 0, p): 1}, "OPTIMAL", rest, rest)

    def least_rest(self, peak: int) -> int | None:
        held = [rest for rest, p in self.answers if p <= peak]
        return min(held) - self.slack[peak] if held else None

    @staticmethod
    def peak_of(counts: Counts) -> int:
        return max(p for (_, _, p) in counts.uses)


def _budget() -> Budget:
    return Budget(time.perf_counter() + 60.0, 60.0)


@pytest.mark.parametrize("seed", range(5))
def test_levels_ruled_out_by_bounds_change_no_answer(seed: int) -> None:
    """On drawn level problems, with or without the bounds, the same counts, value, status and
    bound; and the bounds spare solves in some draws (in others the one solve that screens every
    level at once, which they replace, would have proven more than a bound)."""
    rng = random.Random(seed)
    fewer = 0
    for _ in range(60):
        drawn, balance = Levels(rng), rng.choice((1, 3, 10))
        candidates = list(range(3, 13))
        plain = by_levels(candidates, balance, drawn.solve, Levels.peak_of, _budget())
        solves = drawn.solves
        drawn.solves = 0
        bounded = by_levels(candidates, balance, drawn.solve, Levels.peak_of, _budget(), drawn.least_rest)
        assert bounded == plain, drawn.answers
        fewer += drawn.solves < solves
    assert fewer, "no draw had a level the bounds ruled out"


def test_bisection_finds_the_highest_level_ruled_out_in_few_bounds() -> None:
    """Bounds falling with the level: the highest level whose bound reaches the cap, in about
    log2 of the levels' bounds; none when no bound does (or none is known)."""
    asked: list[int] = []

    def falling(level: int) -> int:
        asked.append(level)
        return 200 - 10 * level

    levels = list(range(1, 33))
    assert _ruled_out(levels, falling, 95) == 10  # 200 - 10 * 10 = 100 >= 95, level 11 gives 90
    assert len(asked) <= math.ceil(math.log2(len(levels))) + 1
    assert _ruled_out(levels, falling, 1_000) is None
    assert _ruled_out(levels, lambda level: None, 0) is None
