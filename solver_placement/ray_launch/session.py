"""Which Ray to launch on: the one already connected, a given address, ``RAY_ADDRESS``, a
``ray start`` cluster, or an embedded local cluster whose simulated nodes (logical GPUs, robot
resources, node-rank labels) match the model (forced with ``address="local"``).
"""

from __future__ import annotations

import os
import socket
from contextlib import AbstractContextManager
from typing import Any

import ray

from solver_placement.cluster.cluster import Cluster
from solver_placement.errors import LaunchError, PlacementConfigError
from solver_placement.ray_launch.model_check import items_on
from solver_placement.ray_launch.nodes import NODE_RANK_LABEL, RayNode

#: Largest model the embedded local cluster simulates (each node is a raylet process here).
MAX_EMBEDDED_NODES = 16


def ray_nodes() -> list[RayNode]:
    """The alive nodes of the connected Ray cluster."""
    return [
        RayNode(node["NodeID"], node["NodeManagerAddress"], dict(node["Resources"]), dict(node.get("Labels") or {}))
        for node in ray.nodes()
        if node.get("Alive")
    ]


class LocalRayCluster(AbstractContextManager):
    """A simulated multi-node Ray cluster on this machine, shaped like ``cluster``.

    Node 0 is the head; every node carries the ``solver-placement/node-rank`` label and the
    model's node labels, its GPUs as logical GPUs, its GPU model as Ray's
    ``accelerator_type:<model>`` resource and its custom hardware (robots) as custom resources. ``cpus_per_node`` is what
    each simulated node advertises (logical CPUs, not cores).
    """

    def __init__(self, cluster: Cluster, cpus_per_node: float | list[float] = 64.0) -> None:
        from ray.cluster_utils import Cluster as RayTestCluster

        if cluster.num_nodes > MAX_EMBEDDED_NODES:
            raise PlacementConfigError(
                f"the embedded local Ray simulates at most {MAX_EMBEDDED_NODES} nodes; the model has "
                f"{cluster.num_nodes}: connect to a real cluster with address=..."
            )
        cpus = cpus_per_node if isinstance(cpus_per_node, list) else [cpus_per_node] * cluster.num_nodes
        self._cluster = RayTestCluster(initialize_head=True, head_node_args=self._node_args(cluster, 0, cpus[0]))
        for rank in range(1, cluster.num_nodes):
            self._cluster.add_node(**self._node_args(cluster, rank, cpus[rank]))
        self.address = self._cluster.address

    @staticmethod
    def _node_args(cluster: Cluster, rank: int, cpus: float) -> dict[str, Any]:
        custom = {kind: float(count) for kind, count in items_on(cluster, rank).items()}
        model = cluster.accelerator_models[rank]
        if model is not None:  # Ray's spelling of a node's GPU model, as real nodes advertise it
            custom[f"accelerator_type:{model}"] = 1.0
        return {
            "num_cpus": cpus,
            "num_gpus": int(cluster.gpus_per_node[rank]),
            "resources": custom,
            "labels": {**cluster.node_labels[rank], NODE_RANK_LABEL: str(rank)},
        }

    def connect(self) -> None:
        ray.init(address=self.address, log_to_driver=False, configure_logging=False)

    def shutdown(self) -> None:
        if ray.is_initialized():
            ray.shutdown()
        self._cluster.shutdown()

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


#: ``address`` value that forces the embedded local Ray, even when another Ray is reachable.
LOCAL_ADDRESS = "local"
#: Seconds to wait for a Ray head to accept a TCP connection before calling its address dead.
DEFAULT_CONNECT_TIMEOUT_S = 10.0


def ensure_ray(
    cluster: Cluster | None,
    address: str | None = None,
    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
) -> LocalRayCluster | None:
    """Connect to the Ray the caller means, following Ray's own conventions.

    In order: a Ray this process is already connected to; ``address="local"``: a new embedded
    cluster shaped like ``cluster``; a given ``address`` (``"auto"`` keeps Ray's meaning); the
    ``RAY_ADDRESS`` variable; the cluster the last ``ray start`` on this machine recorded;
    otherwise the embedded cluster. Unlike ``ray.init(address="auto")`` this never attaches to
    some other Ray process it merely finds running (a stranger's cluster). Every address is
    checked with a plain TCP connection first, because ``ray.init`` on a dead address retries
    for minutes. Returns the embedded cluster (the caller shuts it down), else None.
    """
    if ray.is_initialized():
        if address == LOCAL_ADDRESS:
            raise LaunchError(
                'address="local" asks for the embedded Ray, but this process is already connected to Ray; '
                "call ray.shutdown() first or leave address unset to use that Ray"
            )
        return None
    target, source = _chosen_address(address)
    if target is None:
        if cluster is None:
            raise LaunchError(
                "no Ray cluster to attach to (no address=, RAY_ADDRESS or `ray start` cluster) and no cluster "
                "model to shape an embedded one: pass cluster=... or the address of a running Ray"
            )
        local = LocalRayCluster(cluster)
        local.connect()
        return local
    _check_reachable(target, source, connect_timeout_s)
    try:
        ray.init(address=target, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as error:
        raise LaunchError(f"connecting to Ray at {target} ({source}) failed: {error}") from None
    return None


def _chosen_address(address: str | None) -> tuple[str | None, str]:
    """The Ray address to attach to and where it came from; None: start the embedded Ray."""
    if address == LOCAL_ADDRESS:
        return None, "address='local'"
    if address == "auto":
        from ray._private.services import canonicalize_bootstrap_address_or_die

        try:
            return canonicalize_bootstrap_address_or_die("auto"), 'address="auto"'
        except ConnectionError as error:
            raise LaunchError(f'address="auto": {error}') from None
    if address:
        return address, "address="
    if os.environ.get("RAY_ADDRESS"):
        return os.environ["RAY_ADDRESS"], "RAY_ADDRESS"
    recorded = ray_start_address()
    return (recorded, "the address `ray start` recorded on this machine") if recorded else (None, "")


def ray_start_address() -> str | None:
    """The head address the last ``ray start`` on this machine wrote (``ray stop`` removes it)."""
    from ray._private.utils import read_ray_address

    return read_ray_address(None) or None


def _check_reachable(target: str, source: str, timeout_s: float) -> None:
    """Fail within ``timeout_s`` when nothing listens at the address (a stale or dead Ray)."""
    host, _, port = target.removeprefix("ray://").rpartition(":")
    if not port.isdigit():
        raise LaunchError(f"the Ray address {target!r} ({source}) is not HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as error:
        raise LaunchError(
            f"no Ray answers at {target} ({source}) within {timeout_s:g} s: {error.strerror or error}; "
            'the address is stale or the cluster is down (run `ray stop` to forget a dead `ray start` cluster, '
            'or pass address="local" for the embedded Ray)'
        ) from None
