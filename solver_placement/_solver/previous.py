"""Where each process was before a re-plan, as physical ids of the cluster it is re-planned on.

Why its own module: ``solve(..., previous=...)`` prices the ``changes`` term with it, and
``replan``'s keep-in-place answer is measured on the same scale (its objective and its bound),
so both read earlier placements the one way. Records are looked up by arrays (one dense table
of the cluster's items): a re-plan reads hundreds of thousands of them, 1.7-3.2 s one
:meth:`Cluster.physical_id` call per item.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain
from operator import attrgetter

import numpy as np

from solver_placement._cluster.cluster import Cluster
from solver_placement._constants import NODE
from solver_placement._errors import PlacementConfigError
from solver_placement._records import Placement
from solver_placement._solver.solution import Solution
from solver_placement._specification.placement_spec import PlacementSpec

#: An earlier answer, or its placement records by component.
PreviousPlacements = Solution | Mapping[str, Sequence[Placement]]


def previous_hardware(spec: PlacementSpec, previous: PreviousPlacements | None) -> dict[str, list[list[int]]]:
    """Physical ids each process held before, per component, on this spec's cluster (records on
    hardware the cluster no longer has, e.g. a lost node, are left out)."""
    if previous is None:
        return {}
    if isinstance(previous, Solution):  # its records are its assignments: read those, no record by record
        return {name: _assigned(spec.cluster, previous, name) for name in previous.components if name in spec.components}
    return {name: _held(spec.cluster, list(placements)) for name, placements in previous.items() if name in spec.components}


def _assigned(cluster: Cluster, solution: Solution, name: str) -> list[list[int]]:
    """:func:`_held` of the solution's records of ``name``, read from the assignment they are
    built from (a verified answer: each process's items on one node, of one type)."""
    assignment, old = solution.assignment(name), solution.cluster
    codes = np.array([cluster.kinds.index(kind) if kind in cluster.kinds else -1 for kind in old.kinds], dtype=np.int64)
    ids = item_ids(cluster, old.hw_node[assignment.hardware].astype(np.int64), codes[old.hw_kind[assignment.hardware]], old.hw_local[assignment.hardware].astype(np.int64))
    bounds = assignment.indptr.tolist()
    missing = np.add.reduceat(ids < 0, bounds[:-1]).tolist() if ids.size else [0] * (len(bounds) - 1)
    listed = ids.tolist()
    return [listed[lo:hi] for lo, hi, gone in zip(bounds[:-1], bounds[1:], missing, strict=True) if not gone]


def _held(cluster: Cluster, records: list[Placement]) -> list[list[int]]:
    """Per record whose every item exists on ``cluster``, the physical ids of its items."""
    locals_ = [p.local_hardware_ranks or [0] for p in records]
    nodes = list(map(attrgetter("cluster_node_rank"), records))
    flat = list(chain.from_iterable(locals_))
    if not set(map(type, nodes)) | set(map(type, flat)) <= {int}:
        return [found for p in records if (found := _one_by_one(cluster, p)) is not None]  # odd values: the cluster's own lookup words nothing, skips them
    codes = {kind: code for code, kind in enumerate(cluster.kinds)}
    sizes = np.fromiter(map(len, locals_), dtype=np.int64, count=len(records))
    kind = np.array([codes.get(p.hardware_type, -1) for p in records], dtype=np.int64)
    kind = np.repeat(kind, sizes)
    local = np.where(kind == codes.get(NODE, -1), 0, np.array(flat, dtype=np.int64))  # a node is its own item 0
    ids = item_ids(cluster, np.repeat(np.array(nodes, dtype=np.int64), sizes), kind, local)
    bounds = np.concatenate(([0], np.cumsum(sizes))).tolist()
    missing = np.add.reduceat(ids < 0, bounds[:-1]).tolist() if ids.size else [0] * len(records)
    listed = ids.tolist()
    return [listed[lo:hi] for lo, hi, gone in zip(bounds[:-1], bounds[1:], missing, strict=True) if not gone]


def _one_by_one(cluster: Cluster, p: Placement) -> list[int] | None:
    """One record's ids by the cluster's own index; None when an item does not exist."""
    try:
        return [cluster.physical_id(p.cluster_node_rank, p.hardware_type, local) for local in p.local_hardware_ranks or [0]]
    except PlacementConfigError:
        return None


def item_ids(cluster: Cluster, node: np.ndarray, kind: np.ndarray, local: np.ndarray) -> np.ndarray:
    """The physical id of each (node, kind code of ``cluster.kinds``, local index) on
    ``cluster``, -1 where it has no such item: one dense table of the cluster's own item tables
    (what :meth:`Cluster.physical_id` indexes)."""
    width = int(cluster.hw_local.max(initial=0)) + 1
    kinds = len(cluster.kinds)
    dense = np.full(cluster.num_nodes * kinds * width, -1, dtype=np.int64)
    dense[(cluster.hw_node.astype(np.int64) * kinds + cluster.hw_kind) * width + cluster.hw_local] = np.arange(cluster.num_hardware)
    inside = (node >= 0) & (node < cluster.num_nodes) & (kind >= 0) & (kind < kinds) & (local >= 0) & (local < width)
    return np.where(inside, dense[np.where(inside, (node * kinds + kind) * width + local, 0)], -1)
