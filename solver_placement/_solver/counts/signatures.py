"""Node signatures: what every rule and term sees of a node, so nodes of one signature can swap contents.

Two paths move a count layout's node contents between nodes after the count model: re-planning
gives each surviving node its previous content back (``replan.py``), and past many domains the
dropped spec's contents move so every domain holds whole units (``alike_domains.py``). Both are
sound only between nodes no rule or term tells apart, which is what a signature holds: its GPUs
and their memory, its labels, and the local ids each request may take or holds there (a rank
string's own items included, so it never moves: only free requests' contents do).
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from solver_placement._arrays import distinct
from solver_placement._solver.counts.item_memory import item_memory_mb
from solver_placement._specification.placement_spec import PlacementSpec


def node_signatures(spec: PlacementSpec, labels: Collection[str] | None = None) -> list[tuple[object, ...]]:
    """Per node, what every rule and the ``nodes``, ``balance`` and ``topology`` terms see of it:
    its GPUs and memory, its labels (only ``labels`` where given: a caller that keeps the others'
    domains itself), and the local ids each request may take or holds there."""
    cluster = spec.cluster
    windows: list[list[tuple[str, tuple[int, ...]]]] = [[] for _ in range(cluster.num_nodes)]
    for name, request in sorted(spec.requests.items()):
        items = distinct(request.cand_hw)
        nodes, local = cluster.hw_node[items], cluster.hw_local[items]
        order = np.lexsort((local, nodes))
        nodes, local = nodes[order].tolist(), local[order].tolist()  # sorted once (per node, each slice of the sorted arrays: quadratic)
        bounds = np.flatnonzero(np.r_[True, np.diff(nodes) != 0, True]).tolist()
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            if hi > lo:
                windows[nodes[lo]].append((name, tuple(local[lo:hi])))
    memory = np.full(cluster.num_nodes, -1, dtype=np.int64)  # its GPUs' memory (MB), per node or, on a view of several kinds, per GPU
    np.maximum.at(memory, cluster.hw_node, item_memory_mb(cluster))
    shown = (lambda node: tuple(sorted(cluster.node_labels[node].items()))) if labels is None else (lambda node: tuple(cluster.node_labels[node].get(label) for label in labels))
    return [(int(cluster.gpus_per_node[node]), int(memory[node]), shown(node), tuple(windows[node])) for node in range(cluster.num_nodes)]


__all__ = ["node_signatures"]
