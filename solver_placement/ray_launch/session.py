"""Which Ray to launch on: the one already connected, a given address, or an embedded local
cluster whose simulated nodes (logical GPUs, robot resources, node-rank labels) match the model.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from typing import Any

import ray

from solver_placement.cluster.cluster import Cluster
from solver_placement.constants import ACCELERATOR, NODE
from solver_placement.errors import PlacementConfigError
from solver_placement.ray_launch.plan import NODE_RANK_LABEL, RayNode

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

    Node 0 is the head; every node carries the ``solver-placement/node-rank`` label, its GPUs as
    logical GPUs and its custom hardware (robots) as custom resources. ``cpus_per_node`` is what
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
        custom: dict[str, float] = {}
        for hw in range(cluster.num_hardware):
            kind = cluster.kind_of(hw)
            if int(cluster.hw_node[hw]) == rank and kind not in (ACCELERATOR, NODE):
                custom[kind] = custom.get(kind, 0.0) + 1.0
        return {
            "num_cpus": cpus,
            "num_gpus": int(cluster.gpus_per_node[rank]),
            "resources": custom,
            "labels": {NODE_RANK_LABEL: str(rank)},
        }

    def connect(self) -> None:
        ray.init(address=self.address, log_to_driver=False, configure_logging=False)

    def shutdown(self) -> None:
        if ray.is_initialized():
            ray.shutdown()
        self._cluster.shutdown()

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


def ensure_ray(cluster: Cluster, address: str | None = None) -> LocalRayCluster | None:
    """Connect to Ray; start an embedded local cluster when none is running.

    Returns the embedded cluster (the caller shuts it down) or None when an existing Ray is used.
    """
    if ray.is_initialized():
        return None
    target = address or os.environ.get("RAY_ADDRESS")
    if target:
        ray.init(address=target, log_to_driver=False)
        return None
    try:
        ray.init(address="auto", log_to_driver=False)
        return None
    except ConnectionError:
        pass
    local = LocalRayCluster(cluster)
    local.connect()
    return local
