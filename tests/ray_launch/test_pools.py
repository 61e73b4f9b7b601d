"""verl-style resource pools compile into specs the solver places."""

import pytest

from solver_placement import Cluster, InfeasiblePlacementError, PlacementConfigError, solve, verify
from solver_placement.ray_launch.pools import ResourcePool, fuse, pool_spec


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
