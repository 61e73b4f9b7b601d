"""Real Ray on a simulated 3-node cluster: every actor reports its node and environment, and
they must match the plan. Failure paths must leave no placement group or actor behind."""

from __future__ import annotations

import json
import os
import socket
import sys
import time

import numpy as np
import pytest
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
from ray_leaks import alive_actors, live_groups, local_ray_fixtures

from solver_placement import Cluster, PlacementSpec, solve, verify
from solver_placement._dispatch.modes import Dispatch, register
from solver_placement._ray_launch.reserve import LaunchError, launch, reserve

pytestmark = pytest.mark.ray

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

MODEL = Cluster(
    num_nodes=3,
    num_gpus_per_node=[4, 4, 0],
    node_groups=[
        {"label": "gpu", "node_ranks": "0-1", "env_configs": [{"node_ranks": 1, "env_vars": [{"GLOO_SOCKET_IFNAME": "lo"}]}]},
        {"label": "robot", "node_ranks": 1, "hardware": {"type": "franka", "configs": [{"node_rank": 1, "robot_ip": "10.0.0.9"}]}},
        {"label": "cpu", "node_ranks": 2},
    ],
)
ENV_KEYS = (
    "CUDA_VISIBLE_DEVICES", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_LOCAL_RANK", "NODE_RANK",
    "MASTER_ADDR", "MASTER_PORT", "GLOO_SOCKET_IFNAME", "HARDWARE_TYPE", "HARDWARE_CONFIGS",
)


class Probe:
    """A plain worker class: reports where it runs."""

    def __init__(self, fail: bool = False) -> None:
        if fail:
            raise RuntimeError("constructor refused")

    def where(self) -> tuple[str, dict[str, str | None]]:
        return ray.get_runtime_context().get_node_id(), {key: os.environ.get(key) for key in ENV_KEYS}

    def gpus(self) -> list[str]:
        return [str(g) for g in ray.get_gpu_ids()]

    def bind_master_port(self) -> int:
        """What torch.distributed's rank 0 does with ``env://``: listen on MASTER_PORT, and hold it."""
        self.rendezvous = socket.socket()
        self.rendezvous.bind(("", int(os.environ["MASTER_PORT"])))
        self.rendezvous.listen()
        return self.rendezvous.getsockname()[1]

    @register(dispatch_mode=Dispatch.DP_COMPUTE_SPLIT)
    def double(self, batch: list[int]) -> list[int]:
        return [2 * x for x in batch]

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def rank(self) -> str:
        return os.environ["RANK"]


local_ray, removing_leaks = local_ray_fixtures(MODEL, cpus_per_node=16)


def assert_no_leaks() -> None:
    assert live_groups() == []


def solved(placement: dict):
    solution = solve(PlacementSpec.build(MODEL, placement))
    verify(solution.spec, solution.placements_by_component())
    return solution


def reports(group) -> list[tuple[str, dict]]:
    return group.execute_all("where")


def node_ids(reservation) -> list[str]:
    return reservation.plan.node_ids


