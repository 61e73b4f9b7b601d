"""What a user reads when attaching to Ray goes wrong, on the real code paths of both front ends.

A dead address names the address that was tried. A Ray already running with another shape than
the model (the README's ``solver-placement launch models/quickstart.yaml --run`` on a machine
where ``ray start`` ran) lists the differences and names the way out, the embedded Ray shaped
like the model, in both spellings: ``--local`` and ``address="local"``; following it launches.

The running Ray is reached through ``RAY_ADDRESS``, which the attach order reads like the address
``ray start`` records, but only for this process: the machine-wide address file would redirect
every other Ray user of the machine.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray
from click.testing import CliRunner, Result
from helpers import MODELS
from ray.cluster_utils import Cluster as RayTestCluster
from ray_leaks import live_groups, remove_own_groups

from solver_placement import Cluster, LaunchError, PlacementConfigError, PlacementSpec, Solution, reserve, solve
from solver_placement._cli import main

#: The way out every mismatch message names, in the words of each front end.
HINT = 'or launch on the embedded Ray shaped like the model: --local on the command line, address="local" in Python'
#: A model stating one node of 4 GPUs, unlike the running Ray's one node of 2.
FOUR_GPUS = "cluster:\n  num_nodes: 1\n  num_gpus_per_node: 4\n  component_placement:\n    a: 0-3\n"


def run(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def one_line(output: str) -> str:
    """The CLI's output with click's line wrapping undone."""
    return " ".join(output.split())


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def four_gpu_solution() -> Solution:
    return solve(PlacementSpec.build(Cluster(num_nodes=1, num_gpus_per_node=4), {"a": "0-3"}))


@pytest.fixture
def not_connected() -> None:
    """These tests attach themselves: a connection left by an earlier test would win over them."""
    assert not ray.is_initialized()


# ------------------------------------------------------------------------ a dead address
def test_a_dead_address_given_in_python_is_named_in_the_message(not_connected: None) -> None:
    dead = f"127.0.0.1:{closed_port()}"
    started = time.monotonic()
    with pytest.raises(LaunchError) as info:
        reserve(four_gpu_solution(), address=dead, connect_timeout_s=1)
    assert time.monotonic() - started < 5 and not ray.is_initialized()
    message = str(info.value)
    assert message.startswith(f"no Ray answers at {dead} (address='{dead}') within 1 s: ")
    assert message.endswith('or use the embedded Ray instead: --local on the command line, address="local" in Python)')


def test_a_dead_address_read_with_from_ray_is_named_in_the_message(not_connected: None) -> None:
    dead = f"127.0.0.1:{closed_port()}"
    with pytest.raises(LaunchError, match=rf"^no Ray answers at {dead} \(address='{dead}'\) within 1 s"):
        Cluster.from_ray(dead, connect_timeout_s=1)
    assert not ray.is_initialized()


def test_a_dead_address_given_with_ray_on_the_command_line_is_named(not_connected: None, tmp_path: Path) -> None:
    model = tmp_path / "four.yaml"
    model.write_text(FOUR_GPUS)
    dead = f"127.0.0.1:{closed_port()}"
    result = run("launch", model, "--run", "--ray", dead, "--connect-timeout", "1")
    assert result.exit_code == 5, result.output
    assert f"error: no Ray answers at {dead} (address='{dead}') within 1 s" in one_line(result.output)
    assert '--local on the command line, address="local" in Python' in one_line(result.output)
    assert not ray.is_initialized()


# ------------------------------------------------------- a running Ray of another shape
@pytest.fixture(scope="module")
def running() -> Iterator[str]:
    """A Ray running on the machine with another shape than the models, as after
    ``ray start --head --num-gpus 2``: one node with 2 logical GPUs and no node-rank labels
    (which is why it is Ray's own test cluster, not ``LocalRayCluster``: that one labels its
    nodes). This process is not connected to it; the tests attach."""
    cluster = RayTestCluster(initialize_head=True, head_node_args={"num_cpus": 4, "num_gpus": 2})
    try:
        yield cluster.address
    finally:
        cluster.shutdown()


@pytest.fixture
def found_running(running: str, not_connected: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``RAY_ADDRESS`` names the running Ray for the test; whatever connection it leaves (a failed
    attach stays connected) is checked for placement groups and closed, even after a failure."""
    monkeypatch.setenv("RAY_ADDRESS", running)
    try:
        yield running
    finally:
        if ray.is_initialized():
            leaked = remove_own_groups()
            ray.shutdown()
            assert leaked == []


def nothing_reserved_and_disconnect() -> None:
    """Nothing was reserved on the running Ray; then disconnect, as a new process would start."""
    assert live_groups() == []
    ray.shutdown()


@pytest.mark.ray
def test_the_readme_command_on_a_running_ray_of_another_size_names_local(found_running: str) -> None:
    result = run("launch", MODELS / "quickstart.yaml", "--run")
    assert result.exit_code == 2, result.output
    assert one_line(result.output) == (
        f"error: the cluster model has 3 nodes but Ray has 1; they must match (launch on a cluster of 3 nodes; {HINT})"
    )
    nothing_reserved_and_disconnect()


@pytest.mark.ray
def test_a_running_ray_with_fewer_gpus_lists_them_and_local_then_launches(found_running: str, tmp_path: Path) -> None:
    model = tmp_path / "four.yaml"
    model.write_text(FOUR_GPUS)
    result = run("launch", model, "--run")
    assert result.exit_code == 2, result.output
    message = one_line(result.output)
    assert message.startswith("error: the Ray cluster differs from the cluster model in 1 way: node 0 (Ray node ")
    assert message.endswith(f"has 2 GPUs, the model 4 (launch on a matching cluster; solve against the live one: Cluster.from_ray; {HINT})")
    nothing_reserved_and_disconnect()
    followed = run("launch", model, "--run", "--local")
    assert followed.exit_code == 0, followed.output
    assert "4 of 4 processes ran on exactly their planned node and devices; reservation released" in followed.output
    assert not ray.is_initialized()


@pytest.mark.ray
def test_reserve_in_python_names_address_local_and_that_argument_launches(found_running: str) -> None:
    solution = four_gpu_solution()
    with pytest.raises(PlacementConfigError) as info:
        reserve(solution, timeout_s=5)
    assert str(info.value).endswith(f"has 2 GPUs, the model 4 (launch on a matching cluster; solve against the live one: Cluster.from_ray; {HINT})")
    nothing_reserved_and_disconnect()
    with reserve(solution, address="local", timeout_s=30, cpus_per_process=0.1) as reservation:
        assert [bundle.resources.get("GPU") for bundle in reservation.plan.bundles] == [1.0] * 4
    assert not ray.is_initialized()
