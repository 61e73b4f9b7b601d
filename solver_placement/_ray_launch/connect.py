"""Attaching to a running Ray as Ray users expect, failing fast on a dead address, and reading its nodes.

The attach order (docs/ray.md, "Reserving and launching"): a Ray this process is already connected to; a
given address (``"auto"`` keeps Ray's meaning); the ``RAY_ADDRESS`` variable; the cluster the
last ``ray start`` on this machine recorded. ``address="local"`` asks for the embedded Ray
instead, which ``session`` starts because it needs a cluster model to shape it. Unlike
``ray.init(address="auto")`` nothing here attaches to some other Ray process merely found
running (a stranger's cluster). Every address is first tried with a plain TCP connection,
because ``ray.init`` on a dead address retries for minutes.

This module knows no cluster model, so ``Cluster.from_ray`` can call it (the one deferred
upward import of ``_cluster/``, listed in ``tests/test_architecture.py``).
"""

from __future__ import annotations

import os
import socket

from solver_placement._cluster.ray_nodes import DEFAULT_CONNECT_TIMEOUT_S, RayNode
from solver_placement._errors import LaunchError, cut, shown
from solver_placement._ray_api import available_resources_per_node, ray
from solver_placement._ray_launch.uninterrupted import uninterrupted

#: ``address`` value that forces the embedded local Ray, even when another Ray is reachable.
LOCAL_ADDRESS = "local"


def live_nodes(address: str | None = None, connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S, *, available: bool = False) -> list[RayNode]:
    """The alive nodes of the Ray cluster ``address`` chooses (this process stays connected);
    ``available``: with the resources free now instead of the nodes' totals.

    Only a running cluster can be read: ``address="local"`` or no Ray to attach to is a
    ``LaunchError`` saying how to name one.
    """
    if not already_connected(address):
        target, source = chosen_address(address)
        if target is None:
            raise LaunchError(
                f"no running Ray cluster to read ({source}): pass its address (--ray ADDRESS, Cluster.from_ray(address)), "
                "set RAY_ADDRESS, or start one with `ray start --head`"
            )
        connect_to(target, source, connect_timeout_s)
    return ray_nodes(available=available)


def ray_nodes(*, available: bool = False) -> list[RayNode]:
    """The alive nodes of the connected Ray cluster; ``available``: with the resources free now
    (Ray's view, refreshed every few hundred milliseconds; a resource all held is absent)."""
    free = available_resources_per_node() if available else {}
    return [
        RayNode(
            node["NodeID"],
            node["NodeManagerAddress"],
            dict(free.get(node["NodeID"], {})) if available else dict(node["Resources"]),
            dict(node.get("Labels") or {}),
        )
        for node in ray.nodes()
        if node.get("Alive")
    ]


def already_connected(address: str | None) -> bool:
    """Whether this process is connected to Ray, which then wins (refusing ``address="local"``)."""
    if not ray.is_initialized():
        return False
    if address == LOCAL_ADDRESS:
        raise LaunchError(
            'address="local" asks for the embedded Ray, but this process is already connected to Ray; '
            "call ray.shutdown() first or leave address unset to use that Ray"
        )
    return True


def chosen_address(address: str | None) -> tuple[str | None, str]:
    """The Ray address to attach to and where it came from; None: nothing chosen (the embedded Ray).

    A given address is named with its value (``address='10.0.0.1:6379'``), so a message about a
    failed attach says which address was tried."""
    if address == LOCAL_ADDRESS:
        return None, "address='local'"
    if address == "auto":
        from ray._private.services import canonicalize_bootstrap_address_or_die

        try:
            return canonicalize_bootstrap_address_or_die("auto"), 'address="auto"'
        except ConnectionError as error:
            raise LaunchError(f'address="auto": {error}') from None
    if address:
        return address, f"address={shown(address)}"
    if os.environ.get("RAY_ADDRESS"):
        return os.environ["RAY_ADDRESS"], "RAY_ADDRESS"
    recorded = ray_start_address()
    if recorded:
        return recorded, "the address `ray start` recorded on this machine"
    return None, "no address=, RAY_ADDRESS or `ray start` cluster"


def ray_start_address() -> str | None:
    """The head address the last ``ray start`` on this machine wrote (``ray stop`` removes it)."""
    from ray._private.utils import read_ray_address

    return read_ray_address(None) or None


def connect_to(target: str, source: str, connect_timeout_s: float) -> None:
    """``ray.init`` at ``target``, after checking within ``connect_timeout_s`` that something listens there."""
    _check_reachable(target, source, connect_timeout_s)
    try:
        with uninterrupted():  # a ray.init cut short leaves a half-made driver for Ray's atexit hook
            ray.init(address=target, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as error:
        raise LaunchError(
            f"connecting to Ray at {cut(target)} ({source}) failed: {error}; "
            'to use the embedded Ray instead: --local on the command line, address="local" in Python'
        ) from None


def _check_reachable(target: str, source: str, timeout_s: float) -> None:
    """Fail within ``timeout_s`` when nothing listens at the address (a stale or dead Ray)."""
    host, _, port = target.removeprefix("ray://").rpartition(":")
    if not port.isdigit():
        raise LaunchError(f"the Ray address {shown(target)} ({source}) is not HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as error:
        raise LaunchError(
            f"no Ray answers at {cut(target)} ({source}) within {timeout_s:g} s: {error.strerror or error}; "
            "the address is stale or the cluster is down (run `ray stop` to forget a dead `ray start` cluster, "
            'or use the embedded Ray instead: --local on the command line, address="local" in Python)'
        ) from None
