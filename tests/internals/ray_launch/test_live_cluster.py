"""The issue's closing scenario on real Ray: a simulated 3-node cluster (two GPU models, a robot
resource, labels) is read with ``Cluster.from_ray``, a model naming only its components is
solved against it and launched; every actor reports its planned node, GPUs, env and robot
metadata while every component's rank 0 holds its own rendezvous port. With a node gone, the
same plan fails before anything is reserved, naming the difference."""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Iterator

import pytest
import ray
from ray.util import placement_group_table
from ray_leaks import live_groups, remove_own_groups

from solver_placement import Cluster, PlacementConfigError, PlacementSpec, solve, verify
from solver_placement._ray_launch.connect import ray_nodes
from solver_placement._ray_launch.reserve import reserve
from solver_placement._ray_launch.session import LocalRayCluster

pytestmark = pytest.mark.ray

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

SIMULATED = Cluster(
    num_nodes=3,
    num_gpus_per_node=[4, 2, 0],
    accelerator_model=["A800", "H100", None],
    node_groups=[{"label": "arm", "node_ranks": 2, "hardware": {"type": "franka", "configs": [{"node_rank": 2, "serial": "a"}, {"node_rank": 2, "serial": "b"}]}}],
    node_labels=[{"zone": "east"}, {"zone": "east"}, {"zone": "west"}],
)
REPORTED = ("CUDA_VISIBLE_DEVICES", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "HARDWARE_TYPE", "HARDWARE_CONFIGS")


class Worker:
    def report(self) -> tuple[str, dict[str, str | None]]:
        return ray.get_runtime_context().get_node_id(), {key: os.environ.get(key) for key in REPORTED}

    def hold_rendezvous(self) -> int:
        self.rendezvous = socket.socket()
        self.rendezvous.bind(("", int(os.environ["MASTER_PORT"])))
        self.rendezvous.listen()
        return self.rendezvous.getsockname()[1]


@pytest.fixture(scope="module")
def simulated() -> Iterator[LocalRayCluster]:
    with LocalRayCluster(SIMULATED, cpus_per_node=8) as local:
        local.connect()
        yield local


@pytest.fixture(autouse=True)
def removing_leaks(simulated: LocalRayCluster) -> Iterator[None]:
    yield
    assert remove_own_groups() == []


def test_read_solve_launch_and_report_then_a_lost_node_fails_before_reserving(simulated: LocalRayCluster) -> None:
    live = Cluster.from_ray(group_by_labels=["zone"])
    assert (live.num_nodes, live.gpus_per_node.tolist(), live.accelerator_models) == (3, [4, 2, 0], ("A800", "H100", None))
    # the nodes' labels, Ray's GPU-model label included (real GPU nodes carry it too)
    gpu_models = [{"ray.io/accelerator-type": "A800"}, {"ray.io/accelerator-type": "H100"}, {}]
    assert live.node_labels == [{**labels, **model} for labels, model in zip(SIMULATED.node_labels, gpu_models)]
    assert live.node_groups["west"].node_ranks == (2,)
    solution = solve(PlacementSpec.build(live, {
        "actor": {"node_group": "east", "placement": "0-5", "tensor_parallel_size": 2},
        "rollout": {"node_group": "east", "resources": "0-5", "hardware_per_process": 2, "collocate_with": "actor"},
        "reward": {"node_group": "east", "placement": "0-1"},
        "env": {"node_group": "franka", "placement": "0-1"},
    }))
    verify(solution.spec, solution.placements_by_component())
    with reserve(solution, cpus_per_process=0.25) as reservation:
        nodes = reservation.plan.node_ids
        groups = {name: reservation.launch(name, Worker) for name in ("actor", "rollout", "reward", "env")}
        got = {name: group.execute_all("report") for name, group in groups.items()}
        assert [(node, env["CUDA_VISIBLE_DEVICES"]) for node, env in got["actor"]] == [
            (nodes[0], "0"), (nodes[0], "1"), (nodes[0], "2"), (nodes[0], "3"), (nodes[1], "0"), (nodes[1], "1")]
        assert [(node, env["CUDA_VISIBLE_DEVICES"]) for node, env in got["rollout"]] == [(nodes[0], "0,1"), (nodes[0], "2,3"), (nodes[1], "0,1")]
        assert [(node, env["CUDA_VISIBLE_DEVICES"], env["LOCAL_RANK"]) for node, env in got["reward"]] == [(nodes[0], "0", "0"), (nodes[0], "1", "0")]
        assert [(node, env["HARDWARE_TYPE"], json.loads(env["HARDWARE_CONFIGS"] or "")) for node, env in got["env"]] == [
            (nodes[2], "franka", [{"ray_index": 0}]), (nodes[2], "franka", [{"ray_index": 1}])]
        masters = [got[name][0][1] for name in ("actor", "rollout", "reward")]
        assert {env["MASTER_ADDR"] for env in masters} == {reservation.plan.node_ips[0]}
        held = ray.get([groups[name].actors[0].hold_rendezvous.remote() for name in ("actor", "rollout", "reward", "env")])
        assert len(set(held[:3])) == 3 and held == [int(got[name][0][1]["MASTER_PORT"]) for name in ("actor", "rollout", "reward", "env")]
    assert live_groups() == []

    lost = next(node for node in simulated._cluster.worker_nodes if node.node_id == reservation.plan.node_ids[2])
    simulated._cluster.remove_node(lost)
    deadline = time.monotonic() + 60
    while len(ray_nodes()) != 2:
        assert time.monotonic() < deadline
        time.sleep(0.5)
    groups_before = len(placement_group_table())
    with pytest.raises(PlacementConfigError, match=r"differs from the cluster model in 1 way: node 2 of the plan has no Ray node"):
        reserve(solution, cpus_per_process=0.25)
    assert len(placement_group_table()) == groups_before
