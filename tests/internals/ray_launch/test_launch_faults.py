"""Launch faults on real Ray (a simulated 3-node cluster): every fault is injected for real, is
a clear PlacementError (or the user's own Ctrl-C) and leaves no placement group or worker actor
behind: every test ends with ``assert_no_leaks()`` (0 placement groups, 0 actors), and the
autouse fixture removes and reports anything a failed test left.

| fault | how it is injected | error seen | left after |
| --- | --- | --- | --- |
| a node disappears after planning, before ``reserve`` | a simulated node is removed from the running cluster | ``PlacementConfigError``: node 1 of the plan has no Ray node | 0 groups, 0 actors |
| the model gives a node more GPUs than Ray has | a model of [2, 4, 2] GPUs on a [2, 2, 2] cluster | ``PlacementConfigError`` listing every difference, before anything is reserved | 0, 0 |
| another job holds the planned GPUs (reservation times out) | a second Ray driver holds node 1's GPUs | ``LaunchError`` naming the node's bundles after ``timeout_s`` | 0, 0 (the other job's group untouched) |
| Ctrl-C while the reservation waits | SIGINT to the driver while ``reserve`` waits for GPUs held by another actor | ``KeyboardInterrupt`` goes through | 0, 0 |
| one rank's constructor raises | the constructor of rank 1 raises (both env delivery modes) | ``LaunchError`` naming the component, the rank and the exception | 0, 0 |
| an actor dies while starting | the constructor of rank 1 ends its process (``os._exit``) | ``LaunchError`` naming the component and the rank | 0, 0 |
| Ray refuses a worker | constructor arguments the class does not take | ``LaunchError`` naming the component and rank 0 | 0, 0 |
| a constructor never returns | the constructor sleeps past ``timeout_s`` | ``LaunchError`` naming the ranks not ready within ``timeout_s`` | 0, 0 |
| Ctrl-C while actors start | SIGINT to the driver while constructors run | ``KeyboardInterrupt`` goes through | 0, 0 |
| a stale Ray address | ``RAY_ADDRESS`` names a port nothing listens on (a fresh driver) | ``LaunchError``: no Ray answers ... within 2 s | 0, 0 |
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import ray
from ray.util import placement_group_table
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
from ray_leaks import alive_actors, live_groups, remove_own_groups

from solver_placement import Cluster, PlacementConfigError, PlacementSpec, Solution, solve, verify
from solver_placement._ray_launch.connect import ray_nodes
from solver_placement._ray_launch.launch_plan import NODE_RANK_LABEL
from solver_placement._ray_launch.reserve import LaunchError, plan, reserve
from solver_placement._ray_launch.session import LocalRayCluster
from solver_placement._replan import moved, replan

pytestmark = pytest.mark.ray

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

MODEL = Cluster(num_nodes=3, num_gpus_per_node=[2, 2, 2])
CPUS_PER_NODE = 8
JOB = "faults"
#: Names of the worker classes below, to find their actors in the GCS table.
WORKERS = ("Steady", "FailsOnRankOne", "DiesOnRankOne", "Stuck")


class Steady:
    def where(self) -> str:
        return os.environ["CUDA_VISIBLE_DEVICES"]

    def where_and_what(self) -> tuple[str, str]:
        return ray.get_runtime_context().get_node_id(), os.environ["CUDA_VISIBLE_DEVICES"]


class FailsOnRankOne:
    def __init__(self) -> None:
        if os.environ.get("RANK") == "1":
            raise RuntimeError("rank 1 cannot load its checkpoint")


class DiesOnRankOne:
    def __init__(self) -> None:
        if os.environ.get("RANK") == "1":
            os._exit(1)  # the worker process ends while starting, as after an OOM kill or a segfault


class Stuck:
    def __init__(self) -> None:
        time.sleep(600)


@pytest.fixture(scope="module")
def local() -> Iterator[LocalRayCluster]:
    with LocalRayCluster(MODEL, cpus_per_node=CPUS_PER_NODE) as cluster:
        cluster.connect()
        yield cluster


@pytest.fixture(autouse=True)
def removing_leaks(local: LocalRayCluster) -> Iterator[None]:
    """Whatever a test leaves (even after a failed assertion) is removed before the next one."""
    yield
    assert remove_own_groups() == []


def alive_workers(timeout_s: float = 20.0) -> list[str]:
    return alive_actors(WORKERS, timeout_s)


def assert_no_leaks() -> None:
    assert live_groups() == []
    assert alive_workers() == []


def solved(placement: dict, cluster: Cluster = MODEL) -> Solution:
    solution = solve(PlacementSpec.build(cluster, placement))
    verify(solution.spec, solution.placements_by_component())
    return solution


def wait_for_nodes(count: int, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while len(ray_nodes()) != count:
        assert time.monotonic() < deadline, f"Ray still has {len(ray_nodes())} alive nodes, expected {count}"
        time.sleep(0.5)


def test_a_node_lost_after_planning_fails_before_reserving_and_the_replan_launches(local: LocalRayCluster) -> None:
    solution = solved({"a": {"processes": 2, "hardware_per_process": 2}})
    assert [p.cluster_node_rank for p in solution.placements("a")] == [0, 1]
    assert len(plan(solution, job_name=JOB).bundles) == 4  # planned while all nodes were alive
    groups_before = len(placement_group_table())
    lost = next(node for node in local._cluster.worker_nodes if node.node_id == _ray_node_id(1))
    local._cluster.remove_node(lost)
    try:
        wait_for_nodes(2)
        with pytest.raises(PlacementConfigError, match=r"node 1 of the plan has no Ray node .* re-plan without it"):
            reserve(solution, job_name=JOB, timeout_s=5)
        assert len(placement_group_table()) == groups_before  # nothing was even created
        after = replan(solution, [1])
        assert moved(solution, after) == {"a": 1}
        with reserve(after, job_name=JOB, timeout_s=10) as reservation:
            nodes = reservation.plan.node_ids
            got = reservation.launch("a", Steady).execute_all("where_and_what")
            assert got == [(nodes[0], "0,1"), (nodes[2], "0,1")] and nodes[1] == ""
    finally:
        local._cluster.add_node(**LocalRayCluster._node_args(MODEL, 1, CPUS_PER_NODE))
        wait_for_nodes(3)
    assert_no_leaks()


def test_a_node_with_fewer_gpus_than_the_model_fails_before_reserving(local: LocalRayCluster) -> None:
    bigger = Cluster(num_nodes=3, num_gpus_per_node=[2, 4, 2])
    solution = solved({"a": {"placement": "2-5", "tensor_parallel_size": 4}}, bigger)
    groups_before = len(placement_group_table())
    with pytest.raises(PlacementConfigError, match=r"differs from the cluster model in 1 way: node 1 \(Ray node [0-9a-f]{12}, .*\) has 2 GPUs, the model 4 "):
        reserve(solution, job_name=JOB, timeout_s=5)
    assert len(placement_group_table()) == groups_before
    assert_no_leaks()


OTHER_JOB = """
import sys, ray
from ray.util.placement_group import placement_group
ray.init(address=sys.argv[1], log_to_driver=False)
held = placement_group([{"GPU": 1.0}, {"GPU": 1.0}], strategy="PACK", name="other-job",  # Ray 2.49.0's STRICT_PACK ignores selectors
                       bundle_label_selector=[{sys.argv[2]: "1"}] * 2)
