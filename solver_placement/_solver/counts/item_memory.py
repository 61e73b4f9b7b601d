"""GPU memory per item, for a view whose nodes hold GPUs beside items of other kinds.

Why: ``memory_gb`` is checked on GPUs only (``rules/memory.py``: a robot or a whole node holds
no GPU memory), but the count model reads memory per node (``stacks.py`` makes one graph of
pairs that may not share per GPU size). A view of several kinds (``kinds.py``) lays a node's
GPUs and its other items side by side as one node's "GPUs", so a per-node memory would bind on
the robots too: two components whose memory does not fit one GPU together could not share a
robot there, and one whose memory does not fit a GPU at all could not use the node's robots.

So such a view states no memory per node (its graphs have no memory pairs) and each of its GPUs
carries its memory instead, as a fixed load of no process (``fixed_loads.py``): the GPU admits
only the stacks of classes whose every mix of running and idle memory fits it, exactly as the
flat model checks each GPU, while the other items admit every stack the rules allow. ``typed.py``
tells a node's GPUs apart from its other items by that load, so the check stays per node shape,
never per GPU of the cluster. Nodes of GPUs alone carry it per GPU too: their stacks are then
exact for any mix (three components that fit a GPU two by two but not all together need no
separate model, ``separate.py``), which measured faster on the ``kinds memory`` benchmark (p95
2.5 s against 4.4 s on 2-16 nodes, every case proven against 11 of 12).
"""

from __future__ import annotations

import numpy as np

from solver_placement._cluster.cluster import Cluster
from solver_placement._cluster.layout import ClusterLayout
from solver_placement._errors import InternalError
from solver_placement._solver.rules.memory import memory_per_gpu


class ItemMemoryCluster(Cluster):
    """A view's cluster whose memory is stated per item where per node would be wrong.

    ``item_mb[v]``: the memory (MB, whole megabytes as the flat model counts them) of view item
    ``v`` where it is a GPU of known memory, -1 elsewhere (an item of another kind, a GPU of
    unknown memory).
    """

    item_mb: np.ndarray

    @classmethod
    def with_item_memory(cls, layout: ClusterLayout, item_mb: np.ndarray) -> ItemMemoryCluster:
        """The cluster of ``layout`` with ``item_mb`` per GPU of the view (see the class; its
        one pseudo-item per node, ``unit: node``, carries none)."""
        cluster = cls.from_layout(layout)
        gpus = int(cluster.gpus_per_node.sum())
        if not isinstance(cluster, ItemMemoryCluster) or item_mb.shape != (gpus,):
            raise InternalError("a view's item memory must give one value per GPU of the view")  # as built by kinds.py: never user input
        cluster.item_mb = np.full(cluster.num_hardware, -1, dtype=np.int64)  # the view's GPUs come first, node by node
        cluster.item_mb[:gpus] = item_mb
        return cluster


def item_memory_mb(cluster: Cluster) -> np.ndarray:
    """Per item of ``cluster``, the memory (MB) its GPU check reads, -1 where none is checked:
    its node's GPU memory, or on a view's node of several kinds the view's own per item."""
    return np.maximum(memory_per_gpu(cluster.gpu_memory_gb)[cluster.hw_node], stated_per_item(cluster))


def stated_per_item(cluster: Cluster) -> np.ndarray:
    """Per item, the memory (MB) a view states for it alone (-1: none, its node's memory if any)."""
    if isinstance(cluster, ItemMemoryCluster):
        return cluster.item_mb
    return np.full(cluster.num_hardware, -1, dtype=np.int64)


__all__ = ["ItemMemoryCluster", "item_memory_mb", "stated_per_item"]
