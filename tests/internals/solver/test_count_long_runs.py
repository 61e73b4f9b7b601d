"""A count model split by rank base with a run past ``LONG_RUN`` nodes (``counts/level_chords.py``).

Such a model takes chords where its linear relaxation puts each rise level's count, and rows
added lazily. The chords hold at every integer, so the model's optimum must not move: here the
answer with them is proven and equals the answer of the same model without them (the threshold
raised past the cluster), itself proven. The flat model cannot answer clusters of this size, so
the model without chords, proven by CP-SAT, is the reference; the small specs of
``test_count_mixed_kinds.py`` hold it against the flat model and the brute force.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from helpers import declined_first
from test_count_kinds import robot_cluster, weighed

from solver_placement import Cluster, PlacementSpec, Solution, solve
from solver_placement._solver.counts import level_chords, ranked_search
from solver_placement._solver.counts.contiguity import even_runs
from solver_placement._solver.counts.kind_ranks import KindRanks
from solver_placement._solver.evaluate import objective_value


def long_run_spec(seed: int) -> tuple[Cluster, dict[str, Any], dict[str, int]]:
    """Two blocks of alike nodes, the first past ``LONG_RUN``: a window over robots and GPUs (TP
    groups), one over both kinds kept apart from it, and a GPU component kept apart from both,
    as the benchmark's ``mixed kinds contiguity`` family draws them."""
    draw = random.Random(seed)
    first, second = draw.randint(level_chords.LONG_RUN + 1, level_chords.LONG_RUN + 300), draw.randint(2, 200)
    gpus = [8] * (first + second)
    robots = [draw.choice([2, 4])] * first + [draw.choice([1, 2, 3])] * second
    items = sum(gpus) + sum(robots)
    placement: dict[str, Any] = {
        "scout": {"node_group": "robots, cluster", "processes": 2 * draw.randint(items // 12, items // 6), "tensor_parallel_size": 2, "exclusive_with": ["probe", "actor"]},
        "probe": {"node_group": "robots, cluster", "processes": draw.randint(items // 10, items // 5), "exclusive_with": ["actor"]},
        "actor": {"processes": draw.randint(sum(gpus) // 10, sum(gpus) // 5)},
    }
    return robot_cluster(gpus, robots), placement, {"contiguity": 1, "nodes": 1}


def value_of(solution: Solution, objective: dict[str, int]) -> int:
    """The proven count answer's objective, evaluated outside the model."""
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    return objective_value(solution.spec, solution.spec.requests, solution.assignments, weighed(objective), {})


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_long_run_chords_keep_the_models_optimum(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the relaxation's chords the count answer is proven at the optimum of the model
    without them."""
    cluster, placement, objective = long_run_spec(seed)
    spec = PlacementSpec.build(cluster, placement)
    chorded: list[int] = []
    through = ranked_search.with_chords

    def counting(*args: Any) -> Any:
        chorded.append(1)
        return through(*args)

    monkeypatch.setattr(ranked_search, "with_chords", counting)
    with_chords = value_of(solve(spec, time_limit_s=30, objective=objective), objective)
    assert chorded, "the spec has no run past LONG_RUN: the chords were never added"
    monkeypatch.setattr(level_chords, "LONG_RUN", 10**9)
    assert with_chords == value_of(solve(spec, time_limit_s=60, objective=objective), objective)


def test_node_signatures_are_each_nodes_segments() -> None:
    """Each node's signature is its slice of the segments, per class of the part, whatever the
    node's item count; alike nodes share one (each listed once)."""
    draw = np.random.default_rng(5)
    capacities = draw.choice([0, 2, 3], size=40)
    start = np.concatenate(([0], np.cumsum(capacities)[:-1])).astype(np.int64)
    segments = draw.integers(-1, 2, size=(3, int(capacities.sum())))
    ranks = KindRanks(np.zeros_like(segments), frozenset({0}), start, segments)
    index, signatures = ranks.node_signatures((2, 0), capacities)
    assert len(set(signatures)) == len(signatures)
    for node, capacity in enumerate(capacities.tolist()):
        at = slice(int(start[node]), int(start[node]) + capacity)
        assert signatures[index[node]] == (tuple(segments[2, at].tolist()), tuple(segments[0, at].tolist()))


def one_pass_runs(nodes: np.ndarray, bases: np.ndarray) -> list[np.ndarray]:
    """The runs by their definition, node by node: a run's second node always joins it, a later
    one while it rises from the node before by the run's first step, for every row."""
    runs: list[list[int]] = []
    values = bases[:, nodes]
    for i in range(nodes.size):
        if runs and (len(runs[-1]) == 1 or (values[:, i] - values[:, runs[-1][-1]] == values[:, runs[-1][1]] - values[:, runs[-1][0]]).all()):
            runs[-1].append(i)
        else:
            runs.append([i])
    return [nodes[run] for run in runs]


def test_even_runs_are_the_one_pass_runs() -> None:
    """``even_runs`` (by arrays) cuts every drawn node list where the definition does."""
    draw = np.random.default_rng(11)
    for _ in range(2_000):
        nodes = np.sort(draw.choice(30, size=int(draw.integers(0, 12)), replace=False)).astype(np.int64)
        steps = draw.integers(0, 3, size=(int(draw.integers(1, 3)), 30))
        bases = np.cumsum(steps, axis=1) if draw.random() < 0.5 else steps
        found, expected = even_runs(nodes, bases), one_pass_runs(nodes, bases)
        assert [run.tolist() for run in found] == [run.tolist() for run in expected]
