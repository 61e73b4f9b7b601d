"""One component's records as numpy columns, so the checks accept a large placement in a few
array passes instead of one Python loop per record and rule.

Read only for records whose every item exists and whose fields have their declared types: a
component read this way is one every check can test by arrays. Any other component is left to
the record-by-record reading (``placed.py``), which names what is wrong; so are the records a
fast test does not accept, whose checks then run record by record and word the violations.
Nothing here decides a violation by itself: a column test only ever says "all of these hold".

Records the library has not made yet (:class:`PlacementRecords` of an answer, made on first read)
are read from the arrays they will be made from, where every field follows from those
(``RecordColumns.plain``): an answer is verified without making one object per process, and
the records handed out later are made from the arrays accepted here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter

import numpy as np

from solver_placement._cluster.cluster import Cluster
from solver_placement._constants import NODE
from solver_placement._records import Placement, PlacementRecords, RecordColumns


@dataclass(frozen=True)
class Columns:
    """Per record (rank order): its node and hardware-type code (``Cluster.kinds``), and its
    items as CSR: record ``i`` holds physical ids ``ids[indptr[i]:indptr[i + 1]]``, whose local
    indices (``local_hardware_ranks``; ``[0]`` for a node-only process) are ``local``."""

    node: np.ndarray
    kind: np.ndarray
    indptr: np.ndarray
    local: np.ndarray
    ids: np.ndarray

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.indptr)

    @property
    def row(self) -> np.ndarray:
        """The record each item belongs to."""
        return np.repeat(np.arange(self.node.size), self.lengths)

    def held(self) -> list[list[int]]:
        """Per record, the physical ids it holds (``Placed.held``'s form)."""
        ids = self.ids.tolist()
        if np.all(self.lengths == 1):  # one item each, the common case: no slicing
            return [[hw] for hw in ids]
        return [ids[start:end] for start, end in zip(self.indptr[:-1].tolist(), self.indptr[1:].tolist(), strict=True)]

    def sorted_rows(self) -> np.ndarray:
        """The ids sorted within each record (records keep their order)."""
        if not self.ids.size or int(self.lengths.max()) == 1:
            return self.ids
        return self.ids[np.lexsort((self.ids, self.row))]


#: The item lookup of ``ItemIndex`` is one dense table over (node, kind, local index) while
#: that has at most this many cells per item (nodes of very different sizes make it sparse);
#: past it, a sort of the items and a binary search.
DENSE_CELLS_PER_ITEM = 4


def unmade(records: Sequence[Placement]) -> RecordColumns | None:
    """The arrays of records not made yet, when every field the checks read follows from them
    (``RecordColumns.plain``); None for records to read one by one."""
    if isinstance(records, PlacementRecords) and not records.is_made and records.columns.plain:
        return records.columns
    return None


#: The integer fields of records not made yet, as the arrays ``_records._build`` makes them from.
_UNMADE_FIELDS = {
    "rank": lambda columns: np.arange(columns.size, dtype=np.int64),
    "cluster_node_rank": lambda columns: columns.nodes,
    "placement_node_rank": lambda columns: columns.placement_node_rank,
    "local_accelerator_rank": lambda columns: columns.first_gpu,
    "local_rank": lambda columns: columns.positions[0],
    "local_world_size": lambda columns: columns.positions[1],
}


def int_column(records: Sequence[Placement], field: str) -> np.ndarray | None:
    """One integer field of every record; None when some record's value is not an int."""
    arrays = unmade(records)
    if arrays is not None:
        return np.asarray(_UNMADE_FIELDS[field](arrays), dtype=np.int64)
    values = list(map(attrgetter(field), records))
    if not set(map(type, values)) <= {int}:
        return None
    return np.array(values, dtype=np.int64)


def read_columns(cluster: Cluster, index: ItemIndex, records: Sequence[Placement]) -> Columns | None:
    """The records' columns (items looked up in ``index``, the cluster's), or None when some item
    does not exist or some field is not of its declared type (the record-by-record reading then
    says which)."""
    arrays = unmade(records)
    if arrays is not None:
        return _unmade_columns(cluster, index, arrays)
    node = int_column(records, "cluster_node_rank")
    codes = {name: code for code, name in enumerate(cluster.kinds)}
    kind = np.array([codes.get(record.hardware_type, -1) for record in records], dtype=np.int64)
    lists = [record.local_hardware_ranks if record.hardware_type != NODE else [0] for record in records]
    if node is None or not set(map(type, lists)) <= {list}:
        return None
    flat = list(chain.from_iterable(lists))
    if not set(map(type, flat)) <= {int}:
        return None
    lengths = np.array([len(ranks) for ranks in lists], dtype=np.int64)
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    local = np.array(flat, dtype=np.int64)
    ids = index.ids(np.repeat(node, lengths), np.repeat(kind, lengths), local)
    if ids is None:
        return None
    return Columns(node, kind, indptr, local, ids)


def _unmade_columns(cluster: Cluster, index: ItemIndex, arrays: RecordColumns) -> Columns | None:
    """:func:`read_columns` of records not made yet, from their arrays: each record's items are
    its local indices of its kind on its node; a node-only process's record names none, read as
    ``[0]`` (None unless its one item is its node, local index 0, as the records will say)."""
    node, kind = np.asarray(arrays.nodes, dtype=np.int64), np.asarray(arrays.kinds, dtype=np.int64)
    indptr, local = np.asarray(arrays.indptr, dtype=np.int64), np.asarray(arrays.local, dtype=np.int64)
    lengths = np.diff(indptr)
    node_only = kind == cluster.kinds.index(NODE)
    if node_only.any() and (np.any(lengths[node_only] != 1) or np.any(local[indptr[:-1][node_only]] != 0)):
        return None
    ids = index.ids(np.repeat(node, lengths), np.repeat(kind, lengths), local)
    return None if ids is None else Columns(node, kind, indptr, local, ids)


class ItemIndex:
    """The physical id of every (node, kind, local index) triple, from the cluster's own tables
    (``hw_node``, ``hw_kind``, ``hw_local``, what :meth:`Cluster.physical_id` indexes), built once
    per verification and shared by its components (three components on 65,536 nodes built it
    three times: 0.07 s of a 0.36 s verification)."""

    def __init__(self, cluster: Cluster) -> None:
        self.num_nodes = cluster.num_nodes
        self.kinds = len(cluster.kinds)
        self.width = int(cluster.hw_local.max()) + 1 if cluster.hw_local.size else 1
        table = (cluster.hw_node.astype(np.int64) * self.kinds + cluster.hw_kind) * self.width + cluster.hw_local
        cells = self.num_nodes * self.kinds * self.width
        self.dense: np.ndarray | None = None
        if cells <= DENSE_CELLS_PER_ITEM * cluster.num_hardware:  # one cell per (node, kind, local): a gather, no sort
            self.dense = np.full(cells, -1, dtype=np.int64)
            self.dense[table] = np.arange(cluster.num_hardware)
        else:
            self.order = np.argsort(table, kind="stable")
            self.sorted_table = table[self.order]

    def ids(self, node: np.ndarray, kind: np.ndarray, local: np.ndarray) -> np.ndarray | None:
        """The items' physical ids; None when some triple names an item the cluster does not have."""
        if not node.size:
            return np.zeros(0, dtype=np.int64)
        if node.min() < 0 or node.max() >= self.num_nodes or kind.min() < 0 or kind.max() >= self.kinds or local.min() < 0 or local.max() >= self.width:
            return None
        keys = (node * self.kinds + kind) * self.width + local
        if self.dense is not None:
            ids = self.dense[keys]
            return None if (ids < 0).any() else ids
        found = np.minimum(np.searchsorted(self.sorted_table, keys), self.order.size - 1)
        if not np.array_equal(self.sorted_table[found], keys):
            return None
        return self.order[found].astype(np.int64)
