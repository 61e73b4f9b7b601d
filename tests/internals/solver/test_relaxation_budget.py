"""The count model's linear relaxation (``reduced_costs.py``) stops at the time limit.

Why: on 16,384 nodes (the ``topology mixes`` benchmark, 2,008 runs of alike nodes) one round
added 50,200 columns in 2 s and one GLOP solve took 3.3 s, neither checking the time, and the
solve ended past ``time_limit_s`` (6.2 s with a 5 s limit). The relaxation here is of the same
shape (thousands of runs, dozens of patterns each), built from arrays so the test stays fast."""

from __future__ import annotations

import time

import numpy as np
import pytest

from solver_placement import SolverTimeoutError
from solver_placement._solver.counts.pattern_program import RunColumns
from solver_placement._solver.counts.reduced_costs import relax
from solver_placement._solver.options import Budget

#: Runs and patterns per run: unbounded, the first round's columns alone take over a second
#: (1.34-1.38 s on the 2-core machine where the fix was measured, 0.30 s with it).
RUNS, PATTERNS, CLASSES = 2_000, 40, 3


def runs_of_alike_nodes(seed: int) -> list[RunColumns]:
    """Runs of 8 nodes each, every one listing ``PATTERNS`` random patterns (the empty one
    first) over the same classes, each pattern's cost its groups (the ``nodes`` term's shape)."""
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(RUNS):
        patterns = rng.integers(0, 4, size=(PATTERNS, CLASSES))
        patterns[0] = 0
        costs = (patterns > 0).sum(axis=1).astype(np.int64)
        found.append(RunColumns(tuple(range(CLASSES)), patterns, costs, np.zeros(PATTERNS, dtype=np.int64), 8, np.ones(CLASSES, dtype=np.int64)))
    return found


def test_the_relaxation_stops_at_the_deadline_not_after_its_round() -> None:
    runs = runs_of_alike_nodes(0)
    limit_s = 0.3  # past the model's setup: the deadline falls in the first round (unbounded: 1.3 s)
    started = time.perf_counter()
    with pytest.raises(SolverTimeoutError, match="bounding the count model by its linear relaxation"):
        relax(runs, [RUNS * 4] * CLASSES, 0, 0, Budget(started + limit_s, limit_s))
    assert time.perf_counter() - started < limit_s + 0.5  # one run's columns, or GLOP's own limit, past it


def test_with_time_to_spare_the_relaxation_bounds_every_pattern() -> None:
    runs = runs_of_alike_nodes(1)[:50]
    found = relax(runs, [50 * 4] * CLASSES, 0, 0, Budget(time.perf_counter() + 60.0, 60.0))
    assert found is not None
    # every run holds 8 nodes and every group costs at least a node's share of its pattern:
    # the bound is a bound on the integers, so at most the cost of some feasible answer
    assert 0 < found.bound <= sum(8 * int(run.costs.max()) for run in runs)
    assert [reduced.size for reduced in found.reduced] == [PATTERNS] * 50
