"""Where a re-plan's surviving processes are, read from the answer they survive from.

``replan`` pins every process that keeps its items by an explicit rank list in the re-planned
cluster's numbering, hundreds of thousands of them on 65,536 nodes; these read the nodes and the
items from the assignment the records are made from, by arrays, so no record is read or made.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from solver_placement._cluster.cluster import Cluster
from solver_placement._constants import NODE
from solver_placement._errors import InternalError
from solver_placement._solver.previous import item_ids
from solver_placement._solver.solution import Solution
from solver_placement._specification.grammar import ComponentSpec


def process_nodes(solution: Solution, name: str) -> np.ndarray:
    """Per process of ``name`` (rank order), its node: its first item's, as its record says."""
    assignment = solution.assignment(name)
    return solution.cluster.hw_node[assignment.hardware[assignment.indptr[:-1]]].astype(np.int64)


def on_lost(solution: Solution, name: str, lost: set[int]) -> np.ndarray:
    """Per process of ``name``, whether it ran on a lost node."""
    lost_node = np.zeros(solution.cluster.num_nodes, dtype=bool)
    lost_node[sorted(lost)] = True
    return lost_node[process_nodes(solution, name)]


def ranks_of(
    solution: Solution, component: ComponentSpec, keep: np.ndarray, renamed: Mapping[str, str], cluster: Cluster
) -> np.ndarray | list[list[int]]:
    """Per process of ``keep`` (a mask over the component's processes), the ranks of its items in
    the component's node groups on the new cluster (each item counted in the group it was taken
    from, which matters when groups overlap; an item in a group twice takes its first rank
    there): one row per process when they hold as many items each, else a list each. By arrays,
    read from the assignment the records are made from: a re-plan pins hundreds of thousands of
    surviving processes (2.75 s on 65,536 nodes one lookup per item; a list each, 0.3 s more)."""
    labels = list(dict.fromkeys(renamed.values()))
    resources = cluster.resources(labels, component.count_nodes)
    old_cluster, old = solution.cluster, solution.spec.resources_of(component.name)
    new_group = np.array([labels.index(renamed[group.label]) for group in old.groups], dtype=np.int64)
    assignment = solution.assignment(component.name)
    sizes = np.diff(assignment.indptr)[keep]
    items = np.repeat(keep, np.diff(assignment.indptr))
    hardware, old_ranks = assignment.hardware[items], assignment.ranks[items]
    first = np.repeat(assignment.hardware[assignment.indptr[:-1]][keep], sizes)  # a record names its items on its first item's node and type
    to_new = np.array([cluster.kinds.index(kind) if kind in cluster.kinds else -1 for kind in old_cluster.kinds], dtype=np.int64)
    kind = to_new[old_cluster.hw_kind[first]]
    locals_ = np.where(kind == (cluster.kinds.index(NODE) if NODE in cluster.kinds else -1), 0, old_cluster.hw_local[hardware])  # a node is its own item 0
    keys = new_group[old.group_of[old_ranks]] * cluster.num_hardware + surviving_ids(cluster, old_cluster.hw_node[first].astype(np.int64), kind, locals_.astype(np.int64))
    table = resources.group_of.astype(np.int64) * cluster.num_hardware + resources.physical
    order = np.argsort(table, kind="stable")  # equal keys in rank order: the leftmost match is the first rank
    found = np.minimum(np.searchsorted(table[order], keys), max(order.size - 1, 0))
    if order.size == 0 or not np.array_equal(table[order][found], keys):
        raise InternalError(f"replan: {component.name}: a surviving process holds an item its node groups no longer count")
    ranks = order[found]
    if sizes.size and (sizes == sizes[0]).all():
        return ranks.reshape(sizes.size, int(sizes[0]))
    flat, bounds = ranks.tolist(), np.concatenate(([0], np.cumsum(sizes))).tolist()
    return [flat[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]


def surviving_ids(cluster: Cluster, node: np.ndarray, kind: np.ndarray, local: np.ndarray) -> np.ndarray:
    """The ids of surviving processes' items on the re-planned cluster (every one exists there:
    only lost nodes' items were removed)."""
    ids = item_ids(cluster, node, kind, local)
    if (ids < 0).any():
        raise InternalError("replan: a surviving process holds an item the re-planned cluster does not have")
    return ids
