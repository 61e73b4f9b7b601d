"""verl-style resource pools compile into specs the solver places."""

from pathlib import Path

import pytest
from helpers import MODELS

from solver_placement import Cluster, InfeasiblePlacementError, PlacementConfigError, solve, verify
from solver_placement.spec.pools import ResourcePool, fuse, pool_spec, pool_spec_from_config


def placed(cluster: Cluster, pools: dict, mapping: dict):
    solution = solve(pool_spec(cluster, pools, mapping))
    verify(solution.spec, solution.placements_by_component())
    return {name: [(p.cluster_node_rank, p.local_hardware_ranks) for p in solution.placements(name)] for name in solution.components}


def test_roles_on_one_pool_share_gpus_and_pools_are_exclusive() -> None:
    layout = placed(Cluster(3, 8), {"global": ResourcePool([8, 8], max_colocate_count=3), "reward": ResourcePool([4])},
                    {"actor": "global", "critic": "global", "reward": "reward"})
    assert layout["actor"] == layout["critic"] == [(n, [g]) for n in (0, 1) for g in range(8)]
    assert layout["reward"] == [(2, [g]) for g in range(4)]


def test_pool_entries_stay_on_one_node() -> None:
    layout = placed(Cluster(2, 6), {"p": ResourcePool([4, 4])}, {"actor": "p"})
    nodes = [node for node, _ in layout["actor"]]
    assert len(set(nodes[:4])) == 1 and len(set(nodes[4:])) == 1


def test_pool_that_cannot_fit_is_explained() -> None:
    with pytest.raises((InfeasiblePlacementError, PlacementConfigError)):
        solve(pool_spec(Cluster(1, 8), {"a": ResourcePool([8]), "b": ResourcePool([2])}, {"x": "a", "y": "b"}))


@pytest.mark.parametrize(
    ("pools", "mapping", "words"),
    [
        ({"p": ResourcePool([8, 4])}, {"a": "p"}, "mixes entry sizes"),
        ({"p": ResourcePool([8])}, {"a": "q"}, "unknown resource pool 'q'"),
        ({"p": ResourcePool([8], max_colocate_count=1)}, {"a": "p", "b": "p"}, "exceed max_colocate_count=1"),
        ({"p": ResourcePool([0])}, {"a": "p"}, "positive GPU counts"),
        ({"p": ResourcePool([8])}, {}, "no role is mapped"),
    ],
)
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


def test_the_yaml_pool_model_places_like_its_python_form() -> None:
    spec, mapping = pool_spec_from_config(MODELS / "verl_pools_2x8.yaml")
    assert mapping == {"actor_rollout": "global_pool", "critic": "global_pool", "reward": "reward_pool"}
    python_form = pool_spec(
        Cluster(3, 8),
        {"global_pool": ResourcePool([8, 8], max_colocate_count=2), "reward_pool": ResourcePool([4])},
        {"actor_rollout": "global_pool", "critic": "global_pool", "reward": "reward_pool"},
    )
    from_yaml, from_python = solve(spec), solve(python_form)
    verify(from_yaml.spec, from_yaml.placements_by_component())
    assert from_yaml.placements_by_component() == from_python.placements_by_component()
    assert [p.cluster_node_rank for p in from_yaml.placements("reward")] == [2] * 4


def yaml_pools(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "pools.yaml"
    path.write_text("cluster: {num_nodes: 2, num_gpus_per_node: 8}\n" + body)
    return path


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("resource_pools: {resource_pool_spec: {p: [8]}}", "missing required key\\(s\\) 'mapping'"),
        ("resource_pools: {resource_pool_spec: {p: [8]}, mapping: {a: p}, mappings: {}}", "did you mean 'mapping'"),
        ("resource_pools: {resource_pool_spec: {p: {process_on_nodes: [8], max_colocate_count: 1}}, mapping: {a: p, b: p}}",
         "exceed max_colocate_count=1"),
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
    assert spec.solver_options == {"time_limit_s": 5}
    assert {p.cluster_node_rank for p in solve(spec).placements("a")} == {1}
