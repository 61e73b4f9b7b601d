"""The fallback on real Ray: a cluster whose nodes carry none of our labels (started without
``--labels``) is read, planned with the resource scheme (nodes in IP order, bundles pinned by
Ray's node id, the GPU model as Ray's ``accelerator_type:<model>`` resource) and launched: every
actor lands on its planned node and devices, and nothing is left behind."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
import ray
from ray.cluster_utils import Cluster as RayTestCluster
from ray_leaks import alive_actors, live_groups, remove_own_groups

from solver_placement import Cluster, PlacementSpec, solve, verify
from solver_placement._ray_launch.reserve import reserve

pytestmark = pytest.mark.ray

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

NODE = {"num_cpus": 4, "num_gpus": 2, "resources": {"accelerator_type:A800": 1.0}}


class Where:
    def where(self) -> tuple[str, str]:
        return ray.get_runtime_context().get_node_id(), os.environ["CUDA_VISIBLE_DEVICES"]


@pytest.fixture(scope="module")
def unlabelled() -> Iterator[None]:
    cluster = RayTestCluster(initialize_head=True, head_node_args=NODE)
    cluster.add_node(**NODE)
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        yield
    finally:
        ray.shutdown()
        cluster.shutdown()


@pytest.fixture(autouse=True)
def removing_leaks(unlabelled: None) -> Iterator[None]:
    yield
    assert remove_own_groups() == []


def test_nodes_without_our_labels_are_reserved_by_node_id_and_gpu_model_resource() -> None:
    live = Cluster.from_ray()
    assert live.accelerator_models == ("A800", "A800") and live.node_groups.keys() == {"cluster", "node"}
    solution = solve(PlacementSpec.build(live, {"a": "1-3"}))
    verify(solution.spec, solution.placements_by_component())
    with reserve(solution, cpus_per_process=0.25) as reservation:
        plan = reservation.plan
        assert plan.scheme == "resources" and len(plan.placement_groups) == 1
        assert [b.label_selector for b in plan.bundles if not b.idle] == [{"ray.io/node-id": plan.node_ids[n]} for n in (0, 1, 1)]
        assert all(b.resources["accelerator_type:A800"] == 0.001 for b in plan.bundles)
        got = reservation.launch("a", Where).execute_all("where")
        assert got == [(plan.node_ids[0], "1"), (plan.node_ids[1], "0"), (plan.node_ids[1], "1")]
    assert live_groups() == [] and alive_actors(["Where"]) == []
