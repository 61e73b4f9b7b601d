"""Ray's own choice of node for verl's placement groups where the GPUs alone tie: on a simulated
cluster of 8 and 4 GPUs with 64 CPUs each, the second of two 4-GPU pools goes where fewer CPUs are
reserved (verl's bundles ask ``max_colocate_count`` CPUs per GPU), as ``spec.pool_order`` says."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import ray
from ray.util.placement_group import placement_group, placement_group_table, remove_placement_group

from solver_placement import Cluster
from solver_placement._frontends.verl.pool_order import PoolRequest, land_pools
from solver_placement._ray_launch.connect import ray_nodes
from solver_placement._ray_launch.launch_plan import map_nodes
from solver_placement._ray_launch.session import LocalRayCluster

pytestmark = pytest.mark.ray

MODEL = Cluster(num_nodes=2, num_gpus_per_node=[8, 4])


@pytest.fixture(scope="module")
def local_ray() -> Iterator[LocalRayCluster]:
    with LocalRayCluster(MODEL, cpus_per_node=64.0) as local:
        local.connect()
        yield local


def test_a_tie_in_free_gpus_goes_to_the_node_with_fewer_cpus_reserved(local_ray: LocalRayCluster) -> None:
    requests = [PoolRequest("global_pool", (4,), (0, 1), "actor", 3), PoolRequest("reward_pool", (4,), (0, 1), "rm", 3)]
    predicted = {name: [group.node for group in groups] for name, groups in land_pools(MODEL.gpus_per_node.tolist(), requests).items()}
    rank_of = {node.node_id: rank for rank, node in enumerate(map_nodes(ray_nodes(), MODEL.num_nodes)) if node is not None}
    created = []
    landed = {}
    try:
        for request in requests:  # as verl's RayResourcePool: STRICT_PACK, {CPU: max_colocate_count, GPU: 1} per GPU, a pool ready before the next
            groups = [placement_group([{"CPU": request.cpus_per_gpu, "GPU": 1}] * size, strategy="STRICT_PACK") for size in request.entries]
            created += groups
            ray.get([group.ready() for group in groups], timeout=60)
            landed[request.name] = [rank_of[placement_group_table(group)["bundles_to_node_id"][0]] for group in groups]
    finally:
        for group in created:
            remove_placement_group(group)
    assert landed == predicted == {"global_pool": [0], "reward_pool": [1]}
