"""The launch plan as plain data: node mapping, bundles, per-process environment."""

from dataclasses import replace

import pytest

from solver_placement import Cluster, PlacementConfigError, PlacementSpec, solve
from solver_placement._ray_launch.launch_plan import NODE_RANK_LABEL, RayNode, map_nodes, stated_ray_nodes, to_ray


def node(rank: int | None, ip: str = "10.0.0.1", gpus: float = 4) -> RayNode:
    labels = {} if rank is None else {NODE_RANK_LABEL: str(rank)}
    return RayNode(f"id{rank}{ip}", ip, {"CPU": 8.0, "GPU": gpus}, labels)


def test_labels_give_ranks_and_missing_nodes_map_to_none() -> None:
    mapped = map_nodes([node(2), node(0)], 3)
    assert [n.node_id if n else None for n in mapped] == ["id010.0.0.1", None, "id210.0.0.1"]


def test_without_labels_nodes_sort_by_ip_and_counts_must_match() -> None:
    mapped = map_nodes([node(None, "10.0.0.10"), node(None, "10.0.0.9")], 2)
    assert [n.ip for n in mapped] == ["10.0.0.9", "10.0.0.10"]
    with pytest.raises(PlacementConfigError, match="the cluster model has 3 nodes but Ray has 2"):
        map_nodes([node(None, "a"), node(None, "b")], 3)


def test_bad_labels_are_rejected() -> None:
    with pytest.raises(PlacementConfigError, match="out-of-model"):
        map_nodes([node(5)], 2)


def test_a_plan_on_a_node_ray_lacks_is_refused_before_reserving() -> None:
    cluster = Cluster(2, 4)
    solution = solve(PlacementSpec.build(cluster, {"a": "4-5"}))
    with pytest.raises(PlacementConfigError, match=r"node 1 of the plan has no Ray node"):
        to_ray(solution.placements_by_component(), cluster, [node(0)])
    plan = to_ray(solve(PlacementSpec.build(cluster, {"a": "0-1"})).placements_by_component(), cluster, [node(0)])
    assert plan.node_ids[1] == "" and [b.item for b in plan.bundles] == ["gpu 0", "gpu 1"]


def test_capacity_is_checked_against_ray_before_reserving() -> None:
    cluster = Cluster(1, 4)
    placements = solve(PlacementSpec.build(cluster, {"a": "0-3"})).placements_by_component()
    with pytest.raises(PlacementConfigError, match=r"node 0 .* needs 12 CPU but has 8"):
        to_ray(placements, cluster, [node(0)], cpus_per_process=3)


def test_every_difference_between_model_and_ray_is_listed_before_reserving() -> None:
    robots = {"type": "franka", "configs": [{"node_rank": 1, "robot_ip": "10.0.0.9"}]}
    cluster = Cluster(3, [8, 4, 0], accelerator_model=["A800", "H100", None], node_groups=[{"label": "arm", "node_ranks": 1, "hardware": robots}])
    live = [
        RayNode("id0", "10.0.0.1", {"CPU": 8.0, "GPU": 4.0, "accelerator_type:A800": 1.0}, {NODE_RANK_LABEL: "0"}),
        RayNode("id1", "10.0.0.2", {"CPU": 8.0, "GPU": 4.0, "accelerator_type:A100": 1.0}, {NODE_RANK_LABEL: "1"}),
    ]
    placements = solve(PlacementSpec.build(cluster, {"a": "0-1", "b": {"node_group": "node", "placement": "2:0"}})).placements_by_component()
    with pytest.raises(PlacementConfigError) as info:
        to_ray(placements, cluster, live)
    assert str(info.value) == (
        "the Ray cluster differs from the cluster model in 4 ways: node 0 (Ray node id0, 10.0.0.1) has 4 GPUs, the model 8; "
        "node 1 (Ray node id1, 10.0.0.2) has A100 GPUs, the model H100; node 1 (Ray node id1, 10.0.0.2) has 0 franka, the model 1; "
        "node 2 of the plan has no Ray node (no Ray node carries solver-placement/node-rank=2; re-plan without it: solver_placement.replan) "
        "(launch on a matching cluster; solve against the live one: Cluster.from_ray; or launch on the embedded Ray shaped like the model: "
        '--local on the command line, address="local" in Python)'
    )


def test_stated_ray_nodes_carry_gpus_robots_and_labels() -> None:
    cluster = Cluster(2, [2, 0], node_groups=[{"label": "r", "node_ranks": 1, "hardware": {"type": "arm", "configs": [{"node_rank": 1}]}}])
    nodes = stated_ray_nodes(cluster)
    assert nodes[0].resources["GPU"] == 2 and nodes[1].resources["arm"] == 1 and nodes[1].labels[NODE_RANK_LABEL] == "1"


def envs(placements: dict, cluster: Cluster | None, nodes: list[RayNode]) -> dict[str, list[dict[str, str]]]:
    plan = to_ray(placements, cluster, nodes)
    return {name: [p.env for p in processes] for name, processes in plan.processes.items()}


