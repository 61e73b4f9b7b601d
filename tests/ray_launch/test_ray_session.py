"""Choosing the Ray to attach to, without starting one: a dead address fails fast and clearly,
``address="local"`` is explicit, and a bare call never attaches to a stranger's Ray."""

from __future__ import annotations

import socket
import time

import pytest
import ray

from solver_placement import LaunchError
from solver_placement.ray_launch import session
from solver_placement.ray_launch.session import ensure_ray

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
    monkeypatch.setattr(session, "ray_start_address", lambda: f"127.0.0.1:{closed_port()}")
    with pytest.raises(LaunchError, match=r"the address `ray start` recorded on this machine.*`ray stop`"):
        ensure_ray(None, connect_timeout_s=2)


def test_a_given_address_wins_over_ray_address_and_must_be_host_port(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    with pytest.raises(LaunchError, match=r"'nowhere' \(address=\) is not HOST:PORT"):
        ensure_ray(None, address="nowhere")


def test_without_a_ray_or_a_model_the_missing_piece_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(session, "ray_start_address", lambda: None)
    with pytest.raises(LaunchError, match="no Ray cluster to attach to .* pass cluster=... or the address of a running Ray"):
        ensure_ray(None)
    with pytest.raises(LaunchError, match="no Ray cluster to attach to"):
        ensure_ray(None, address="local")  # "local" never looks for another Ray
