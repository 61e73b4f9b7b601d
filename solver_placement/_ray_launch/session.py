"""Which Ray to launch on: the one ``connect`` attaches to, else an embedded local cluster whose
simulated nodes (logical GPUs, robot resources, node-rank labels) match the model (forced with
``address="local"``).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from solver_placement._cluster.cluster import Cluster
from solver_placement._cluster.ray_nodes import DEFAULT_CONNECT_TIMEOUT_S, GPU_MODEL_PREFIX
from solver_placement._errors import LaunchError, PlacementConfigError
from solver_placement._ray_api import ray
from solver_placement._ray_launch.cluster_check import check_cluster_matches, items_on
from solver_placement._ray_launch.connect import already_connected, chosen_address, connect_to, ray_nodes
from solver_placement._ray_launch.labels import cluster_node_labels
from solver_placement._ray_launch.launch_plan import map_nodes
from solver_placement._ray_launch.ray_start_record import RecordKeeper
from solver_placement._ray_launch.uninterrupted import uninterrupted

#: Largest model the embedded local cluster simulates (each node is a raylet process here).
MAX_EMBEDDED_NODES = 16


class LocalRayCluster(AbstractContextManager):
    """A simulated multi-node Ray cluster on this machine, shaped like ``cluster``.

    Node 0 is the head; every node carries the labels a model's node carries on Ray
    (``labels.cluster_node_labels``: its rank, node groups, GPU model, topology labels), its GPUs as
    logical GPUs, its GPU model also as Ray's ``accelerator_type:<model>`` resource (as real GPU
    nodes advertise both) and its custom hardware (robots) as custom resources. ``cpus_per_node`` is what
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
        self._cluster = RayTestCluster()
        try:
            self._start_head(self._node_args(cluster, 0, cpus[0]))
            self.address: str = self._cluster.address
            for rank in range(1, cluster.num_nodes):
                with uninterrupted():
                    self._cluster.add_node(**self._node_args(cluster, rank, cpus[rank]))
        except BaseException:  # a failed or interrupted start stops the nodes already up
            with uninterrupted():
                self._stop_nodes()
            raise

    def _start_head(self, head_args: dict[str, Any]) -> None:
        """Start the head without leaving its address as the machine's ``ray start`` record
        (``ray_start_record``): Ray writes it once the head's processes run, before waiting for
        the head to register, so the record is put back at once and the wait comes after."""
        with uninterrupted():
            keeper = RecordKeeper()
            try:
                self._cluster.add_node(wait=False, **head_args)
            finally:
                keeper.put_back(self._cluster.address)
            self._cluster.wait_for_nodes()

    @staticmethod
    def _node_args(cluster: Cluster, rank: int, cpus: float) -> dict[str, Any]:
        custom = {kind: float(count) for kind, count in items_on(cluster, rank).items()}
        model = cluster.accelerator_models[rank]
        if model is not None:  # Ray's spelling of a node's GPU model, as real nodes advertise it
            custom[f"{GPU_MODEL_PREFIX}{model}"] = 1.0
        return {
            "num_cpus": cpus,
            "num_gpus": int(cluster.gpus_per_node[rank]),
            "resources": custom,
            "labels": cluster_node_labels(cluster, rank),
        }

    def connect(self) -> None:
        with uninterrupted():  # a ray.init cut short leaves a half-made driver for Ray's atexit hook
            ray.init(address=self.address, log_to_driver=False, configure_logging=False)

    def shutdown(self) -> None:
        """Disconnect and stop every node, whole even when Ctrl-C comes meanwhile (it is raised
        once all is stopped: ``uninterrupted``)."""
        with uninterrupted():
            if ray.is_initialized():
                ray.shutdown()
            self._stop_nodes()

    def _stop_nodes(self) -> None:
        """Stop the workers, then the head. Not the test cluster's ``shutdown``: that also deletes
        the machine's ``ray start`` record, which is the user's, not the embedded Ray's."""
        for node in list(self._cluster.worker_nodes):
            self._cluster.remove_node(node)
        if self._cluster.head_node is not None:
            self._cluster.remove_node(self._cluster.head_node)

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


def ensure_ray(
    cluster: Cluster | None,
    address: str | None = None,
    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
) -> LocalRayCluster | None:
    """Connect to the Ray the caller means (``connect``'s attach order), else start the embedded
    cluster shaped like ``cluster`` (also when ``address="local"``).

    Returns the embedded cluster (the caller shuts it down), else None.
    """
    if already_connected(address):
        return None
    target, source = chosen_address(address)
    if target is None:
        if cluster is None:
            raise LaunchError(
                f"no Ray cluster to attach to ({source}) and no cluster model to shape an embedded one: "
                "pass cluster=... or the address of a running Ray"
            )
        local = LocalRayCluster(cluster)
        try:
            local.connect()
        except BaseException:  # Ctrl-C while connecting: the caller never gets the cluster to stop
            local.shutdown()
            raise
        return local
    connect_to(target, source, connect_timeout_s)
    return None


def attach(cluster: Cluster | None, address: str | None, connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S) -> Callable[[], None]:
    """Connect as :func:`ensure_ray` does and return what undoes it: stopping the embedded Ray,
    disconnecting, or nothing when this process was connected before (that connection is not ours)."""
    was_connected = ray.is_initialized()
    local = ensure_ray(cluster, address, connect_timeout_s)
    if local is not None:
        return local.shutdown
    return _keep_connected if was_connected else ray.shutdown


def _keep_connected() -> None:
    """Undoing an attach to a connection made before: nothing to do."""


def check_against_live(cluster: Cluster) -> None:
    """Raise one error listing every difference between the model and the connected Ray's nodes,
    counting every model node as used (a model checked before solving may use any of them)."""
    check_cluster_matches(cluster, map_nodes(ray_nodes(), cluster.num_nodes), range(cluster.num_nodes))
