"""verl-style resource pools compile into specs the solver places."""

from pathlib import Path

import pytest
from helpers import MODELS

from solver_placement import Cluster, InfeasiblePlacementError, PlacementConfigError, solve, verify
from solver_placement._dispatch.fuse import fuse, verl_worker_env
from solver_placement._frontends.verl.resource_pools import PoolGroup, ResourcePool, pool_spec, pool_spec_from_config


def placed(cluster: Cluster, pools: dict, mapping: dict):
    solution = solve(pool_spec(cluster, pools, mapping))
    verify(solution.spec, solution.placements_by_component())
    return {name: [(p.cluster_node_rank, p.local_hardware_ranks) for p in solution.placements(name)] for name in solution.components}


def test_roles_of_a_pool_are_fused_into_one_worker_per_gpu() -> None:
    layout = placed(Cluster(3, 8), {"global": ResourcePool([8, 8], max_colocate_count=3), "reward": ResourcePool([4])},
                    {"actor": "global", "critic": "global", "ref": "global", "rollout": "global", "reward": "reward"})
    assert list(layout) == ["actor+critic+ref+rollout", "reward"]  # 16 workers for four roles on 16 GPUs, not 64
    assert layout["actor+critic+ref+rollout"] == [(n, [g]) for n in (0, 1) for g in range(8)]
    assert layout["reward"] == [(2, [g]) for g in range(4)]


def test_a_role_with_a_worker_group_of_its_own_runs_beside_the_fused_one() -> None:
    layout = placed(Cluster(1, 8), {"global": ResourcePool([8], max_colocate_count=2, own_worker_group=["rm"])},
                    {"actor": "global", "critic": "global", "rm": "global"})
    assert list(layout) == ["actor+critic", "rm"] and layout["rm"] == layout["actor+critic"] == [(0, [g]) for g in range(8)]


def test_pools_take_nodes_in_the_order_verl_creates_them_on_the_freest_node() -> None:
    # Ray gives each placement group the freest node: global_pool's two groups of 4 go to two nodes, not
    # to both halves of node 0, and reward_pool, created after, gets the node left (never node 1 between them)
    layout = placed(Cluster(3, 8), {"global_pool": ResourcePool([4, 4]), "reward_pool": ResourcePool([4])},
                    {"actor": "global_pool", "rm": "reward_pool"})
    assert layout["actor"] == [(n, [g]) for n in (0, 1) for g in range(4)] and layout["rm"] == [(2, [g]) for g in range(4)]
    # full nodes: the reward pool lands after both global_pool nodes whatever the cluster's size
    layout = placed(Cluster(4, 8), {"global_pool": ResourcePool([8, 8]), "reward_pool": ResourcePool([8])},
                    {"actor": "global_pool", "rm": "reward_pool"})
    assert [node for node, _ in layout["actor"]] == [0] * 8 + [1] * 8 and {node for node, _ in layout["rm"]} == {2}


def test_a_later_pool_gets_what_the_earlier_ones_left() -> None:
    # on nodes of 8 and 4 GPUs the first pool's 4 go to the freer node 0, then 8 fit nowhere: verl would wait forever
    cluster = Cluster(2, [8, 4])
    with pytest.raises(InfeasiblePlacementError) as caught:
        pool_spec(cluster, {"small": ResourcePool([4]), "big": ResourcePool([8])}, {"a": "small", "b": "big"})
    assert "resource pool 'big': placement group 0 needs 8 GPUs on one node" in str(caught.value)
    assert "small took node 0" in str(caught.value) and "the freest of its nodes have 4 free (nodes 0-1)" in str(caught.value)
    assert caught.value.statements[0].component == "b" and caught.value.statements[0].others == ("a",)
    layout = placed(cluster, {"big": ResourcePool([8]), "small": ResourcePool([4])}, {"b": "big", "a": "small"})
    assert {node for node, _ in layout["a"]} == {1}


def test_pool_entries_stay_on_one_node_and_rank_by_node_then_gpu() -> None:
    layout = placed(Cluster(2, 6), {"p": ResourcePool([4, 4])}, {"actor": "p"})
    assert layout["actor"] == [(n, [g]) for n in (0, 1) for g in range(4)]


