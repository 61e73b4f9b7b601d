import pytest
from omegaconf import OmegaConf

from solver_placement import Cluster, PlacementConfigError


def hetero() -> Cluster:
    return Cluster(
        num_nodes=4,
        num_gpus_per_node=[8, 4, 0, 2],
        accelerator_type=["NV_GPU", "NV_GPU", "NV_GPU", "AMD_GPU"],
        node_groups=[
            {"label": "a800", "node_ranks": 0},
            {"label": "mixed", "node_ranks": [1, 3]},
            {"label": "robot", "node_ranks": "2-3", "hardware": {"type": "franka", "configs": [
                {"node_rank": 3, "robot_ip": "10.0.0.3"}, {"node_rank": 2, "robot_ip": "10.0.0.1"}, {"node_rank": 2, "robot_ip": "10.0.0.2"}]}},
            {"label": "cpu", "node_ranks": "0,2", "ignore_hardware": True},
        ],
    )


def test_group_ranks_count_the_right_resources() -> None:
    cluster = hetero()
    assert len(cluster.resources(["a800"])) == 8
    mixed = cluster.resources(["mixed"])
    assert cluster.hw_node[mixed.physical].tolist() == [1] * 4 + [3] * 2
    assert cluster.hw_local[mixed.physical].tolist() == [0, 1, 2, 3, 0, 1]
    robots = cluster.resources(["robot"])
    assert cluster.hw_node[robots.physical].tolist() == [2, 2, 3]  # node order, then config order
    assert [cluster.hw_metadata[int(h)]["robot_ip"] for h in robots.physical] == ["10.0.0.1", "10.0.0.2", "10.0.0.3"]
    assert cluster.hw_node[cluster.resources(["cpu"]).physical].tolist() == [0, 2]
    assert len(cluster.resources(["node"])) == 4 and len(cluster.resources(["cluster"])) == 14


def test_item_configs_are_looked_up_by_physical_id_only() -> None:
    """``hw_metadata`` makes an item's config when asked (no mapping per robot built): every id of
    a custom item, and nothing else (a GPU, a node's own item, a negative id, not an id at all)."""
    cluster = hetero()
    robots = cluster.resources(["robot"]).physical.tolist()
    assert list(cluster.hw_metadata) == sorted(robots) and len(cluster.hw_metadata) == 3
    assert dict(cluster.hw_metadata) == {hw: {"robot_ip": f"10.0.0.{i}"} for i, hw in enumerate(robots, start=1)}
    for other in (0, cluster.num_hardware - 1, -1, "13", 13.0):
        assert other not in cluster.hw_metadata and cluster.hw_metadata.get(other) is None
    cluster.hw_metadata[robots[0]]["robot_ip"] = "changed"  # a copy: the cluster keeps its own
    assert cluster.hw_metadata[robots[0]] == {"robot_ip": "10.0.0.1"}


def test_several_groups_number_in_listed_order() -> None:
    cluster = hetero()
    both = cluster.resources(["mixed", "a800"])
    assert cluster.hw_node[both.physical].tolist() == [1] * 4 + [3] * 2 + [0] * 8
    assert both.group_of.tolist() == [0] * 6 + [1] * 8


def test_count_nodes_ranks_the_groups_nodes() -> None:
    assert hetero().hw_node[hetero().resources(["a800", "mixed"], count_nodes=True).physical].tolist() == [0, 1, 3]


def test_accelerator_types_per_node() -> None:
    cluster = hetero()
    assert cluster.accelerator_types == ("NV_GPU", "NV_GPU", "NO_ACCEL", "AMD_GPU")
    assert cluster.kinds == ("Accelerator", "franka", "node")


def test_cpu_only_cluster_counts_nodes() -> None:
    cluster = Cluster(num_nodes=3, num_gpus_per_node=0)
    assert cluster.node_group("cluster").hardware_type is None and len(cluster.resources(["cluster"])) == 3


def test_from_config_accepts_yaml_dictconfig_and_sections(tmp_path) -> None:
    text = "cluster:\n  num_nodes: 2\n  num_gpus_per_node: 4\n  node_groups:\n    - {label: g, node_ranks: [0, 1]}\n"
    path = tmp_path / "c.yaml"
    path.write_text(text)
    for source in (str(path), OmegaConf.load(path), OmegaConf.load(path).cluster, {"num_nodes": 2, "num_gpus_per_node": 4}):
        assert Cluster.from_config(source).num_accelerators == 8


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        ([{"label": "node", "node_ranks": 0}], "reserved"),
        ([{"label": "cluster", "node_ranks": 0}], "reserved"),
        ([{"label": "a", "node_ranks": 0}, {"label": "a", "node_ranks": 1}], "used twice"),
        ([{"label": "a", "node_ranks": "0-9"}], "out of range"),
        ([{"label": "a"}], "missing required key"),
        ([{"label": "a", "node_rank": 0}], "did you mean 'node_ranks'"),
        ([{"label": "a", "node_ranks": 0, "hardware": {"type": "r", "configs": [{"node_rank": 1}]}}], "not in the group's node_ranks"),
        ([{"label": "a", "node_ranks": 0, "ignore_hardware": True, "hardware": {"type": "r"}}], "ignore_hardware"),
        ([{"label": "a", "node_ranks": "0-1", "hardware": {"type": "r", "configs": [{"node_rank": 0}, {"node_rank": 0}]}}], "duplicates"),
        ([{"label": "a", "node_ranks": 0, "hardware": {"type": "r", "configs": [{"node_rank": 0}]}},
          {"label": "b", "node_ranks": 0, "hardware": {"type": "r", "configs": [{"node_rank": 0, "x": 1}]}}], "already declared"),
        ([{"label": "a", "node_ranks": "0-1", "env_configs": [{"node_ranks": 0}, {"node_ranks": "0-1"}]}], "Node rank 0 in env_config is duplicated"),
        ("a800", "list of mappings"),
    ],
)
def test_bad_node_groups(groups: object, message: str) -> None:
    with pytest.raises(PlacementConfigError, match=message):
        Cluster(num_nodes=2, num_gpus_per_node=8, node_groups=groups)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_nodes": 0}, "positive"),
        ({"num_nodes": True}, "integer"),
        ({"num_nodes": 2, "num_gpus_per_node": [8]}, "lists 1 value but the cluster has 2 nodes"),
        ({"num_nodes": 2, "num_gpus_per_node": -1}, "non-negative"),
    ],
)
def test_bad_cluster_values(kwargs: dict, message: str) -> None:
    with pytest.raises(PlacementConfigError, match=message):
        Cluster(**kwargs)


