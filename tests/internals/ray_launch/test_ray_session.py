"""Choosing the Ray to attach to, without starting one: a dead address fails fast and clearly,
``address="local"`` is explicit, a bare call never attaches to a stranger's Ray, and without Ray
installed every Ray feature says which extra to install."""

from __future__ import annotations

import socket
import time

import pytest
import ray

from solver_placement import Cluster, LaunchError
from solver_placement._ray_launch import connect
from solver_placement._ray_launch.session import ensure_ray

pytestmark = pytest.mark.skipif(ray.is_initialized(), reason="needs a process not connected to Ray")


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_dead_ray_address_fails_fast_with_a_launch_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{closed_port()}")
    started = time.monotonic()
    with pytest.raises(LaunchError, match=r"no Ray answers at 127\.0\.0\.1:\d+ \(RAY_ADDRESS\) within 2 s: .*stale"):
        ensure_ray(None, connect_timeout_s=2)
    assert time.monotonic() - started < 5 and not ray.is_initialized()


def test_a_stale_ray_start_address_file_fails_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(connect, "ray_start_address", lambda: f"127.0.0.1:{closed_port()}")
    with pytest.raises(LaunchError, match=r"the address `ray start` recorded on this machine.*`ray stop`"):
        ensure_ray(None, connect_timeout_s=2)


def test_a_given_address_wins_over_ray_address_and_must_be_host_port(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    with pytest.raises(LaunchError, match=r"'nowhere' \(address='nowhere'\) is not HOST:PORT"):
        ensure_ray(None, address="nowhere")


def test_without_a_ray_or_a_model_the_missing_piece_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(connect, "ray_start_address", lambda: None)
    with pytest.raises(LaunchError, match="no Ray cluster to attach to .* pass cluster=... or the address of a running Ray"):
        ensure_ray(None)
    with pytest.raises(LaunchError, match="no Ray cluster to attach to"):
        ensure_ray(None, address="local")  # "local" never looks for another Ray


def test_from_ray_reads_only_a_running_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(connect, "ray_start_address", lambda: None)
    with pytest.raises(LaunchError, match=r"no running Ray cluster to read \(no address=, RAY_ADDRESS .*`ray start --head`"):
        Cluster.from_ray()
    with pytest.raises(LaunchError, match=r"no running Ray cluster to read \(address='local'\)"):
        Cluster.from_ray("local")
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{closed_port()}")
    with pytest.raises(LaunchError, match=r"no Ray answers at .* \(RAY_ADDRESS\) within 1 s"):
        Cluster.from_ray(connect_timeout_s=1)
    assert not ray.is_initialized()


WITHOUT_RAY = """
import sys
sys.modules["ray"] = None  # what an install without the [ray] extra sees: import ray fails
import solver_placement
from solver_placement import Cluster, LaunchError, solve
from solver_placement._ray_launch.launch_plan import stated_ray_nodes, to_ray  # the dry-run plan needs no Ray
cluster = Cluster(num_nodes=1, num_gpus_per_node=2)
to_ray(solve({"cluster": {"num_nodes": 1, "num_gpus_per_node": 2, "component_placement": {"a": "0-1"}}}).placements_by_component(),
       cluster, stated_ray_nodes(cluster))
for use in (lambda: solver_placement.reserve, lambda: Cluster.from_ray("127.0.0.1:1")):
    try:
        use()
    except LaunchError as error:
        print(error)
"""


def test_without_ray_installed_every_ray_feature_names_the_extra() -> None:
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", WITHOUT_RAY], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "Ray is not installed; launching on Ray and reading a Ray cluster need it: pip install 'solver_placement[ray]'"
    ] * 2
