"""The cluster model of a Ray cluster's nodes, from plain node data (no Ray): order, GPUs, GPU
models, custom resources as hardware items, labels as topology labels and node groups."""

from __future__ import annotations

import pytest

from solver_placement import Cluster, LaunchError, PlacementConfigError
from solver_placement._cluster.ray_nodes import NODE_RANK_LABEL, RayNode, ray_cluster_kwargs


def node(ip: str, resources: dict[str, float], **labels: str) -> RayNode:
    return RayNode(f"id-{ip}", ip, {"CPU": 8.0, **resources}, labels)


NODES = [
    node("10.0.0.10", {"GPU": 2, "accelerator_type:H100": 1}, zone="east"),
    node("10.0.0.9", {"GPU": 4, "accelerator_type:A800": 1, "memory": 1e9}, zone="east", **{"ray.io/node-id": "x"}),
    node("10.0.0.11", {"franka": 2, "node:10.0.0.11": 1}, zone="west"),
]


def test_nodes_without_rank_labels_are_ordered_by_ip_and_read_into_the_model() -> None:
    cluster = Cluster(**ray_cluster_kwargs(NODES, group_by_labels=["zone"]))
    assert cluster.gpus_per_node.tolist() == [4, 2, 0] and cluster.accelerator_models == ("A800", "H100", None)
    assert cluster.node_labels == [{"zone": "east"}, {"zone": "east"}, {"zone": "west"}]  # Ray's own labels dropped
    assert cluster.node_groups["east"].node_ranks == (0, 1) and cluster.node_groups["west"].node_ranks == (2,)
    franka = cluster.node_groups["franka"]
    assert (franka.node_ranks, franka.hardware_type) == ((2,), "franka")
    assert [dict(cluster.hw_metadata[hw]) for hw in sorted(cluster.hw_metadata)] == [{"ray_index": 0}, {"ray_index": 1}]


def test_rank_labels_decide_the_order_and_must_number_every_node_once() -> None:
    labelled = [node("10.0.0.1", {"GPU": 1}, **{NODE_RANK_LABEL: "1"}), node("10.0.0.2", {"GPU": 2}, **{NODE_RANK_LABEL: "0"})]
    assert ray_cluster_kwargs(labelled)["num_gpus_per_node"] == [2, 1]
    with pytest.raises(LaunchError, match=r"must number every alive node 0..1 once; 1 of 2 nodes carries ranks 0"):
        ray_cluster_kwargs([labelled[1], node("10.0.0.3", {})])
    with pytest.raises(LaunchError, match="no alive node"):
        ray_cluster_kwargs([])


def test_grouping_by_a_label_no_node_carries_is_refused() -> None:
    with pytest.raises(LaunchError, match="group_by_labels: no Ray node carries the label 'rack'"):
        ray_cluster_kwargs(NODES, group_by_labels=["rack"])


def test_ray_s_labels_give_gpu_models_node_groups_and_topology_and_reservations_are_not_hardware() -> None:
    pg = "8ae1405d7dfa0040608ac4e8683801000000"
    nodes = [
        node("10.0.0.1", {"GPU": 8, f"GPU_group_{pg}": 2, f"GPU_group_0_{pg}": 1, f"bundle_group_{pg}": 2000},
             **{"ray.io/accelerator-type": "H100", "ray.io/node-id": "a", "rack": "r1", "solver-placement/group.train": "true"}),
        node("10.0.0.2", {"GPU": 8, "accelerator_type:A100": 1}, **{"ray.io/availability-zone": "z2", "rack": "r2"}),
    ]  # fmt: skip
    kwargs = ray_cluster_kwargs(nodes)
    cluster = Cluster(**kwargs)
    assert cluster.accelerator_models == ("H100", "A100") and not cluster.free_gpus_only
    assert cluster.node_labels == [{"ray.io/accelerator-type": "H100", "rack": "r1"}, {"ray.io/availability-zone": "z2", "rack": "r2"}]
    assert [group["label"] for group in kwargs["node_groups"]] == ["train"] and cluster.node_groups["train"].node_ranks == (0,)
    by_model = Cluster(**ray_cluster_kwargs(nodes, group_by_labels=["ray.io/accelerator-type"]))
    assert by_model.node_groups["H100"].node_ranks == (0,)
    assert Cluster(**ray_cluster_kwargs(nodes, available=True)).free_gpus_only


def test_a_resource_amount_past_the_item_limit_is_refused_before_any_item_is_made() -> None:
    huge = RayNode("n0", "10.0.0.1", {"GPU": 8, "topo_rank": 10**12})
    with pytest.raises(PlacementConfigError, match=r"Ray node 0 \(n0\): its amount of resource 'topo_rank' .* above the limit max_items_per_node="):
        ray_cluster_kwargs([huge])
    assert Cluster(**ray_cluster_kwargs([RayNode("n0", "10.0.0.1", {"GPU": 8, "topo_rank": 3})])).items_per_node("topo_rank").tolist() == [3]
