"""The cluster as frozen typed values (``ClusterLayout``): read once, derived by editing them, and
shown in one short line."""

from __future__ import annotations

import dataclasses

import pytest

from solver_placement import Cluster, PlacementConfigError
from solver_placement._cluster.derive import gpus_layout
from solver_placement._cluster.layout import ClusterLayout, GroupSpec
from solver_placement._cluster.ranks import format_ranks

ROBOTS = {"label": "robots", "node_ranks": [1, 2], "hardware": {"type": "Franka", "configs": [{"node_rank": 1}, {"node_rank": 2}, {"node_rank": 2, "arm": 1}]}}


def test_the_section_is_held_as_typed_values_and_no_raw_config() -> None:
    cluster = Cluster(num_nodes=3, num_gpus_per_node=[8, 8, 0], accelerator_type="AMD_GPU", node_groups=[ROBOTS], gpu_memory_gb=80)
    assert not hasattr(cluster, "config")
    layout = cluster.layout
    assert isinstance(layout, ClusterLayout) and layout.gpus == (8, 8, 0)
    assert layout.accelerator_types == ("AMD_GPU",) * 3 and cluster.accelerator_types == ("AMD_GPU", "AMD_GPU", "NO_ACCEL")
    (robots,) = layout.groups
    assert isinstance(robots, GroupSpec) and robots.custom_type == "Franka" and list(robots.items.node_ranks) == [1, 2, 2]
    assert layout.shared == frozenset({"accelerator_type", "accelerator_model", "gpu_memory_gb", "node_labels"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        layout.num_nodes = 4  # type: ignore[misc]


def test_a_node_given_gpus_again_gets_its_stated_type_and_its_groups_count_gpus() -> None:
    cluster = Cluster(num_nodes=2, num_gpus_per_node=[8, 0], accelerator_type=["NV_GPU", "AMD_GPU"], node_groups=[{"label": "b", "node_ranks": [1]}])
    assert cluster.node_group("b").hardware_type is None
    regrown = cluster.without_nodes({0}).with_gpus_per_node([8, 4])
    assert regrown.accelerator_types == ("NV_GPU", "AMD_GPU") and regrown.node_group("b").hardware_type == "Accelerator"


def test_derived_gpu_counts_are_checked_against_the_stated_topology() -> None:
    cluster = Cluster(2, 4, gpu_topology={"egl_devices": [3, 2, 1, 0]})
    assert cluster.with_extra_node(1).gpu_topology[2] is cluster.gpu_topology[0]
    with pytest.raises(PlacementConfigError, match=r"^cluster.gpu_topology \(node 1, 2 GPUs\): egl_devices lists 4 values but the node has 2 GPUs"):
        cluster.with_gpus_per_node([4, 2])


def test_derived_clusters_carry_each_robot_with_its_config() -> None:
    """A group's items are columns (``HardwareItems``): a node lost takes its robots and their
    configs with it, a node added like another gets copies of that node's, on the new node."""
    cluster = Cluster(num_nodes=3, num_gpus_per_node=[8, 8, 0], node_groups=[ROBOTS])
    def robots(derived: Cluster) -> list[tuple[int, dict]]:
        return [(int(derived.hw_node[hw]), derived.hw_metadata[hw]) for hw in derived.resources(["robots"]).physical.tolist()]
    assert robots(cluster) == [(1, {}), (2, {}), (2, {"arm": 1})]
    assert robots(cluster.without_nodes({2})) == [(1, {})]
    assert robots(cluster.with_extra_node(2)) == [(1, {}), (2, {}), (2, {"arm": 1}), (3, {}), (3, {"arm": 1})]
    assert cluster.with_extra_node(0).layout.groups[0].items == cluster.layout.groups[0].items  # node 0 holds none


def test_losing_nodes_keeps_env_configs_stated_as_all() -> None:
    cluster = Cluster(3, 8, node_groups=[{"label": "g", "node_ranks": "all", "env_configs": [{"node_ranks": "all", "env_vars": {"A": "1"}}]}])
    (env,) = cluster.without_nodes({1}).node_group("g").env_configs
    assert env.node_ranks == (0, 2) and env.env_vars == {"A": "1"}


def test_a_survivors_label_is_checked_as_a_stated_label() -> None:
    cluster = Cluster(3, 8, node_groups=[{"label": "g", "node_ranks": "0-1"}])
    with pytest.raises(PlacementConfigError, match="label 'g' is used twice"):
        cluster.without_nodes({1}, "g")
    with pytest.raises(PlacementConfigError, match="the label 'node' is reserved"):
        cluster.without_nodes({1}, "node")


def test_a_section_stating_the_node_count_spreads_single_values_and_refuses_per_node_lists() -> None:
    assert Cluster(2, 4, gpu_memory_gb=80).under_section({"num_nodes": 3}).gpu_memory_gb == [80.0] * 3
    with pytest.raises(PlacementConfigError, match="cluster.num_gpus_per_node lists 2 values but the cluster has 3 nodes"):
        Cluster(2, [4, 4]).under_section({"num_nodes": 3})
    with pytest.raises(PlacementConfigError, match="node group 'g': node_ranks \"1\" is out of range; the only valid rank is 0"):
        Cluster(2, 4, node_groups=[{"label": "g", "node_ranks": [0, 1]}]).under_section({"num_nodes": 1})


def test_repr_is_one_short_line_of_runs_and_groups() -> None:
    assert repr(Cluster(2, 8)) == "Cluster(2 nodes x 8 NV_GPU)"
    cluster = Cluster(3, [8, 8, 0], accelerator_model="H100", node_groups=[{"label": "gpu", "node_ranks": "0-1"}, ROBOTS], free_gpus_only=True)
    assert repr(cluster) == (
        "Cluster(3 nodes: 0 x 8 NV_GPU H100, 1 x 8 NV_GPU H100 +1 Franka, 2 x 0 GPUs +2 Franka; "
        "groups: gpu 0-1, robots 1-2 (Franka); free GPUs only)"
    )


def test_repr_of_a_large_cluster_is_bounded() -> None:
    groups = [{"label": f"g{i}", "node_ranks": list(range(i, 4000, 7))} for i in range(7)]
    cluster = Cluster(4000, [8, 4] * 2000, node_groups=groups)
    text = repr(cluster)
    assert text == repr(Cluster(4000, [8, 4] * 2000, node_groups=groups))
    assert len(text) < 200 and text.startswith("Cluster(4000 nodes: 0 x 8 NV_GPU, 1 x 4 NV_GPU,")
    assert "+3996 more runs" in text and "g0 (572 nodes)" in text and "+3 more groups" in text


def test_a_section_stating_the_node_count_rereads_groups_stated_for_all_nodes() -> None:
    group = {"label": "a", "node_ranks": "all", "env_configs": [{"node_ranks": "all", "env_vars": {"B": "2"}}]}
    grown = Cluster(2, 4, node_groups=[group]).under_section({"num_nodes": 3})
    assert grown.node_group("a").node_ranks == (0, 1, 2) and grown.node_group("a").env_configs[0].node_ranks == (0, 1, 2)
    robots = {"label": "h", "node_ranks": "all", "hardware": {"type": "Arm", "configs": [{"node_rank": 0}, {"node_rank": 2}]}}
    with pytest.raises(PlacementConfigError, match=r"node group 'h': hardware.configs\[1\] names node_rank 2, which is not in the group's node_ranks"):
        Cluster(3, 4, node_groups=[robots]).under_section({"num_nodes": 2})
    with pytest.raises(PlacementConfigError, match="node group 'p': node_ranks \"0-1\" is out of range; the only valid rank is 0"):
        Cluster(2, 4, node_groups=[{"label": "p", "node_ranks": ["0-1"]}]).under_section({"num_nodes": 1})


@pytest.mark.parametrize(
    ("gpus", "labels", "groups"),
    [
        ([8, 0, 3], [{}, {"rack": "a"}, {"rack": "b", "zone": "1"}], {"robots (view)": [1, 2], "cluster (view)": [0, 1, 2]}),
        ([2, 2, 2, 2, 2], [{}] * 5, {"a (view)": [0, 1, 3], "b (view)": [4]}),
        ([1], [{}], {}),
    ],
)
def test_a_gpus_only_layout_is_what_its_config_states(gpus: list[int], labels: list[dict[str, str]], groups: dict[str, list[int]]) -> None:
    """``derive.gpus_layout`` (the count model's views of items of other kinds) states the same
    typed values as the keyword arguments it stands for, read by the schema."""
    stated = [{"label": label, "node_ranks": format_ranks(ranks), "hardware_type": "Accelerator"} for label, ranks in groups.items()]
    assert gpus_layout(labels, gpus, groups) == Cluster(len(gpus), gpus, node_labels=labels, node_groups=stated).layout


@pytest.mark.parametrize(
    ("stated", "message"),
    [
        ({"num_gpus_per_node": [8, 8, 2.5, 8, -1]}, r"cluster\.num_gpus_per_node\[2\]"),
        ({"num_gpus_per_node": [8, True, 8, True]}, r"cluster\.num_gpus_per_node\[1\]"),  # true is not 1
        ({"gpu_memory_gb": [80, 80.0, 40, 0, 80, -3]}, r"cluster\.gpu_memory_gb\[3\] must be a positive number of GB"),
        ({"gpu_memory_gb": [80, float("nan"), float("nan")]}, r"cluster\.gpu_memory_gb\[1\]"),
        ({"accelerator_type": ["A", "A", None, "B"]}, r"cluster\.accelerator_type\[2\]"),
    ],
)
def test_a_per_node_list_is_refused_at_its_first_wrong_value(stated: dict, message: str) -> None:
    """A list of scalars is read once per distinct value (``schema.read_each``), and still names
    the first wrong entry, as reading it value by value does."""
    nodes = len(next(iter(stated.values())))
    with pytest.raises(PlacementConfigError, match=message):
        Cluster(num_nodes=nodes, **stated)


def test_a_per_node_list_keeps_each_value_as_read() -> None:
    cluster = Cluster(num_nodes=4, num_gpus_per_node=[8, 4, 8, 0], gpu_memory_gb=[80, 80.5, 80, None], accelerator_model=["H100", "A100", "H100", None])
    assert cluster.layout.gpus == (8, 4, 8, 0) and cluster.gpu_memory_gb == [80.0, 80.5, 80.0, None]
    assert cluster.accelerator_models == ("H100", "A100", "H100", None)