def test_pool_that_cannot_fit_is_explained() -> None:
    with pytest.raises(InfeasiblePlacementError, match="resource pool 'b': placement group 0 needs 2 GPUs"):
        solve(pool_spec(Cluster(1, 8), {"a": ResourcePool([8]), "b": ResourcePool([2])}, {"x": "a", "y": "b"}))


@pytest.mark.parametrize(
    ("pools", "mapping", "words"),
    [
        ({"p": ResourcePool([8, 4])}, {"a": "p"}, "mixes entry sizes"),
        ({"p": ResourcePool([8])}, {"a": "q"}, "unknown resource pool 'q'"),
        ({"p": ResourcePool([8], own_worker_group=["b"])}, {"a": "p", "b": "p"}, r"2 worker groups \(a, b\) exceed max_colocate_count=1"),
        ({"p": ResourcePool([8], own_worker_group=["c"])}, {"a": "p"}, "own_worker_group names 'c', not mapped to the pool"),
        ({"p": ResourcePool([8])}, {"a+b": "p"}, "a role name is a non-empty string without '\\+'"),
        ({"p": ResourcePool([8], node_group="node")}, {"a": "p"}, "node group 'node' counts nodes, not GPUs"),
        ({"p": ResourcePool([0])}, {"a": "p"}, "positive GPU counts"),
        ({"p": ResourcePool([8])}, {}, "no role is mapped"),
        ({"p": ResourcePool([8], 2, slices={"b": (0, 4), "c": (2, 4)})}, {"a": "p", "b": "p", "c": "p"},
         r"3 worker groups \(a and up to 2 slices on one GPU\) exceed max_colocate_count=2"),
        ({"p": ResourcePool([8], 2, slices={"b": (6, 4)})}, {"a": "p", "b": "p"}, r"slice 'b' \[6, 4\] is not within the pool's 8 GPUs"),
        ({"p": ResourcePool([8], 2, slices={"c": (0, 4)})}, {"a": "p"}, "slices names 'c', not mapped to the pool"),
        ({"p": ResourcePool([8], 3, own_worker_group=["b"], slices={"b": (0, 4)})}, {"a": "p", "b": "p"}, "'b' is in own_worker_group and slices"),
    ],
)  # fmt: skip
def test_bad_pools(pools: dict, mapping: dict, words: str) -> None:
    with pytest.raises(PlacementConfigError, match=words):
        pool_spec(Cluster(2, 8), pools, mapping)


class Actor:
    def __init__(self, lr: float = 0.1) -> None:
        self.lr = lr

    def step(self) -> float:
        return self.lr


class Critic:
    def step(self) -> str:
        return "critic"


def test_fused_class_exposes_each_role_under_its_name() -> None:
    fused = fuse({"actor": Actor, "critic": Critic})({"actor": ((0.5,), {})})
    assert fused.actor_step() == 0.5 and fused.critic_step() == "critic"
    assert not hasattr(fused, "step")


def test_verl_worker_variables_come_from_the_plan() -> None:
    planned = {"RANK": "5", "LOCAL_RANK": "0", "NODE_LOCAL_WORLD_SIZE": "8"}
    assert verl_worker_env(planned) == {"WG_BACKEND": "ray", "RAY_LOCAL_RANK": "0", "RAY_LOCAL_WORLD_SIZE": "8"}
    assert verl_worker_env({"RANK": "5"}) == {}  # not launched by a reservation: nothing to derive


def test_the_yaml_pool_model_places_like_its_python_form() -> None:
    spec, groups = pool_spec_from_config(MODELS / "verl_pools_2x8.yaml")
    assert groups == {"actor_rollout+critic": PoolGroup("global_pool", ("actor_rollout", "critic"), 8), "rm": PoolGroup("reward_pool", ("rm",), 4)}
    python_form = pool_spec(
        Cluster(3, 8),
        {"global_pool": ResourcePool([8, 8]), "reward_pool": ResourcePool([4])},
        {"actor_rollout": "global_pool", "critic": "global_pool", "rm": "reward_pool"},
    )
    from_yaml, from_python = solve(spec), solve(python_form)
    verify(from_yaml.spec, from_yaml.placements_by_component())
    assert from_yaml.placements_by_component() == from_python.placements_by_component()
    assert [p.cluster_node_rank for p in from_yaml.placements("rm")] == [2] * 4


