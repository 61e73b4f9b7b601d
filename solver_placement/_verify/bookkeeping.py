"""The record fields no config key states: ranks, per-node positions, device fields, metadata.

RLinf derives them from where the processes landed; they are recomputed here from scratch
(from the records' own nodes and items) so a record that contradicts its neighbours is caught.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain, compress
from operator import attrgetter

import numpy as np

from solver_placement._cluster.cluster import Cluster
from solver_placement._constants import ACCELERATOR, NODE
from solver_placement._records import Placement, RecordColumns
from solver_placement._verify.columns import Columns, int_column, unmade
from solver_placement._verify.placed import Placed


def check_bookkeeping(placed: Placed) -> Iterator[str]:
    """Every component has records, each names items that exist, once each, and the derived
    fields (rank order, local rank, node order, visible devices, accelerator) are RLinf's."""
    for name, records in placed.records.items():
        if not records:
            yield f"{name}: no placements"
            continue
        if name in placed.columns and _accepted(records, placed.columns[name], placed.cluster):
            continue  # every rule below holds, tested by arrays
        yield from placed.unknown[name]
        yield from _held_items(name, records, placed.held[name])
        if [record.rank for record in records] != list(range(len(records))):
            yield f"{name}: ranks are not 0..{len(records) - 1} in order"
        yield from _node_positions(name, records)
        for record, ids in zip(records, placed.held[name], strict=True):
            if 0 <= record.cluster_node_rank < placed.cluster.num_nodes:  # else reported as unknown items
                yield from _device_fields(f"{name} rank {record.rank}", record, placed.cluster)
                yield from _hardware_metadata(f"{name} rank {record.rank}", record, ids, placed.cluster)


def _held_items(name: str, records: Sequence[Placement], held: Sequence[list[int]]) -> Iterator[str]:
    for record, ids in zip(records, held, strict=True):
        if not ids:
            yield f"{name} rank {record.rank}: holds no hardware"
        if len(set(ids)) != len(ids):
            yield f"{name} rank {record.rank}: holds an item twice {record.local_hardware_ranks}"


def _node_positions(name: str, records: Sequence[Placement]) -> Iterator[str]:
    """``local_rank``/``local_world_size`` count the component's processes per node (rank
    order); ``placement_node_rank`` numbers the nodes by first appearance."""
    per_node: dict[int, list[Placement]] = {}
    for record in records:
        per_node.setdefault(record.cluster_node_rank, []).append(record)
    for node_position, group in enumerate(per_node.values()):
        for position, record in enumerate(group):
            where = f"{name} rank {record.rank}"
            if (record.local_rank, record.local_world_size) != (position, len(group)):
                yield f"{where}: local_rank/local_world_size {record.local_rank}/{record.local_world_size}, expected {position}/{len(group)}"
            if record.placement_node_rank != node_position:
                yield f"{where}: placement_node_rank {record.placement_node_rank}, expected {node_position}"


def _device_fields(where: str, record: Placement, cluster: Cluster) -> Iterator[str]:
    """What CUDA_VISIBLE_DEVICES and the accelerator fields must say for this record's node (what
    a process holding no GPU sees depends on ``hide_accelerators``: the environment check)."""
    node = record.cluster_node_rank
    own_gpus = record.hardware_type == ACCELERATOR
    isolated = own_gpus and record.isolate_accelerator
    expected_visible = [str(g) for g in record.local_hardware_ranks] if isolated else list(cluster.node_accelerator_ids[node])
    if own_gpus and record.visible_accelerators != expected_visible:
        yield f"{where}: visible_accelerators {record.visible_accelerators}, expected {expected_visible}"
    expected_first = record.local_hardware_ranks[0] if own_gpus and record.local_hardware_ranks else -1
    if record.local_accelerator_rank != expected_first:
        yield f"{where}: local_accelerator_rank {record.local_accelerator_rank}, expected {expected_first}"
    if record.accelerator_type != cluster.accelerator_types[node]:
        yield f"{where}: accelerator_type {record.accelerator_type!r} differs from node {node}'s"


def _hardware_metadata(where: str, record: Placement, ids: Sequence[int], cluster: Cluster) -> Iterator[str]:
    """A robot's ``hardware_metadata`` is its items' ``hardware.configs`` entries (what the
    launch hands the worker as HARDWARE_CONFIGS), looked up by the items the record names;
    GPUs and node-only processes carry none."""
    if len(ids) != len(record.local_hardware_ranks if record.hardware_type != NODE else [0]):
        return  # some item does not exist: reported as unknown, nothing to compare with
    custom = record.hardware_type not in (ACCELERATOR, NODE)
    expected = [dict(cluster.hw_metadata.get(hw, {})) for hw in ids] if custom else []
    actual = record.hardware_metadata
    if not isinstance(actual, tuple | list) or list(actual) != expected:
        yield f"{where}: hardware_metadata {actual!r}, expected the items' hardware.configs {expected}"