assert held.wait(30)
print("holding", flush=True)
sys.stdin.read()  # hold until the test closes stdin; the group goes when this driver exits
"""


def test_gpus_held_by_another_job_give_a_launch_error_naming_the_bundles(local: LocalRayCluster) -> None:
    other = subprocess.Popen([sys.executable, "-c", OTHER_JOB, local.address, NODE_RANK_LABEL],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "holding"
        solution = solved({"a": {"placement": "0-3", "tensor_parallel_size": 2}})  # nodes 0 and 1
        started = time.monotonic()
        with pytest.raises(LaunchError, match=(
                r"the reservation did not fit within 3(\.0)? s: node 1 bundles \[gpu 0, gpu 1\] need GPU 2 \(free 0\)$")):
            reserve(solution, job_name=JOB, timeout_s=3)
        assert time.monotonic() - started >= 3
        assert live_groups(f"{JOB}-reservation-") == []
        assert [pg["name"] for pg in live_groups()] == ["other-job"]  # the other job's group is untouched
    finally:
        other.communicate(timeout=60)
    deadline = time.monotonic() + 30
    while live_groups() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert_no_leaks()


@pytest.mark.parametrize("env_in_constructor", [False, True], ids=["runtime-env", "env-in-constructor"])
def test_a_constructor_raising_on_one_rank_leaves_nothing_behind(local: LocalRayCluster, env_in_constructor: bool) -> None:
    solution = solved({"steady": {"placement": "0-1"}, "loader": {"placement": "2-3"}})
    with pytest.raises(LaunchError, match="loader rank 1: starting FailsOnRankOne failed: .*rank 1 cannot load its checkpoint"):
        with reserve(solution, job_name=JOB, cpus_per_process=0.5) as reservation:
            assert reservation.launch("steady", Steady).execute_all("where") == ["0", "1"]
            reservation.launch("loader", FailsOnRankOne, env_in_constructor=env_in_constructor)
    assert_no_leaks()


def test_a_constructor_that_never_returns_times_out_and_leaves_nothing_behind(local: LocalRayCluster) -> None:
    solution = solved({"a": {"placement": "0"}})
    with pytest.raises(LaunchError, match=r"a: starting Stuck failed: rank 0 not ready within 3 s"):
        with reserve(solution, job_name=JOB) as reservation:
            reservation.launch("a", Stuck, timeout_s=3)
    assert_no_leaks()


@contextmanager
def ctrl_c_after(seconds: float) -> Iterator[None]:
    """Send this process a real SIGINT (what Ctrl-C sends) after ``seconds``, inside the block.

    CP-SAT (ortools 9.15) leaves SIGINT at the OS default after every solve (its
    ``catch_sigint_signal``), so Ctrl-C would kill the process with no ``KeyboardInterrupt`` and no
    cleanup; Python's handler is re-armed here until ``_solver/options.py`` turns that off."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def test_ctrl_c_while_actors_start_leaves_nothing_behind(local: LocalRayCluster) -> None:
    solution = solved({"a": {"placement": "0-1"}})
    with pytest.raises(KeyboardInterrupt):
        with reserve(solution, job_name=JOB, cpus_per_process=0.5) as reservation:
            with ctrl_c_after(3):
                reservation.launch("a", Stuck, timeout_s=60)
    assert_no_leaks()


