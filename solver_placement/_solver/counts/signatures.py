"""Node signatures: what every rule and term sees of a node, so nodes of one signature can swap contents.

Two paths move a count layout's node contents between nodes after the count model: re-planning
gives each surviving node its previous content back (``replan.py``), and past many domains the
dropped spec's contents move so every domain holds whole units (``alike_domains.py``). Both are
sound only between nodes no rule or term tells apart, which is what a signature holds: its GPUs
and their memory, its labels, and the local ids each request may take or holds there (a rank
string's own items included, so it never moves: only free requests' contents do).

Signatures are compared as rows of one integer table, grouped at once (``row_groups``), not as
a tuple per node: 0.25 s of CPU for the tuples of 16,384 nodes, and past the time a solve of
them takes where it runs on every spec of many domains.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from solver_placement._arrays import row_groups
from solver_placement._solver.counts.item_memory import item_memory_mb
from solver_placement._specification.placement_spec import PlacementSpec


def node_classes(spec: PlacementSpec, labels: Collection[str] | None = None) -> list[np.ndarray]:
    """The nodes of each signature (ascending, the classes in order of their first node): nodes
    alike in their GPUs and memory, their labels (only ``labels`` where given: a caller that
    keeps the others' domains itself) and, for each request, the local ids it may take or holds
    there (as many of each as it has)."""
    cluster = spec.cluster
    width = int(cluster.hw_local.max(initial=0)) + 1
    memory = np.full(cluster.num_nodes, -1, dtype=np.int64)  # its GPUs' memory (MB), per node or, on a view of several kinds, per GPU
    np.maximum.at(memory, cluster.hw_node, item_memory_mb(cluster))
    columns = [cluster.gpus_per_node.astype(np.int64), memory]
    for label in sorted({name for stated in cluster.node_labels for name in stated} if labels is None else labels):
        values = [stated.get(label) for stated in cluster.node_labels]
        index = {value: i for i, value in enumerate(dict.fromkeys(values))}  # a node without the label: one value of its own, shared
        columns.append(np.array([index[value] for value in values], dtype=np.int64))
    for _, request in sorted(spec.requests.items()):
        items = request.window_items  # per node and local id, how many of them: one count (``np.add.at`` took 11 ms a request on 65,536 nodes)
        window = np.bincount(cluster.hw_node[items] * width + cluster.hw_local[items], minlength=cluster.num_nodes * width)
        columns += list(window.reshape(cluster.num_nodes, width).T)
    return row_groups(np.column_stack(columns))


__all__ = ["node_classes"]