def test_unknown_cluster_key_suggests_the_right_one() -> None:
    with pytest.raises(PlacementConfigError, match="did you mean 'num_gpus_per_node'"):
        Cluster.from_config({"num_nodes": 1, "num_gpu_per_node": 8})


def test_env_configs_are_kept() -> None:
    cluster = Cluster(2, 8, node_groups=[{"label": "a", "node_ranks": "0-1", "env_configs": [
        {"node_ranks": 1, "python_interpreter_path": "/opt/py", "env_vars": [{"GLOO_SOCKET_IFNAME": "eth0"}, {"X": 1}]}]}])
    env = cluster.node_group("a").env_configs[0]
    assert env.node_ranks == (1,) and env.env_vars == {"GLOO_SOCKET_IFNAME": "eth0", "X": "1"} and env.python_interpreter_path == "/opt/py"


def test_rlinf_cluster_cfg_keyword() -> None:
    cfg = OmegaConf.create({"cluster": {"num_nodes": 2, "num_gpus_per_node": [8, 0]}})
    assert Cluster(cluster_cfg=cfg.cluster).num_accelerators == 8
    with pytest.raises(PlacementConfigError, match="not both"):
        Cluster(2, cluster_cfg=cfg.cluster)


def test_rlinf_cluster_keys_are_accepted() -> None:
    """Every cluster key RLinf defines loads; the ones that do not decide placement are ignored."""
    section = {
        "num_nodes": 1,
        "num_gpus_per_node": 4,
        "component_placement": {"actor": "0-3"},
        "profiling": {"backend": "nsight", "enabled": True, "worker_groups": ["ActorGroup"]},
        "nsight": {"enabled": False},
        "tracer": {"enable": True, "output_file": None},
        "net_emulation": {"enabled": False, "crossdc_pairs": []},
        "auto_scheduler": False,
        "use_pre_process_policy": True,
        "use_wait_before_last_iter_policy": False,
        "recreate_nccl_groups": False,
    }
    assert Cluster.from_config(section).num_accelerators == 4


def test_keys_rlinf_does_not_define_are_refused() -> None:
    """RLinf's own keys are listed and accepted; any other key is refused with the known keys,
    so a setting that placement would silently ignore is never mistaken for one it reads."""
    assert Cluster.from_config({"num_nodes": 1, "tracer": {"enable": False}, "net_emulation": {}}).num_nodes == 1
    with pytest.raises(PlacementConfigError, match="unknown key 'instance_type'"):
        Cluster.from_config({"num_nodes": 1, "instance_type": "p4d"})


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("num_gpu_per_node", "num_gpus_per_node"),
        ("gpus_per_node", "num_gpus_per_node"),
        ("num_gpus_per_nodes", "num_gpus_per_node"),
        ("node_group", "node_groups"),
        ("componet_placement", "component_placement"),
        ("num_node", "num_nodes"),
        ("accelerator_types", "accelerator_type"),
        ("auto_schedular", "auto_scheduler"),
        ("use_pre_proces_policy", "use_pre_process_policy"),
        ("net_emulaton", "net_emulation"),
        ("gpu_memory", "gpu_memory_gb"),
    ],
)
def test_a_misspelt_known_key_is_still_caught(typo: str, meant: str) -> None:
    with pytest.raises(PlacementConfigError, match=f"unknown key '{typo}'; did you mean '{meant}'"):
        Cluster.from_config({"num_nodes": 1, typo: 1})


def test_node_ranks_merge_overlaps_and_env_configs_take_all() -> None:
    """RLinf reads node_ranks as a set and ``all`` in env_configs as every node of the group."""
    cluster = Cluster(3, 8, node_groups=[{"label": "a", "node_ranks": "0-1,1-2,", "env_configs": [
        {"node_ranks": "all", "env_vars": [{"GLOO_SOCKET_IFNAME": "eth0"}]}]}])
    group = cluster.node_group("a")
    assert group.node_ranks == (0, 1, 2) and group.env_configs[0].node_ranks == (0, 1, 2)


def test_cluster_errors_are_catchable_as_rlinf_assertions() -> None:
    with pytest.raises(AssertionError, match="reserved"):
        Cluster(num_nodes=1, node_groups=[{"label": "node", "node_ranks": 0}])
    with pytest.raises(AssertionError, match="must be a subset of node_ranks"):
        Cluster(num_nodes=2, node_groups=[{"label": "a", "node_ranks": 0, "env_configs": [{"node_ranks": 1}]}])