def test_ctrl_c_while_the_reservation_waits_leaves_nothing_behind(local: LocalRayCluster) -> None:
    hog = ray.remote(Steady).options(num_gpus=2, scheduling_strategy=_on_node(1)).remote()
    ray.get(hog.__ray_ready__.remote())
    try:
        solution = solved({"a": {"placement": "2-3"}})
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            with ctrl_c_after(2):
                reserve(solution, job_name=JOB, timeout_s=60)
        assert time.monotonic() - started < 30  # interrupted, not timed out
        assert live_groups(f"{JOB}-reservation-") == []
    finally:
        ray.kill(hog)
    assert_no_leaks()


def test_an_actor_dying_while_it_starts_names_the_rank_and_leaves_nothing_behind(local: LocalRayCluster) -> None:
    solution = solved({"a": {"placement": "0-1"}})
    with pytest.raises(LaunchError, match=r"^a rank 1: starting DiesOnRankOne failed: .*"):
        with reserve(solution, job_name=JOB, cpus_per_process=0.5) as reservation:
            reservation.launch("a", DiesOnRankOne)
    assert_no_leaks()


def test_a_worker_ray_refuses_to_start_names_the_rank_and_leaves_nothing_behind(local: LocalRayCluster) -> None:
    solution = solved({"a": {"placement": "0-1"}})
    with pytest.raises(LaunchError, match=r"^a rank 0: Ray refused to start the worker: too many positional arguments$"):
        with reserve(solution, job_name=JOB, cpus_per_process=0.5) as reservation:
            reservation.launch("a", Steady, "an argument Steady does not take")
    assert_no_leaks()


STALE = """
import sys
from solver_placement import Cluster, LaunchError, PlacementSpec, reserve, solve
solution = solve(PlacementSpec.build(Cluster(num_nodes=1, num_gpus_per_node=2), {"a": "0-1"}))
try:
    reserve(solution, connect_timeout_s=2)
except LaunchError as error:
    print(error)
"""


def test_a_stale_ray_address_fails_fast_and_creates_nothing(local: LocalRayCluster) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{sock.getsockname()[1]}"
    started = time.monotonic()
    answer = subprocess.run([sys.executable, "-c", STALE], capture_output=True, text=True, timeout=120, env={**os.environ, "RAY_ADDRESS": dead})
    assert answer.stdout.startswith(f"no Ray answers at {dead} (RAY_ADDRESS) within 2 s"), answer.stderr
    assert time.monotonic() - started < 60
    assert_no_leaks()


def _on_node(rank: int) -> NodeAffinitySchedulingStrategy:
    return NodeAffinitySchedulingStrategy(_ray_node_id(rank), soft=False)


def _ray_node_id(rank: int) -> str:
    return next(node.node_id for node in ray_nodes() if node.labels.get(NODE_RANK_LABEL) == str(rank))
