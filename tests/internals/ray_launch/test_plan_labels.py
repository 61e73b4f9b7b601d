"""How a plan tells Ray where its bundles go, as plain data (no Ray): the label scheme and its
fallback, required topology domains (selectors, placement groups, refused nodes) and a model of
the free GPUs only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_install_core import CLI, blocked

from solver_placement import Cluster, PlacementConfigError, PlacementSpec, Solution, solve
from solver_placement._cluster.ray_nodes import ACCELERATOR_TYPE_LABEL, NODE_ID_LABEL, NODE_RANK_LABEL, RayNode
from solver_placement._ray_launch.domain_groups import required_domains
from solver_placement._ray_launch.free_gpus import with_given_devices
from solver_placement._ray_launch.labels import cluster_node_labels
from solver_placement._ray_launch.launch_plan import RayLaunchPlan, stated_ray_nodes, to_ray

RACKS = Cluster(
    3, 2, accelerator_model="A800", node_labels=[{"rack": "r1"}, {"rack": "r1"}, {"rack": "r2"}],
    node_groups=[{"label": "train", "node_ranks": "0-2"}],
)  # fmt: skip
TP_IN_RACK = {
    "actor": {"node_group": "train", "processes": 4, "tensor_parallel_size": 4, "topology": {"tensor_parallel": {"rack": "require"}}},
    "reward": {"node_group": "train", "processes": 2, "exclusive_with": ["actor"]},
}


def planned(solution: Solution, nodes: list[RayNode] | None = None, topology_strategy: bool = False) -> RayLaunchPlan:
    return to_ray(
        solution.placements_by_component(), solution.cluster, nodes or stated_ray_nodes(solution.cluster),
        required_domains=required_domains(solution.spec), topology_strategy=topology_strategy,
    )  # fmt: skip


def unlabelled(cluster: Cluster) -> list[RayNode]:
    """The model's nodes as a Ray cluster started without our labels (topology labels kept)."""
    return [
        RayNode(f"id{rank}", f"10.0.0.{rank + 1}", {**node.resources, "accelerator_type:A800": 1.0}, dict(cluster.node_labels[rank]))
        for rank, node in enumerate(stated_ray_nodes(cluster))
    ]


def test_a_model_node_carries_its_rank_groups_gpu_model_and_topology_as_labels() -> None:
    robots = {"type": "franka", "configs": [{"node_rank": 2}]}
    cluster = Cluster(3, [2, 2, 0], accelerator_model=["A800", "H100 80GB", None], node_labels=[{"rack": "r1"}, {}, {}],
                      node_groups=[{"label": "train", "node_ranks": "0-1"}, {"label": "arm", "node_ranks": 2, "hardware": robots},
                                   {"label": "not a label", "node_ranks": 0}])  # fmt: skip
    assert cluster_node_labels(cluster, 0) == {
        "rack": "r1", NODE_RANK_LABEL: "0", "solver-placement/group.train": "true", ACCELERATOR_TYPE_LABEL: "A800"}
    # a GPU model Ray would refuse as a label value is left out; a robot group is its resource, not a label
    assert cluster_node_labels(cluster, 1) == {NODE_RANK_LABEL: "1", "solver-placement/group.train": "true"}
    assert cluster_node_labels(cluster, 2) == {NODE_RANK_LABEL: "2"}


def test_labelled_nodes_give_the_label_scheme_and_selectors_name_no_node_id() -> None:
    plan = planned(solve(PlacementSpec.build(RACKS, {"a": {"node_group": "train", "placement": "0-2"}})))
    assert plan.scheme == "labels" and NODE_RANK_LABEL in plan.scheme_reason
    assert [b.label_selector for b in plan.bundles] == [
        {NODE_RANK_LABEL: "0", ACCELERATOR_TYPE_LABEL: "A800", "solver-placement/group.train": "true"},
        {NODE_RANK_LABEL: "0", ACCELERATOR_TYPE_LABEL: "A800", "solver-placement/group.train": "true"},
        {NODE_RANK_LABEL: "1", ACCELERATOR_TYPE_LABEL: "A800", "solver-placement/group.train": "true"},
    ]
    assert [b.resources for b in plan.bundles] == [{"CPU": 1.0, "GPU": 1.0}] * 3
    assert [(g.bundles, g.strategy, g.topology_strategy) for g in plan.placement_groups] == [([0, 1, 2], "PACK", None)]


def test_nodes_without_rank_labels_fall_back_to_node_ids_and_gpu_model_resources() -> None:
    solution = solve(PlacementSpec.build(RACKS, {"a": {"node_group": "train", "placement": "2"}}))
    plan = planned(solution, unlabelled(RACKS))
    assert plan.scheme == "resources" and "IP order" in plan.scheme_reason
    assert [(b.label_selector, b.resources) for b in plan.bundles] == [
        ({NODE_ID_LABEL: "id1"}, {"CPU": 1.0, "GPU": 1.0, "accelerator_type:A800": 0.001})]