def _accepted(records: Sequence[Placement], columns: Columns, cluster: Cluster) -> bool:
    """Whether every rule :func:`check_bookkeeping` tests holds, tested by arrays; False also
    when a record is of a kind the arrays do not cover (another process's GPUs visible, a custom
    item's metadata), whose records the loop then tests one by one."""
    count = len(records)
    lengths = columns.lengths
    items = columns.sorted_rows()
    if not lengths.all() or np.any((items[1:] == items[:-1]) & (columns.row[1:] == columns.row[:-1])):
        return False  # a record holds nothing, or an item twice
    ranks = int_column(records, "rank")
    if ranks is None or not np.array_equal(ranks, np.arange(count)) or not _positions_hold(records, columns.node):
        return False
    arrays = unmade(records)
    if arrays is not None:
        return _plain_holds(columns, arrays, int_column(records, "local_accelerator_rank"), cluster)
    own = columns.kind == cluster.kinds.index(ACCELERATOR)
    mine = list(compress(records, own.tolist()))
    if not np.all(own | (columns.kind == cluster.kinds.index(NODE))) or not set(map(attrgetter("isolate_accelerator"), mine)) <= {True}:
        return False  # custom items (their metadata) or shared visibility: one by one
    visible = list(map(attrgetter("visible_accelerators"), mine))
    if not set(map(type, visible)) <= {list} or list(map(len, visible)) != lengths[own].tolist():
        return False
    if list(chain.from_iterable(visible)) != list(map(str, columns.local[np.repeat(own, lengths)].tolist())):
        return False
    first = int_column(records, "local_accelerator_rank")
    if first is None or not np.array_equal(first, np.where(own, columns.local[columns.indptr[:-1]], -1)):
        return False
    types = cluster.accelerator_types
    metadata = list(map(attrgetter("hardware_metadata"), records))
    return (
        list(map(attrgetter("accelerator_type"), records)) == [types[node] for node in columns.node.tolist()]
        and set(map(type, metadata)) <= {tuple, list}
        and not any(metadata)
    )


def _plain_holds(columns: Columns, arrays: RecordColumns, first: np.ndarray | None, cluster: Cluster) -> bool:
    """The device fields of records not made yet whose arrays are ``plain`` (``unmade``): a GPU
    process will see its own GPUs (``visible_accelerators`` made from its items), every record's
    ``accelerator_type`` comes from its node, so what is left to test is ``local_accelerator_rank``
    (its first GPU, -1 without), that the records will be made by the kinds read here (which
    processes hold GPUs), and that a robot's ``hardware_metadata`` will be made from the very items
    its record names (the configs of ``arrays.hardware``, the ids looked up here from its node,
    kind and local indices). GPUs and node-only processes carry no metadata."""
    own = columns.kind == cluster.kinds.index(ACCELERATOR)
    if first is None or not np.array_equal(first, np.where(own, columns.local[columns.indptr[:-1]], -1)):
        return False
    if not np.array_equal(np.asarray(arrays.holds_gpus, dtype=bool), own):
        return False
    custom = np.repeat(~own & (columns.kind != cluster.kinds.index(NODE)), columns.lengths)
    return np.array_equal(np.asarray(arrays.hardware, dtype=np.int64)[custom], columns.ids[custom])


def _positions_hold(records: Sequence[Placement], node: np.ndarray) -> bool:
    """Whether ``local_rank``, ``local_world_size`` and ``placement_node_rank`` are what
    :func:`_node_positions` expects, computed by arrays: per node in order of first appearance."""
    _, first, inverse, counts = np.unique(node, return_index=True, return_inverse=True, return_counts=True)
    node_position = np.empty_like(first)
    node_position[np.argsort(first)] = np.arange(first.size)
    order = np.argsort(inverse, kind="stable")
    within = np.empty(node.size, dtype=np.int64)
    within[order] = np.arange(node.size) - np.repeat(np.cumsum(counts) - counts, counts)
    expected = {"local_rank": within, "local_world_size": counts[inverse], "placement_node_rank": node_position[inverse]}
    for field, values in expected.items():
        column = int_column(records, field)
        if column is None or not np.array_equal(column, values):
            return False
    return True
