"""verl's pools against real Ray on a simulated cluster of 8, 6 and 5 GPUs: placement groups made
as verl makes them land where ``spec.pool_order`` says, one it cannot hold stays pending, and a
pool's fused workers start one per GPU with verl's ranks and variables."""

from __future__ import annotations

import os
import sys
import time

import pytest
import ray
from ray.util.placement_group import placement_group, placement_group_table, remove_placement_group
from ray_leaks import live_groups, local_ray_fixtures

from solver_placement import Cluster, solve, verify
from solver_placement._dispatch.modes import Dispatch, register
from solver_placement._frontends.verl.pool_order import PoolRequest, land_pools
from solver_placement._frontends.verl.resource_pools import ResourcePool, pool_spec
from solver_placement._ray_launch.connect import ray_nodes
from solver_placement._ray_launch.launch_plan import map_nodes
from solver_placement._ray_launch.reserve import reserve

pytestmark = pytest.mark.ray

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

GPUS = [8, 6, 5]
MODEL = Cluster(num_nodes=3, num_gpus_per_node=GPUS)
VERL_KEYS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "CUDA_VISIBLE_DEVICES", "MASTER_ADDR", "MASTER_PORT", "RAY_LOCAL_RANK", "RAY_LOCAL_WORLD_SIZE", "WG_BACKEND")


# one CPU per GPU: verl's bundles ask max_colocate_count (here 1) CPUs per GPU, so Ray's CPU
# score orders nodes as its GPU score does, and the GPUs alone decide, as pool_order assumes
local_ray, removing_leaks = local_ray_fixtures(MODEL, cpus_per_node=[float(g) for g in GPUS])


def _rank_of_node() -> dict[str, int]:
    return {node.node_id: rank for rank, node in enumerate(map_nodes(ray_nodes(), MODEL.num_nodes)) if node is not None}


def _verl_groups(entries: list[int], name: str) -> list:
    """A pool's placement groups as verl's ``RayResourcePool`` makes them: STRICT_PACK, one bundle of
    ``{CPU: max_colocate_count, GPU: 1}`` per GPU, all created before any is waited for."""
    return [placement_group([{"CPU": 1, "GPU": 1}] * size, strategy="STRICT_PACK", name=f"{name}:{index}") for index, size in enumerate(entries)]


def test_placement_groups_land_where_pool_order_says() -> None:
    pools = {"global_pool": [4, 4], "reward_pool": [4]}
    predicted = land_pools(GPUS, [PoolRequest(name, tuple(entries), (0, 1, 2), name) for name, entries in pools.items()])
    rank_of = _rank_of_node()
    created = []
    try:
        landed = {}
        for name, entries in pools.items():  # verl waits for one pool's groups before it needs the next pool
            groups = _verl_groups(entries, name)
            created += groups
            ray.get([group.ready() for group in groups], timeout=60)
            landed[name] = sorted(rank_of[placement_group_table(group)["bundles_to_node_id"][0]] for group in groups)
    finally:
        for group in created:
            remove_placement_group(group)
    assert landed == {name: [group.node for group in groups] for name, groups in predicted.items()} == {"global_pool": [0, 1], "reward_pool": [2]}


def _all_gpus_free(timeout_s: float = 60.0) -> None:
    """Wait until Ray reports every GPU free: a removed placement group frees its GPUs a moment
    later, and the freest-node rule below is about an empty cluster."""
    deadline = time.monotonic() + timeout_s
    while ray.available_resources().get("GPU", 0) < sum(GPUS):
        assert time.monotonic() < deadline, f"GPUs still held {timeout_s} s after the last test: {ray.available_resources()}"
        time.sleep(0.2)


def test_a_group_pool_order_refuses_stays_pending_on_ray() -> None:
    with pytest.raises(Exception, match="placement group 0 needs 8 GPUs on one node"):
        land_pools(GPUS, [PoolRequest("small", (5,), (0, 1, 2), "a"), PoolRequest("big", (8,), (0, 1, 2), "b")])
    _all_gpus_free()
    created = []
    try:
        created += _verl_groups([5], "small")
        ray.get(created[0].ready(), timeout=60)
        created += _verl_groups([8], "big")
        ready, _ = ray.wait([created[1].ready()], timeout=5)
        assert ready == []  # Ray put the 5 GPUs on the 8-GPU node, the freest: no node holds 8 now
    finally:
        for group in created:
            remove_placement_group(group)


class Trainer:
    def where(self) -> dict[str, str | None]:
        return {key: os.environ.get(key) for key in VERL_KEYS}

    @register(dispatch_mode=Dispatch.DP_COMPUTE_SPLIT)
    def double(self, batch: list[int]) -> list[int]:
        return [2 * x for x in batch]


class Critic:
    def name(self) -> str:
        return "critic"


def test_a_pools_roles_start_as_one_worker_per_gpu_in_verls_rank_order() -> None:
    solution = solve(pool_spec(MODEL, {"global_pool": ResourcePool([4, 4])}, {"actor": "global_pool", "critic": "global_pool"}))
    verify(solution.spec, solution.placements_by_component())
    assert solution.components == ["actor+critic"]
    with reserve(solution, cpus_per_process=0.5) as reservation:
        views = reservation.launch_fused("actor+critic", {"actor": Trainer, "critic": Critic})
        assert views["actor"].actors == views["critic"].actors and len(views["actor"].actors) == 8  # 8 workers for two roles on 8 GPUs
        seen = views["actor"].execute_all("where")
        # verl's RayWorkerGroup: ranks over the placement groups sorted by node, then bundle; the pool's size as WORLD_SIZE
        assert [env["RANK"] for env in seen] == [str(rank) for rank in range(8)] and {env["WORLD_SIZE"] for env in seen} == {"8"}
        assert [env["CUDA_VISIBLE_DEVICES"] for env in seen] == [str(gpu) for gpu in range(4)] * 2
        # each worker sees its own GPU: the device it selects (LOCAL_RANK, and verl 0.4.1's RAY_LOCAL_RANK) is 0
        assert {(env["LOCAL_RANK"], env["RAY_LOCAL_RANK"], env["RAY_LOCAL_WORLD_SIZE"], env["WG_BACKEND"]) for env in seen} == {("0", "0", "4", "ray")}
        assert len({(env["MASTER_ADDR"], env["MASTER_PORT"]) for env in seen}) == 1  # every rank meets rank 0, as verl 0.9 tells them
        assert views["critic"].execute_all("name") == ["critic"] * 8
        assert views["actor"].double(list(range(16))) == [2 * x for x in range(16)]  # data split over all 8 workers, as verl's DP dispatch
    assert live_groups() == []