def test_a_required_domain_adds_its_label_and_ray_s_topology_strategy_where_ray_has_it() -> None:
    solution = solve(PlacementSpec.build(RACKS, TP_IN_RACK))
    actor_nodes = {p.cluster_node_rank for p in solution.placements("actor")}
    rack = RACKS.node_labels[min(actor_nodes)]["rack"]
    assert {RACKS.node_labels[n]["rack"] for n in actor_nodes} == {rack}
    by_selectors = planned(solution)
    assert [g.topology_strategy for g in by_selectors.placement_groups] == [None]  # one group: the label selectors hold the domain
    for bundle in by_selectors.bundles:
        assert bundle.label_selector.get("rack") == (rack if bundle.node_rank in actor_nodes else None)
    by_strategy = planned(solution, topology_strategy=True)
    domain_groups = [g for g in by_strategy.placement_groups if g.domain]
    assert [(g.domain, g.topology_strategy, g.strategy) for g in by_strategy.placement_groups] == [
        ({}, None, "PACK"), ({"rack": rack}, {NODE_ID_LABEL: "PACK", "rack": "STRICT_PACK"}, None)]  # the reward outside, the actor inside
    assert sorted(i for g in by_strategy.placement_groups for i in g.bundles) == list(range(len(by_strategy.bundles)))
    assert {by_strategy.bundles[i].node_rank for i in domain_groups[0].bundles} == actor_nodes
    slots = by_strategy.slots()
    assert sorted(slots) == sorted({(g, i) for g, group in enumerate(by_strategy.placement_groups) for i in range(len(group.bundles))})


def test_nodes_whose_required_domain_label_ray_lacks_are_named_before_reserving() -> None:
    solution = solve(PlacementSpec.build(RACKS, TP_IN_RACK))
    nodes = stated_ray_nodes(RACKS)
    stripped = [RayNode(n.node_id, n.ip, n.resources, {k: v for k, v in n.labels.items() if k != "rack"}) for n in nodes]
    with pytest.raises(PlacementConfigError, match=r"Ray cannot see on \d node labels?: node \d \(Ray node model-node-\d, node-\d\) carries no 'rack' label, "
                       r"which actor requires there.*label the nodes"):  # fmt: skip
        planned(solution, stripped)
    moved = [RayNode(n.node_id, n.ip, n.resources, {**n.labels, "rack": "r9"}) for n in nodes]
    with pytest.raises(PlacementConfigError, match=r"has rack=r9 on Ray but rack=r\d in the model"):
        planned(solution, moved)
    # a rule on groups of one process states nothing to hold, so it needs no label
    single = solve(PlacementSpec.build(RACKS, {"a": {"processes": 2, "topology": {"tensor_parallel": {"rack": "require"}}}}))
    assert required_domains(single.spec) == {} and planned(single, stripped).placement_groups[0].domain == {}


def test_a_model_of_the_free_gpus_reserves_every_id_a_process_sees_and_takes_the_devices_ray_gives() -> None:
    free = Cluster(2, [4, 2], free_gpus_only=True)
    solution = solve(PlacementSpec.build(free, {"a": "1-2", "env": {"node_group": "node", "placement": "1:0"}}))
    plan = planned(solution)
    assert plan.free_gpus_only
    assert [(b.node_rank, b.item, b.idle) for b in plan.bundles] == [
        (0, "gpu 1", False), (0, "gpu 2", False), (1, "gpu 0", True), (1, "gpu 1", True), (1, "cpu env/0", False)]
    # another job holds GPUs 0 and 2 of node 0 and GPU 0 of node 1: Ray hands out what is free
    given = with_given_devices(plan, [["1"], ["3"], ["1"], ["2"], []])
    a, env = given.processes["a"], given.processes["env"][0]
    assert [(p.env["CUDA_VISIBLE_DEVICES"], p.env["LOCAL_HARDWARE_RANKS"], p.env["LOCAL_RANK"]) for p in a] == [("1", "1", "0"), ("3", "3", "0")]
    assert (env.env["CUDA_VISIBLE_DEVICES"], env.env["LOCAL_HARDWARE_RANKS"]) == ("1,2", "")


def test_free_gpus_only_is_a_bool_and_excludes_a_per_device_gpu_topology() -> None:
    with pytest.raises(PlacementConfigError, match="free_gpus_only must be true or false"):
        Cluster(1, 2, free_gpus_only="yes")  # type: ignore[arg-type]
    with pytest.raises(PlacementConfigError, match="cannot describe them: give one or the other"):
        Cluster(1, 2, gpu_topology={"egl_devices": [1, 0]}, free_gpus_only=True)
    assert Cluster.from_config({"num_nodes": 1, "num_gpus_per_node": 2, "free_gpus_only": True}).free_gpus_only


def test_a_dry_run_without_ray_plans_a_required_domain_the_way_every_ray_of_the_range_can(tmp_path: Path) -> None:
    model = tmp_path / "racks.yaml"
    model.write_text(
        "cluster:\n  num_nodes: 2\n  num_gpus_per_node: 2\n  node_labels: [{rack: r1}, {rack: r1}]\n  component_placement:\n"
        "    actor: {processes: 4, tensor_parallel_size: 4, topology: {tensor_parallel: {rack: require}}}\n"
    )
    result = blocked(CLI, "launch", str(model), "--format", "json")
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    assert [(g["strategy"], g["topology_strategy"]) for g in plan["placement_groups"]] == [("PACK", None)]
    assert {b["label_selector"]["rack"] for b in plan["bundles"]} == {"r1"}
