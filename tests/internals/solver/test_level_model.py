"""``counts/level_model.py``'s CP-SAT models: the one over every pattern is built only when a
level needs CP-SAT, and the low-ranks run is a model of its own over the patterns an answer at
the proven value may use, with the least low-ranks sum of the model over every allowed pattern.

Rings of four exclusions on nodes of 4 and 2 GPUs (two node shapes, so two first ranks and a
low-ranks run), the per-node form kept out."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from solver_placement import Cluster, PlacementSpec, solve
from solver_placement._solver.counts import level_model, per_node
from solver_placement._solver.counts.level_model import LevelModel
from solver_placement._solver.counts.patterns import parts, shapes
from solver_placement._solver.counts.peak_levels import whole_loads
from solver_placement._solver.counts.problem import CountProblem, count_problem
from solver_placement._solver.options import SolverOptions, solve_model

RING = ("actor", "critic", "reward", "ref")
#: (GPUs per node, processes, TP sizes, weights): one answered by the relaxation at every level,
#: one whose levels search with CP-SAT.
CASES = [
    pytest.param([4, 4, 2, 2, 4], (4, 5, 4, 2), (1, 1, 2, 1), {"balance": 10, "nodes": 100}, id="relaxation-answers"),
    pytest.param([4, 4, 2, 2, 4, 2], (6, 5, 4, 2), (1, 1, 2, 2), {"balance": 10, "nodes": 100}, id="levels-search"),
]


def _spec(gpus: list[int], processes: tuple[int, ...], tp: tuple[int, ...]) -> PlacementSpec:
    placement: dict[str, Any] = {
        name: {"processes": p, "tensor_parallel_size": t, "exclusive_with": [RING[(i + 1) % len(RING)]]}
        for i, (name, p, t) in enumerate(zip(RING, processes, tp))
    }
    return PlacementSpec.build(Cluster(len(gpus), gpus), placement)


def _stated_sizes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """(patterns of the level model, patterns stated) of each CP-SAT model the level model builds."""
    sizes: list[tuple[int, int]] = []
    build = level_model._Stated.__init__

    def recorded(self: level_model._Stated, columns: Any, groups: Any, least: Any, kept: Any) -> None:
        sizes.append((sum(int(c.costs.size) for c in columns), sum(int(k.size) for k in kept)))
        build(self, columns, groups, least, kept)

    monkeypatch.setattr(level_model._Stated, "__init__", recorded)
    return sizes


def test_levels_the_relaxation_answers_build_only_the_low_ranks_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every level answered by the relaxation: the one CP-SAT model built is the low-ranks run's,
    over fewer patterns than the level model holds (the model over every pattern is not built)."""
    monkeypatch.setattr(per_node, "MOST_NODES", 0)
    sizes = _stated_sizes(monkeypatch)
    ours = solve(_spec([4, 4, 2, 2, 4], (4, 5, 4, 2), (1, 1, 2, 1)), time_limit_s=10, objective={"balance": 10, "nodes": 100, "contiguity": 0})
    assert (ours.method, ours.status, ours.objective) == ("counts", "OPTIMAL", 540)
    assert len(sizes) == 1
    patterns, stated = sizes[0]
    assert 0 < stated < patterns


def _level_model(spec: PlacementSpec, weights: dict[str, int]) -> tuple[LevelModel, np.ndarray]:
    """The level model of ``spec``'s whole-node patterns (``balance`` out of it, as
    ``peak_levels`` builds it) and each node's first rank."""
    problem = count_problem(spec, spec.requests)
    assert isinstance(problem, CountProblem)
    gpus = spec.cluster.gpus_per_node
    found = [shape for part in parts(problem, True) for shape in shapes(problem, gpus, part, lambda _: None, whole=True)]
    loads = whole_loads(problem, found)
    assert loads is not None
    return LevelModel(problem, found, loads, {**weights, "balance": 0}, SolverOptions(), SolverOptions().start()), np.concatenate(([0], np.cumsum(gpus)[:-1]))


@pytest.mark.parametrize(("gpus", "processes", "tp", "weights"), CASES)
def test_low_ranks_over_the_needed_patterns_is_the_least_sum_of_every_pattern(
    gpus: list[int], processes: tuple[int, ...], tp: tuple[int, ...], weights: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At each peak with an answer, the low-ranks run keeps the ``nodes`` value and the peak, and
    its low-ranks sum is the least of the model over every allowed pattern (solved to the end)."""
    built, node_start = _level_model(_spec(gpus, processes, tp), weights)
    low = [(loads - shape.load) * int(node_start[shape.nodes[0]]) for shape, loads in zip(built.shapes, built.loads)]
    sizes = _stated_sizes(monkeypatch)
    checked = 0
    for peak in sorted({int(load) for loads in built.loads for load in loads.tolist()}):
        best = built.solve(peak, None)
        if best is None or best.status == "INFEASIBLE":
            continue
        assert best.status == "OPTIMAL"
        sizes.clear()
        moved = built.low_ranks(best, peak, best.value, node_start)
        assert len(sizes) == 1 and sizes[0][1] <= sum(int((loads <= peak).sum()) for loads in built.loads)
        used = [np.zeros(loads.size, dtype=np.int64) for loads in built.loads]
        for (s, _, p), nodes in moved.uses.items():
            used[s][p] = nodes
        assert sum(int(u @ column.costs) for u, column in zip(used, built.columns)) == best.value
        assert max(int(loads[u > 0].max(initial=0)) for u, loads in zip(used, built.loads)) <= peak
        every = level_model._Stated(built.columns, built.groups, built.least, [np.flatnonzero(loads <= peak) for loads in built.loads])
        level_model._set(every.cap_domain(), best.value, best.value)
        every.minimize(low)
        solver, status = solve_model(every.model, built.options, built.budget)
        assert solver.status_name(status) == "OPTIMAL"
        assert sum(int(u @ cost) for u, cost in zip(used, low)) == int(round(solver.objective_value))
        checked += 1
    assert checked
