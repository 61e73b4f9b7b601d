"""A component placement is solved once: the strategies it hands out serve their placements from
its solution, and give exactly what solving them alone would give."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import MODELS, config

from solver_placement import (
    Assignment,
    Cluster,
    FlexiblePlacementStrategy,
    HybridComponentPlacement,
    ModelParallelComponentPlacement,
    NodePlacementStrategy,
    PackedPlacementStrategy,
    PlacementSpec,
    Solution,
    solve,
)
from solver_placement._frontends.rlinf.stated_layout import in_normal_form, packed_ranks


def hybrid(placement: dict, num_nodes: int = 2, gpus: int = 4) -> tuple[HybridComponentPlacement, Cluster]:
    section = config(num_nodes, gpus, placement)["cluster"]
    cluster = Cluster.from_config(section)
    return HybridComponentPlacement({"cluster": section}, cluster), cluster


def same_records(first: list, second: list) -> bool:
    """The very same record objects (served lists are fresh per call; the records are not)."""
    return len(first) == len(second) and all(a is b for a, b in zip(first, second))


def alone(strategy, cluster: Cluster, isolate: bool = True) -> list:
    """What solving the strategy by itself gives (a fresh solve, never the served solution)."""
    return strategy.solve(cluster).placements(strategy.name, isolate)


def test_get_placement_is_served_from_the_placements_solution() -> None:
    cp, cluster = hybrid({"actor,rollout": "0-7", "env": "0-7:0-15", "cpu": {"node_group": "node", "placement": "0-1:0-3"}})
    for name in cp.components:
        strategy = cp.get_strategy(name)
        served = strategy.get_placement(cluster)
        assert same_records(served, cp.get_placements(strategy.name))  # the very records of the one solve
        assert served == alone(strategy, cluster)
        assert strategy.get_placement(cluster, False) == alone(strategy, cluster, False)
    assert isinstance(cp.get_strategy("cpu"), NodePlacementStrategy)
    assert isinstance(cp.get_strategy("env"), FlexiblePlacementStrategy)


def test_solved_strategies_read_like_constructed_ones() -> None:
    cp, _ = hybrid({"a": "0-3:0-1", "b": "4-7:0-7"})
    strategy = cp.get_strategy("a")
    assert isinstance(strategy, FlexiblePlacementStrategy) and strategy.hardware_ranks_list == [[0, 1], [2, 3]]
    assert repr(cp.get_strategy("b")) == repr(FlexiblePlacementStrategy([[4], [4], [5], [5], [6], [6], [7], [7]], ["cluster"]))


def test_another_cluster_is_solved_anew() -> None:
    cp, cluster = hybrid({"a": "0-3"})
    strategy = cp.get_strategy("a")
    other = Cluster.from_config(config(2, 4, {})["cluster"])
    assert not same_records(strategy.get_placement(other), strategy.get_placement(cluster))
    assert strategy.get_placement(other) == strategy.get_placement(cluster)


@pytest.mark.unverified_solutions  # the point is a poisoned answer
def test_an_order_rlinf_would_sort_is_not_served() -> None:
    # a solution whose processes are out of first-rank order (the grammar never gives one, so it
    # is made by hand): RLinf's strategy sorts them, so serving the solution's records would
    # differ; the strategy solves its sorted layout instead
    cluster = Cluster(1, 4)
    solved = solve(PlacementSpec.build(cluster, {"a": "0-3:0-1"}))
    ranks = np.array([2, 3, 0, 1])
    swapped = Assignment(np.array([0, 2, 4]), solved.spec.resources_of("a").physical[ranks], ranks, cluster.num_hardware)
    unsorted = Solution(solved.spec, solved.requests, {"a": swapped}, solved.status, None)
    strategy = FlexiblePlacementStrategy.from_solution(unsorted, "a")
    assert strategy.hardware_ranks_list == [[0, 1], [2, 3]]
    assert [p.local_hardware_ranks for p in strategy.get_placement(cluster)] == [[0, 1], [2, 3]]
    assert [p.local_hardware_ranks for p in unsorted.placements("a")] == [[2, 3], [0, 1]]


def test_model_parallel_layouts_are_served() -> None:
    cp = ModelParallelComponentPlacement(str(MODELS / "modelparallel_disaggregated_2x8.yaml"))
    for name in ("actor", "rollout", "inference"):
        strategy = cp.get_strategy(name)
        assert same_records(strategy.get_placement(cp.cluster), cp.get_placements(name))
        assert strategy.get_placement(cp.cluster) == alone(strategy, cp.cluster)


def test_serve_refuses_a_solution_that_does_not_hold_the_stated_layout() -> None:
    cluster = Cluster(1, 8)
    solution = solve(PlacementSpec.build(cluster, {"a": "0-3", "b": {"node_group": "node", "placement": "0"}}))
    assert not PackedPlacementStrategy(0, 7, name="a").serve(solution)  # other ranks
    assert not PackedPlacementStrategy(0, 3, 2, name="a").serve(solution)  # other processes
    assert not PackedPlacementStrategy(0, 3, name="c").serve(solution)  # no such component
    assert not PackedPlacementStrategy(0, 0, node_group="node", name="b").serve(solution)  # nodes: fails as solving would
    assert not NodePlacementStrategy([3], name="b").serve(solution)
    assert PackedPlacementStrategy(0, 3, name="a").serve(solution) and NodePlacementStrategy([0], "node", name="b").serve(solution)


def test_packed_ranks_are_rlinfs_blocks() -> None:
    indptr, ranks = packed_ranks(0, 4, 2, 2)
    assert np.split(ranks, indptr[1:-1]) and [r.tolist() for r in np.split(ranks, indptr[1:-1])] == [[0, 2], [1, 3], [4, 6], [5, 7]]
    assert packed_ranks(3, 2, 1, 1)[1].tolist() == [3, 4]


def test_normal_form_is_rlinfs_sort() -> None:
    assert in_normal_form(np.array([0, 2, 4]), np.array([0, 1, 2, 3]))
    assert in_normal_form(np.array([0, 1, 2]), np.array([0, 0]))  # processes sharing a rank
    assert not in_normal_form(np.array([0, 2, 4]), np.array([1, 0, 2, 3]))  # ranks unsorted in a process
    assert not in_normal_form(np.array([0, 2, 4]), np.array([2, 3, 0, 1]))  # processes out of order
