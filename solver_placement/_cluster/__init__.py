"""The cluster model: the rank grammar (``ranks``), the ``cluster:`` config section (``schema``)
and the physical hardware tables every later stage decides on (``cluster``)."""

from solver_placement._cluster.cluster import Cluster, NodeGroup, ResourceSet

__all__ = ["Cluster", "NodeGroup", "ResourceSet"]
