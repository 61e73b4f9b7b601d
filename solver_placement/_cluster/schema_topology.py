"""Reading ``cluster.gpu_topology`` (the values are in ``topology``): the one place its raw
entries are read, checked and bounded before anything is built from them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from solver_placement._cluster.ranks import check_in_bounds, parse_range, rank_pieces
from solver_placement._cluster.topology import (
    MAX_CPUS,
    MAX_EGL_DEVICES,
    MAX_NUMA_NODES,
    TOPOLOGY_KEYS,
    NodeTopology,
    StatedTopology,
    bind_topology,
    per_gpu_length_message,
    topology_where,
)
from solver_placement._config import check_keys, positive_int, require_mapping
from solver_placement._errors import PlacementConfigError, shown
from solver_placement._limits import check
from solver_placement._limits.numbers import decimal


def parse_gpu_topology(value: Any, gpus_per_node: Sequence[int]) -> tuple[tuple[StatedTopology | None, ...] | None, bool]:
    """Per node, its stated entry or None, and whether one mapping states it for every node.

    One mapping describes every node with GPUs: it is read at the first of them and then checked
    against each node's GPU count; a list has one entry per node (``null`` where a node states
    none), each read with its node's count. None: the config states no topology.
    """
    num_nodes = len(gpus_per_node)
    if value is None:
        return None, False
    if isinstance(value, Mapping):
        first = next((node for node, gpus in enumerate(gpus_per_node) if gpus), None)
        if first is None:  # it describes no GPU, so nothing of it is read
            return (None,) * num_nodes, True
        entries = (_parse_node(value, gpus_per_node[first], topology_where(first, gpus_per_node[first], True)),) * num_nodes
        bind_topology(entries, True, gpus_per_node)
        return entries, True
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise PlacementConfigError(f"cluster.gpu_topology must be a mapping or a list with one per node, not {shown(value)}")
    _check_length(len(value), num_nodes)
    return tuple(
        None if entry is None else _parse_node(entry, gpus, topology_where(node, gpus, False))
        for node, (entry, gpus) in enumerate(zip(value, gpus_per_node))
    ), False


def restated_topology(
    entries: tuple[StatedTopology | None, ...] | None, shared: bool, gpus_per_node: Sequence[int]
) -> tuple[tuple[StatedTopology | None, ...] | None, bool]:
    """A cluster's stated entries under a section that leaves ``gpu_topology`` as it is but may
    state other node or GPU counts: checked as the same entries stated in that section would be."""
    if entries is None:
        return None, False
    if shared:
        entries = (entries[0],) * len(gpus_per_node)
    else:
        _check_length(len(entries), len(gpus_per_node))
    bind_topology(entries, shared, gpus_per_node)
    return entries, shared


def _check_length(listed: int, num_nodes: int) -> None:
    """A ``gpu_topology`` list has one entry per node."""
    if listed != num_nodes:
        raise PlacementConfigError(f"cluster.gpu_topology lists {listed} entries but the cluster has {num_nodes} nodes")


def _parse_node(raw: Any, gpus: int, where: str) -> StatedTopology:
    """One node's entry, read with the node's GPU count."""
    entry = require_mapping(raw, where)
    check_keys(entry, TOPOLOGY_KEYS, where)
    if ("numa_nodes" in entry) != ("numa_cpus" in entry):
        given, missing = ("numa_nodes", "numa_cpus") if "numa_nodes" in entry else ("numa_cpus", "numa_nodes")
        raise PlacementConfigError(f"{where}: {given} needs {missing} (a binding names both the CPUs and the memory node)")
    numa_nodes = _per_gpu(entry.get("numa_nodes"), gpus, MAX_NUMA_NODES, f"{where}: numa_nodes")
    numa_cpus = _cpus(entry.get("numa_cpus"), f"{where}: numa_cpus")
    unlisted = sorted(set(numa_nodes) - set(numa_cpus))
    if unlisted:
        raise PlacementConfigError(f"{where}: numa_cpus does not list the CPUs of NUMA node {unlisted[0]}, which numa_nodes names")
    egl = _per_gpu(entry.get("egl_devices"), gpus, MAX_EGL_DEVICES, f"{where}: egl_devices")
    if len(set(egl)) != len(egl):
        twice = next(index for index in egl if egl.count(index) > 1)
        raise PlacementConfigError(f"{where}: egl_devices names EGL device {twice} for two GPUs; each GPU renders on its own device")
    return StatedTopology(NodeTopology(numa_nodes, numa_cpus, egl), entry.get("numa_nodes") is not None, entry.get("egl_devices") is not None)


def _per_gpu(raw: Any, gpus: int, bound: int, where: str) -> tuple[int, ...]:
    """One integer below ``bound`` per GPU id of the node, or () when not given."""
    if raw is None:
        return ()
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise PlacementConfigError(f"{where} must be a list with one integer per GPU, not {shown(raw)}")
    if len(raw) != gpus:
        raise PlacementConfigError(per_gpu_length_message(where, len(raw), gpus))
    values = tuple(positive_int(item, f"{where}[{gpu}]", allow_zero=True, maximum=bound - 1) for gpu, item in enumerate(raw))
    return values


def _cpus(raw: Any, where: str) -> dict[int, tuple[int, ...]]:
    """``{numa node: cpu list}``; a CPU belongs to one NUMA node."""
    if raw is None:
        return {}
    listed = require_mapping(raw, where)
    cpus: dict[int, tuple[int, ...]] = {}
    owner = np.full(MAX_CPUS, -1, dtype=np.int64)
    keys: dict[int, str] = {}  # NUMA node -> the key that named it ("0" and "00" name one node)
    for key, value in listed.items():
        node = decimal(key, MAX_NUMA_NODES - 1)
        if node is None:
            raise PlacementConfigError(f"{where}: key {shown(key)} is not a NUMA node id (0-{MAX_NUMA_NODES - 1})")
        if node in keys:
            raise PlacementConfigError(f"{where}: keys {shown(keys[node])} and {shown(key)} both name NUMA node {node}; keep one of them")
        keys[node] = key
        mask = _cpu_mask(value, f"{where}.{node}")
        clash = np.flatnonzero(mask & (owner >= 0))
        if clash.size:
            raise PlacementConfigError(
                f"{where}: CPU {int(clash[0])} is listed for NUMA nodes {int(owner[clash[0]])} and {node}; a CPU belongs to one"
            )
        owner[mask] = node
        cpus[node] = tuple(np.flatnonzero(mask).tolist())
    return cpus


def _cpu_mask(value: Any, where: str) -> np.ndarray:
    """The CPUs of a Linux CPU list (``"0-31,64-95"``, an int, or a list of either) as a mask of
    :data:`MAX_CPUS` flags: each range is one slice assignment, so overlapping or repeated
    ranges cost nothing however wide they are."""
    pieces = [value] if isinstance(value, (str, int)) and not isinstance(value, bool) else value
    if not isinstance(pieces, Sequence) or isinstance(pieces, str) or not pieces:
        raise PlacementConfigError(f"{where} must be a CPU list such as \"0-31,64-95\", an int or a list of them, not {shown(value)}")
    check("max_rank_pieces", len(pieces), where, "the number of CPU list entries")
    mask = np.zeros(MAX_CPUS, dtype=bool)
    for piece in pieces:
        if isinstance(piece, bool) or not isinstance(piece, (str, int)):
            raise PlacementConfigError(f"{where}: {shown(piece)} is not a CPU id or range")
        if isinstance(piece, int) and not 0 <= piece < MAX_CPUS:
            raise PlacementConfigError(f"{where}: CPU {shown(piece)} is out of range; CPU ids are 0-{MAX_CPUS - 1}")
        for text in rank_pieces(piece, "CPU list", where) if isinstance(piece, str) else [str(piece)]:
            cpus = parse_range(text, "CPU list", where)
            check_in_bounds(cpus, MAX_CPUS, "CPU list", where)
            mask[cpus.first : cpus.last + 1] = True
    if not mask.any():
        raise PlacementConfigError(f"{where} lists no CPUs")
    return mask