def test_local_rank_is_the_device_index_among_the_visible_devices() -> None:
    cluster = Cluster(1, 8)
    solution = solve(PlacementSpec.build(cluster, {"a": "4-7"}))
    isolated = envs({"a": solution.placements("a")}, cluster, [node(0, gpus=8)])["a"]
    assert [(e["CUDA_VISIBLE_DEVICES"], e["LOCAL_RANK"], e["LOCAL_WORLD_SIZE"], e["NODE_LOCAL_RANK"]) for e in isolated[:2]] == [
        ("4", "0", "1", "0"), ("5", "0", "1", "1")]
    # all GPUs visible: LOCAL_RANK selects the process's own GPU among them (not its position on the node)
    shared = envs({"a": solution.placements("a", isolate_accelerator=False)}, cluster, [node(0, gpus=8)])["a"]
    assert [(e["LOCAL_RANK"], e["LOCAL_WORLD_SIZE"], e["NODE_LOCAL_RANK"]) for e in shared] == [
        ("4", "4", "0"), ("5", "4", "1"), ("6", "4", "2"), ("7", "4", "3")]
    assert shared[0]["CUDA_VISIBLE_DEVICES"] == "0,1,2,3,4,5,6,7"


def test_robot_processes_get_their_items_metadata_and_records_alone_plan() -> None:
    robots = {"type": "franka", "configs": [{"node_rank": 0, "robot_ip": "10.0.0.7", "cameras": ["a1"]}, {"node_rank": 0, "robot_ip": "10.0.0.8"}]}
    cluster = Cluster(1, 2, node_groups=[{"label": "arm", "node_ranks": 0, "hardware": robots}])
    solution = solve(PlacementSpec.build(cluster, {"gpu": "0-1", "robot": {"node_group": "arm", "placement": "0-1"}}))
    live = [RayNode("id0", "10.0.0.1", {"CPU": 8.0, "GPU": 2.0, "franka": 2.0}, {NODE_RANK_LABEL: "0"})]
    env = envs(solution.placements_by_component(), cluster, live)
    assert [(e["HARDWARE_TYPE"], e["HARDWARE_CONFIGS"]) for e in env["robot"]] == [
        ("franka", '[{"cameras": ["a1"], "robot_ip": "10.0.0.7"}]'), ("franka", '[{"robot_ip": "10.0.0.8"}]')]
    assert "HARDWARE_CONFIGS" not in env["gpu"][0]
    # without the model, the records and Ray's nodes still make the plan
    without_model = envs(solution.placements_by_component(), None, live)
    assert [e["CUDA_VISIBLE_DEVICES"] for e in without_model["gpu"]] == ["0", "1"]


def test_robot_metadata_comes_from_the_records_so_a_plan_without_the_cluster_keeps_it() -> None:
    robots = {"type": "franka", "configs": [{"node_rank": 1, "robot_ip": "10.0.0.7"}, {"node_rank": 1, "robot_ip": "10.0.0.8"}]}
    cluster = Cluster(2, [1, 0], node_groups=[{"label": "arm", "node_ranks": 1, "hardware": robots}])
    records = solve(PlacementSpec.build(cluster, {"robot": {"node_group": "arm", "placement": "0-1"}})).placements_by_component()
    live = [RayNode("id0", "10.0.0.1", {"CPU": 8.0, "GPU": 1.0}, {NODE_RANK_LABEL: "0"}),
            RayNode("id1", "10.0.0.2", {"CPU": 8.0, "franka": 2.0}, {NODE_RANK_LABEL: "1"})]  # fmt: skip
    expected = ['[{"robot_ip": "10.0.0.7"}]', '[{"robot_ip": "10.0.0.8"}]']
    assert [e["HARDWARE_CONFIGS"] for e in envs(records, None, live)["robot"]] == expected
    assert [e["HARDWARE_CONFIGS"] for e in envs(records, cluster, live)["robot"]] == expected
    # the records are what the plan reads: an edited record's metadata is what the worker gets
    edited = {"robot": [replace(records["robot"][0], hardware_metadata=({"robot_ip": "10.9.9.9"},))]}
    assert envs(edited, None, live)["robot"][0]["HARDWARE_CONFIGS"] == '[{"robot_ip": "10.9.9.9"}]'


def test_idle_gpus_are_reserved_below_the_planned_ones_in_gpu_order() -> None:
    cluster = Cluster(2, 4)
    solution = solve(PlacementSpec.build(cluster, {"a": "2-3", "b": "5"}))
    plan = to_ray(solution.placements_by_component(), cluster, stated_ray_nodes(cluster), idle_gpus={0: {1, 0}, 1: {0}})
    assert [(b.node_rank, b.item, b.idle, b.resources) for b in plan.bundles] == [
        (0, "gpu 0", True, {"GPU": 1.0}), (0, "gpu 1", True, {"GPU": 1.0}),
        (0, "gpu 2", False, {"CPU": 1.0, "GPU": 1.0}), (0, "gpu 3", False, {"CPU": 1.0, "GPU": 1.0}),
        (1, "gpu 0", True, {"GPU": 1.0}), (1, "gpu 1", False, {"CPU": 1.0, "GPU": 1.0}),
    ]  # fmt: skip
    anchors = [(p.bundle_index, p.env["CUDA_VISIBLE_DEVICES"]) for processes in plan.processes.values() for p in processes]
    assert anchors == [(2, "2"), (3, "3"), (5, "1")]
    assert [b.idle for b in to_ray(solution.placements_by_component(), cluster, stated_ray_nodes(cluster)).bundles] == [False] * 3
