"""GPU memory per item, for a view whose nodes hold GPUs beside items of other kinds.

Why: ``memory_gb`` is checked on GPUs only (``rules/memory.py``: a robot or a whole node holds
no GPU memory), but the count model reads memory per node (``stacks.py`` makes one graph of
pairs that may not share per GPU size). A view of several kinds (``kinds.py``) lays a node's
GPUs and its other items side by side as one node's "GPUs", so a per-node memory would bind on
the robots too: two components whose memory does not fit one GPU together could not share a
robot there, and one whose memory does not fit a GPU at all could not use the node's robots.

So on such a node the view states no memory per node (the node's graph has no memory pairs) and
each of its GPUs carries its memory instead, as a fixed load of no process (``fixed_loads.py``):
the GPU admits only the stacks of classes whose every mix of running and idle memory fits it,
exactly as the flat model checks each GPU, while the node's other items admit every stack the
rules allow. ``typed.py`` tells the node's GPUs apart from its other items by that load, so the
check stays per node shape, never per GPU of the cluster.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from solver_placement._cluster.cluster import Cluster
from solver_placement._cluster.layout import ClusterLayout
from solver_placement._errors import InternalError
from solver_placement._solver.rules.memory import megabytes


class ItemMemoryCluster(Cluster):
    """A view's cluster whose memory is stated per item where per node would be wrong.

    ``item_mb[v]``: the memory (MB, whole megabytes as the flat model counts them) of view item
    ``v`` where it is checked per item (a GPU of a node the view gives no memory: one holding
    items of other kinds too), -1 elsewhere (an item of another kind, a GPU of unknown memory,
    or a node whose memory the view states per node as usual).
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
    node_mb = np.array([-1 if gb is None else megabytes(gb) for gb in cluster.gpu_memory_gb], dtype=np.int64)
    return np.maximum(node_mb[cluster.hw_node], stated_per_item(cluster))


def stated_per_item(cluster: Cluster) -> np.ndarray:
    """Per item, the memory (MB) a view states for it alone (-1: none, its node's memory if any)."""
    if isinstance(cluster, ItemMemoryCluster):
        return cluster.item_mb
    return np.full(cluster.num_hardware, -1, dtype=np.int64)


def split_memory(memory: Sequence[float | None], gpus: np.ndarray, others: np.ndarray) -> tuple[list[float | None], np.ndarray]:
    """Per node of a view of GPUs and other kinds, the memory it states per node: the GPUs' where
    the node holds GPUs alone (``gpus[n] > 0``, ``others[n] == 0``), None elsewhere (a node of
    other items alone has no GPU memory); and per node the memory (MB) each of its GPUs carries
    as an item instead where it holds both (-1 elsewhere, or unknown)."""
    mixed = (gpus > 0) & (others > 0)
    alone = (gpus > 0) & (others == 0)
    per_node = [gb if only else None for gb, only in zip(memory, alone.tolist())]
    per_item = np.array([megabytes(gb) if both and gb is not None else -1 for gb, both in zip(memory, mixed.tolist())], dtype=np.int64)
    return per_node, per_item


__all__ = ["ItemMemoryCluster", "item_memory_mb", "split_memory", "stated_per_item"]
