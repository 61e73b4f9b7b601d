"""The launch plan as plain data: node mapping, bundles, per-process environment."""

import pytest

from solver_placement import Cluster, PlacementConfigError, PlacementSpec, solve
from solver_placement.ray_launch.plan import NODE_RANK_LABEL, RayNode, map_nodes, modelled_nodes, to_ray


def node(rank: int | None, ip: str = "10.0.0.1", gpus: float = 4) -> RayNode:
    labels = {} if rank is None else {NODE_RANK_LABEL: str(rank)}
    return RayNode(f"id{rank}{ip}", ip, {"CPU": 8.0, "GPU": gpus}, labels)


def test_labels_give_ranks_and_missing_nodes_map_to_none() -> None:
    mapped = map_nodes([node(2), node(0)], 3)
    assert [n.node_id if n else None for n in mapped] == ["id010.0.0.1", None, "id210.0.0.1"]


def test_without_labels_nodes_sort_by_ip_and_counts_must_match() -> None:
    mapped = map_nodes([node(None, "10.0.0.10"), node(None, "10.0.0.9")], 2)
    assert [n.ip for n in mapped] == ["10.0.0.9", "10.0.0.10"]
    with pytest.raises(PlacementConfigError, match="the cluster model has 3 node.s. but Ray has 2"):
        map_nodes([node(None, "a"), node(None, "b")], 3)


def test_bad_labels_are_rejected() -> None:
    with pytest.raises(PlacementConfigError, match="out-of-model"):
        map_nodes([node(5)], 2)


def test_a_plan_on_a_node_ray_lacks_is_refused_before_reserving() -> None:
    cluster = Cluster(2, 4)
    solution = solve(PlacementSpec.build(cluster, {"a": "4-5"}))
    with pytest.raises(PlacementConfigError, match=r"node\(s\) \[1\] of the plan have no Ray node"):
        to_ray(solution.placements_by_component(), cluster, [node(0)])
    plan = to_ray(solve(PlacementSpec.build(cluster, {"a": "0-1"})).placements_by_component(), cluster, [node(0)])
    assert plan.node_ids[1] == "" and [b.item for b in plan.bundles] == ["gpu 0", "gpu 1"]


def test_capacity_is_checked_against_ray_before_reserving() -> None:
    cluster = Cluster(1, 8)
    with pytest.raises(PlacementConfigError, match="node 0 .* needs 8 GPU but has 4"):
        to_ray(solve(PlacementSpec.build(cluster, {"a": "0-7"})).placements_by_component(), cluster, [node(0)])


def test_modelled_nodes_carry_gpus_robots_and_labels() -> None:
    cluster = Cluster(2, [2, 0], node_groups=[{"label": "r", "node_ranks": 1, "hardware": {"type": "arm", "configs": [{"node_rank": 1}]}}])
    nodes = modelled_nodes(cluster)
    assert nodes[0].resources["GPU"] == 2 and nodes[1].resources["arm"] == 1 and nodes[1].labels[NODE_RANK_LABEL] == "1"