def yaml_pools(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "pools.yaml"
    path.write_text("cluster: {num_nodes: 2, num_gpus_per_node: 8}\n" + body)
    return path


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("resource_pools: {resource_pool_spec: {p: [8]}}", "missing required key 'mapping'"),
        ("resource_pools: {resource_pool_spec: {p: [8]}, mapping: {a: p}, mappings: {}}", "did you mean 'mapping'"),
        ("resource_pools: {resource_pool_spec: {p: {process_on_nodes: [8], own_worker_group: [b]}}, mapping: {a: p, b: p}}",
         "exceed max_colocate_count=1"),
        ("resource_pools: {resource_pool_spec: {p: {process_on_nodes: [8], own_worker_group: b}}, mapping: {a: p, b: p}}",
         "own_worker_group must be a list of role names"),
        ("resource_pools: {resource_pool_spec: {p: {process_on_nodes: 8}}, mapping: {a: p}}", "must be a list of GPU counts"),
        ("resource_pools: {resource_pool_spec: {p: {gpus: [8]}}, mapping: {a: p}}", "unknown key 'gpus'"),
        ("resource_pools: {resource_pool_spec: {p: [8]}, mapping: {a: q}}", "unknown resource pool 'q'"),
    ],
)
def test_bad_yaml_pools(tmp_path: Path, body: str, words: str) -> None:
    with pytest.raises(PlacementConfigError, match=words):
        pool_spec_from_config(yaml_pools(tmp_path, body))


def test_yaml_pools_and_component_placement_are_not_mixed(tmp_path: Path) -> None:
    path = tmp_path / "both.yaml"
    path.write_text("cluster: {num_nodes: 1, component_placement: {a: all}}\nresource_pools: {resource_pool_spec: {p: [8]}, mapping: {a: p}}\n")
    with pytest.raises(PlacementConfigError, match="both cluster.component_placement and resource_pools"):
        pool_spec_from_config(path)


def test_yaml_pools_keep_node_groups_and_solver_options(tmp_path: Path) -> None:
    path = tmp_path / "grouped.yaml"
    path.write_text(
        "cluster: {num_nodes: 2, num_gpus_per_node: 8, node_groups: [{label: b, node_ranks: 1}], solver: {time_limit_s: 5}}\n"
        "resource_pools: {resource_pool_spec: {p: {process_on_nodes: [8], node_group: b}}, mapping: {a: p}}\n"
    )
    spec, _ = pool_spec_from_config(path)
    assert spec.solver_options.stated_options() == {"time_limit_s": 5}
    assert {p.cluster_node_rank for p in solve(spec).placements("a")} == {1}


def test_a_slice_is_a_worker_group_on_part_of_the_pool_ranks_from_0() -> None:
    pools = {"p": ResourcePool([4, 4], 2, slices={"s0": (0, 2), "s1": (2, 4), "s2": (6, 2)})}
    layout = placed(Cluster(2, 4), pools, {"a": "p", "s0": "p", "s1": "p", "s2": "p"})
    assert layout["s0"] == [(0, [0]), (0, [1])] and layout["s1"] == [(0, [2]), (0, [3]), (1, [0]), (1, [1])] and layout["s2"] == [(1, [2]), (1, [3])]
    assert len(layout["a"]) == 8  # the fused group on all of the pool's GPUs: slices counted over its groups by node


def test_slices_in_a_config_read_as_first_and_count() -> None:
    text = {"cluster": {"num_nodes": 1, "num_gpus_per_node": 8},
            "resource_pools": {"resource_pool_spec": {"p": {"process_on_nodes": [8], "max_colocate_count": 1, "slices": {"r0": [0, 4], "r1": [4, 4]}}},
                               "mapping": {"r0": "p", "r1": "p"}}}  # fmt: skip
    spec, groups = pool_spec_from_config(text)
    assert {name: group.pool for name, group in groups.items()} == {"r0": "p", "r1": "p"}
    assert [len(solve(spec).placements(name)) for name in ("r0", "r1")] == [4, 4]
    text["resource_pools"]["resource_pool_spec"]["p"]["slices"] = {"r0": [0, 0]}
    with pytest.raises(PlacementConfigError, match=r"slices.r0 must be \[first, count\]"):
        pool_spec_from_config(text)