def test_packed_strided_and_collocated_land_exactly(local_ray) -> None:
    solution = solved({
        "actor": {"node_group": "gpu", "placement": "0-7", "tensor_parallel_size": 4},
        "rollout": {"node_group": "gpu", "resources": "0-7", "hardware_per_process": 2, "stride": 2, "collocate_with": "actor"},
    })
    with reserve(solution, cpus_per_process=0.5) as reservation:
        actor = reservation.launch("actor", Probe)
        rollout = reservation.launch("rollout", Probe)
        nodes = node_ids(reservation)
        got_actor = reports(actor)
        assert [(node, env["CUDA_VISIBLE_DEVICES"]) for node, env in got_actor] == [(nodes[r // 4], str(r % 4)) for r in range(8)]
        assert [env["RANK"] for _, env in got_actor] == [str(r) for r in range(8)]
        assert {env["WORLD_SIZE"] for _, env in got_actor} == {"8"} and {env["LOCAL_RANK"] for _, env in got_actor} == {"0"}
        assert {env["MASTER_ADDR"] for _, env in got_actor} == {reservation.plan.node_ips[0]}
        assert len({env["MASTER_PORT"] for _, env in got_actor}) == 1 and got_actor[0][1]["MASTER_PORT"].isdigit()
        got_rollout = reports(rollout)
        assert [(node, env["CUDA_VISIBLE_DEVICES"]) for node, env in got_rollout] == [
            (nodes[0], "0,2"), (nodes[0], "1,3"), (nodes[1], "0,2"), (nodes[1], "1,3")]
        assert [env["NODE_RANK"] for _, env in got_rollout] == ["0", "0", "1", "1"]
        # the env config of group "gpu" for node 1 reaches the workers there, and only there
        assert [env["GLOO_SOCKET_IFNAME"] for _, env in got_rollout] == [None, None, "lo", "lo"]
        assert rollout.double(list(range(10))) == [2 * x for x in range(10)]
        assert rollout.rank() == ["0", "1", "2", "3"]
        # actor TP groups of 4 (from the spec): two data-parallel groups, each rank of a group gets the same half
        assert actor.tp_size == 4 and actor.double(list(range(4))) == [0, 2, 4, 6]
    assert_no_leaks()


def test_tp_groups_cpu_and_robot_processes(local_ray) -> None:
    solution = solved({
        "engine": {"node_group": "gpu", "placement": "0-7:0-3"},
        "env": {"node_group": "cpu", "placement": "0:0-1"},
        "robot": {"node_group": "robot", "placement": "0:0-1"},
    })
    with reserve(solution, cpus_per_process=0.5) as reservation:
        nodes = node_ids(reservation)
        engine = reports(reservation.launch("engine", Probe))
        assert [(node, env["CUDA_VISIBLE_DEVICES"]) for node, env in engine] == [
            (nodes[0], "0,1"), (nodes[0], "2,3"), (nodes[1], "0,1"), (nodes[1], "2,3")]
        env = reports(reservation.launch("env", Probe))
        assert [(node, e["CUDA_VISIBLE_DEVICES"]) for node, e in env] == [(nodes[2], ""), (nodes[2], "")]
        robot = reports(reservation.launch("robot", Probe))
        assert [node for node, _ in robot] == [nodes[1], nodes[1]]
        # a robot process holds no GPU and sees its node's, as its record says (RLinf's meaning)
        assert [e["CUDA_VISIBLE_DEVICES"] for _, e in robot] == ["0,1,2,3", "0,1,2,3"]
        # the robot's hardware.configs entry reaches the worker driving it
        assert [(e["HARDWARE_TYPE"], json.loads(e["HARDWARE_CONFIGS"])) for _, e in robot] == [("franka", [{"robot_ip": "10.0.0.9"}])] * 2
        assert [(e["LOCAL_RANK"], e["LOCAL_WORLD_SIZE"]) for _, e in robot] == [("0", "2"), ("1", "2")]
        assert {e["HARDWARE_CONFIGS"] for _, e in engine} == {None}
    assert_no_leaks()


def test_unfittable_plan_fails_cleanly(local_ray) -> None:
    hog = ray.remote(Probe).options(num_gpus=3, scheduling_strategy=NodeAffinitySchedulingStrategy(_node(0), soft=False)).remote()
    ray.get(hog.__ray_ready__.remote())
    try:
        with pytest.raises(LaunchError, match=r"did not fit within 2(\.0)? s: node 0 bundles .* need GPU 4 \(free 1\)"):
            reserve(solved({"a": {"node_group": "gpu", "placement": "0-3"}}), timeout_s=2)
        assert_no_leaks()
    finally:
        ray.kill(hog)


def every_gpu_free(timeout_s: float = 30.0) -> bool:
    """Whether Ray counts every GPU free, polled up to ``timeout_s``: the previous test's actors
    give theirs back asynchronously (slowly on a loaded machine), and while one is held Ray gives
    the next actor a higher GPU."""
    deadline = time.monotonic() + timeout_s
    while ray.available_resources().get("GPU", 0) < ray.cluster_resources().get("GPU", 0):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def test_probe_detects_a_gpu_held_by_another_actor(local_ray) -> None:
    # Ray picks the hog's GPU itself: ask which one it got and plan exactly that one. With every
    # GPU free it takes node 0's first, so the plan's idle lower GPUs (none) still fit beside it.
    assert every_gpu_free(), "a GPU is still held by an earlier test"
    hog = ray.remote(Probe).options(num_gpus=1, scheduling_strategy=NodeAffinitySchedulingStrategy(_node(0), soft=False)).remote()
    try:
        (held,) = ray.get(hog.gpus.remote())
        with pytest.raises(LaunchError, match=rf"should hold GPU {held} of node 0 but Ray gave it GPU (?!{held}\b)\d"):
            reserve(solved({"a": {"node_group": "gpu", "placement": held}}), timeout_s=10)
        assert_no_leaks()
    finally:
        ray.kill(hog)


def test_foreign_gpu_task_cannot_use_reserved_gpus(local_ray) -> None:
    with reserve(solved({"a": {"node_group": "gpu", "placement": "0-3"}}), cpus_per_process=0.5):
        foreign = ray.remote(lambda: "ran").options(num_gpus=1, scheduling_strategy=NodeAffinitySchedulingStrategy(_node(0), soft=False)).remote()
        ready, _ = ray.wait([foreign], timeout=3)
        assert ready == []
        ray.cancel(foreign, force=True)
    assert_no_leaks()


def test_a_plan_on_a_node_s_upper_gpus_holds_the_lower_ones_idle_so_ray_agrees_on_every_gpu(local_ray) -> None:
    with reserve(solved({"a": {"node_group": "gpu", "placement": "2-3"}}), cpus_per_process=0.5) as reservation:
        assert [(b.item, b.idle) for b in reservation.plan.bundles] == [("gpu 0", True), ("gpu 1", True), ("gpu 2", False), ("gpu 3", False)]
        assert [env["CUDA_VISIBLE_DEVICES"] for _, env in reports(reservation.launch("a", Probe))] == ["2", "3"]
        foreign = ray.remote(lambda: "ran").options(num_gpus=1, scheduling_strategy=NodeAffinitySchedulingStrategy(_node(0), soft=False)).remote()
        ready, _ = ray.wait([foreign], timeout=3)
        assert ready == []  # Ray counts GPUs 2 and 3 as reserved, not 0 and 1
        ray.cancel(foreign, force=True)
    assert_no_leaks()


def test_failing_constructor_leaves_nothing_behind(local_ray) -> None:
    placements = solved({"a": {"node_group": "gpu", "placement": "0-1"}}).placements("a")
    with pytest.raises(LaunchError, match=r"a rank [01]: starting Probe failed: .*constructor refused"):
        launch(Probe, placements, cluster=MODEL, fail=True, timeout_s=60)
    assert_no_leaks()
    assert alive_actors(["Probe"], timeout_s=15) == []


def test_launch_owns_its_reservation(local_ray) -> None:
    placements = solved({"a": {"node_group": "gpu", "placement": "4-5"}}).placements("a")
    with launch(Probe, placements, cluster=MODEL) as group:
        assert [env["CUDA_VISIBLE_DEVICES"] for _, env in reports(group)] == ["0", "1"]
        assert group.execute_rank_zero("rank") == "0"
        refs = group.execute_all_async("rank")
        assert ray.get(refs) == ["0", "1"]
        assert [int(x) for x in group.call("double", Dispatch.DP_COMPUTE_SPLIT, np.arange(4))] == [0, 2, 4, 6]
    assert_no_leaks()


def _node(rank: int) -> str:
    from solver_placement._ray_launch.connect import ray_nodes
    from solver_placement._ray_launch.launch_plan import map_nodes

    return map_nodes(ray_nodes(), MODEL.num_nodes)[rank].node_id


class Trainer:
    def __init__(self, lr: float = 0.1) -> None:
        self.lr = lr

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def device(self) -> str:
        return f"trainer lr={self.lr} on {os.environ['CUDA_VISIBLE_DEVICES']}"


class Reference:
    def device(self) -> str:
        return f"ref on {os.environ['CUDA_VISIBLE_DEVICES']}"


def test_pool_roles_fused_in_one_actor_per_gpu(local_ray) -> None:
    from solver_placement._frontends.verl.resource_pools import ResourcePool, pool_spec

    solution = solve(pool_spec(MODEL, {"pool": ResourcePool([2, 2], max_colocate_count=2, node_group="gpu")}, {"actor": "pool", "ref": "pool"}))
    with reserve(solution, cpus_per_process=0.5) as reservation:
        views = reservation.launch_fused("actor+ref", {"actor": Trainer, "ref": Reference}, {"actor": ((0.5,), {})})
        # Ray gives each of the pool's two placement groups the freest node: GPUs 0-1 of node 0, then of node 1
        assert views["actor"].device() == ["trainer lr=0.5 on 0", "trainer lr=0.5 on 1"] * 2
        assert views["ref"].execute_all("device") == ["ref on 0", "ref on 1"] * 2
        assert views["actor"].actors == views["ref"].actors  # one actor per GPU serves both roles
    assert_no_leaks()


def test_env_in_constructor_gives_the_same_environment(local_ray) -> None:
    solution = solved({"rollout": {"node_group": "gpu", "resources": "0-3", "hardware_per_process": 2, "stride": 2}})
    with reserve(solution, cpus_per_process=0.5) as reservation:
        fast = reports(reservation.launch("rollout", Probe, env_in_constructor=True))
        assert [env["CUDA_VISIBLE_DEVICES"] for _, env in fast] == ["0,2", "1,3"]
        assert [env["RANK"] for _, env in fast] == ["0", "1"] and fast[0][0] == reservation.plan.node_ids[0]
    assert_no_leaks()


def test_every_component_rank_zero_binds_its_own_rendezvous_port_at_once(local_ray) -> None:
    # the quickstart's shape: actor, rollout and reward all have rank 0 on node 0, GPU 0
    solution = solved({
        "actor": {"node_group": "gpu", "placement": "0-7", "tensor_parallel_size": 4},
        "rollout": {"node_group": "gpu", "resources": "0-7", "hardware_per_process": 2, "stride": 2, "collocate_with": "actor"},
        "reward": {"node_group": "gpu", "placement": "0-1"},
    })
    with reserve(solution, cpus_per_process=0.25) as reservation:
        groups = {name: reservation.launch(name, Probe) for name in ("actor", "rollout", "reward")}
        masters = {name: reports(group)[0][1] for name, group in groups.items()}
        assert {env["MASTER_ADDR"] for env in masters.values()} == {reservation.plan.node_ips[0]}
        # all three rank-0 workers listen on their MASTER_PORT at the same time: no "Address already in use"
        bound = ray.get([group.actors[0].bind_master_port.remote() for group in groups.values()])
        assert bound == [int(env["MASTER_PORT"]) for env in masters.values()] and len(set(bound)) == 3
        for name, group in groups.items():  # every rank of a component meets at its rank 0's port
            assert {env["MASTER_PORT"] for _, env in reports(group)} == {masters[name]["MASTER_PORT"]}


def test_records_alone_launch_on_the_live_cluster(local_ray) -> None:
    placements = solved({"a": {"node_group": "gpu", "placement": "4-5"}}).placements("a")
    with launch(Probe, placements) as group:  # no cluster=: Ray's node-rank labels place the records
        got = reports(group)
        assert [(node, env["CUDA_VISIBLE_DEVICES"], env["NODE_RANK"]) for node, env in got] == [(_node(1), "0", "0"), (_node(1), "1", "0")]
        assert [(env["LOCAL_RANK"], env["LOCAL_WORLD_SIZE"], env["NODE_LOCAL_RANK"]) for _, env in got] == [("0", "1", "0"), ("0", "1", "1")]
    assert_no_leaks()


def test_two_reservations_with_the_default_job_name_coexist(local_ray) -> None:
    with reserve(solved({"a": {"node_group": "gpu", "placement": "0"}}), cpus_per_process=0.25) as first:
        with reserve(solved({"a": {"node_group": "gpu", "placement": "1"}}), cpus_per_process=0.25) as second:
            names = [pg["name"] for pg in live_groups("solver-placement-reservation-")]
            assert len(set(names)) == 2 and first.placement_groups[0].id != second.placement_groups[0].id
    assert_no_leaks()
