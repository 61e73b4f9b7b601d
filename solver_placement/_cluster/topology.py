"""``cluster.gpu_topology``: per node, the NUMA node and EGL device of each GPU, and the CPUs of
each NUMA node.

Placement never reads it: a GPU is a GPU to the solver. It is what a process needs *around* its
GPUs once placed, and only for components that ask (``numa_bind``, ``egl_device``, see
``_specification/environment.py``): the CPU set and memory node local to its GPUs, and the EGL index of the
GPU it renders on. None of it can be derived from a GPU id. NUMA locality is a property of the
board (which socket's PCIe root a GPU hangs off), and EGL enumerates every device the driver
sees in driver order, while CUDA ids number only the GPUs a container was given (RLinf's PR #1458
saw CUDA devices 0-3 as EGL devices 2, 3, 0, 1). So the config states them, as read on the node
(``solver-placement gpu-topology`` prints a node's entry), and nothing is
guessed: a component that asks for a binding on a node that states none is refused by name.
Without ``egl_devices`` a GPU's EGL index is its CUDA id, RLinf's fallback when it cannot ask
the driver.

Every number is bounded by what the kernel (or EGL) can hold, before anything is built: NUMA
nodes below :data:`MAX_NUMA_NODES`, CPU ids below :data:`MAX_CPUS`, EGL indices below
:data:`MAX_EGL_DEVICES`; CPU lists are rank lists (``"0-31,64-95"``, Linux's ``cpulist``
format), so their text is bounded by the rank-string limits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from solver_placement._cluster.ranks import check_in_bounds, format_ranks, parse_range, rank_pieces
from solver_placement._config import check_keys, positive_int, require_mapping
from solver_placement._errors import PlacementConfigError, shown
from solver_placement._limits import check
from solver_placement._limits.numbers import decimal

#: Keys of one node's entry.
TOPOLOGY_KEYS = ("numa_nodes", "numa_cpus", "egl_devices")
#: NUMA node ids are below this (Linux's largest ``MAX_NUMNODES``, ``NODES_SHIFT=10``).
MAX_NUMA_NODES = 1024
#: CPU ids are below this (twice Linux's largest ``NR_CPUS``, 8192).
MAX_CPUS = 16384
#: EGL device indices are below this (a node enumerates its GPUs and a few software devices).
MAX_EGL_DEVICES = 256


@dataclass(frozen=True)
class NodeTopology:
    """What one node states: per GPU id its NUMA node and EGL index, per NUMA node its CPUs.

    Empty tuples (and mapping) mean "not stated"; ``numa_nodes`` and ``numa_cpus`` are stated
    together or not at all.
    """

    numa_nodes: tuple[int, ...] = ()
    numa_cpus: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    egl_devices: tuple[int, ...] = ()

    @property
    def states_numa(self) -> bool:
        return bool(self.numa_nodes)

    def numa_binding(self, gpus: Sequence[int]) -> tuple[str, str]:
        """The NUMA nodes of ``gpus`` and their CPUs, as Linux lists (``"0,1"``, ``"0-31,64-95"``)."""
        nodes = sorted({self.numa_nodes[gpu] for gpu in gpus})
        cpus = sorted({cpu for node in nodes for cpu in self.numa_cpus[node]})
        return ",".join(map(str, nodes)), format_ranks(cpus)

    def egl_device(self, gpu: int) -> int:
        """The EGL index that renders on CUDA device ``gpu`` (its id when none is stated)."""
        return self.egl_devices[gpu] if self.egl_devices else gpu


def parse_gpu_topology(value: Any, gpus_per_node: np.ndarray) -> tuple[NodeTopology | None, ...]:
    """Per node, its topology or None: from one mapping (every node with GPUs), or a list with
    one entry per node (``null`` where a node states none)."""
    num_nodes = int(gpus_per_node.size)
    if value is None:
        return (None,) * num_nodes
    if isinstance(value, Mapping):
        shared: dict[int, NodeTopology] = {}  # one object per GPU count: a large cluster shares it
        nodes: list[NodeTopology | None] = []
        for node, gpus in enumerate(gpus_per_node.tolist()):
            if gpus and gpus not in shared:
                shared[gpus] = _parse_node(value, gpus, f"cluster.gpu_topology (node {node}, {gpus} GPUs)")
            nodes.append(shared[gpus] if gpus else None)
        return tuple(nodes)
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise PlacementConfigError(f"cluster.gpu_topology must be a mapping or a list with one per node, not {shown(value)}")
    if len(value) != num_nodes:
        raise PlacementConfigError(f"cluster.gpu_topology lists {len(value)} entries but the cluster has {num_nodes} nodes")
    return tuple(
        None if entry is None else _parse_node(entry, int(gpus), f"cluster.gpu_topology[{node}]")
        for node, (entry, gpus) in enumerate(zip(value, gpus_per_node.tolist()))
    )


def _parse_node(raw: Any, gpus: int, where: str) -> NodeTopology:
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
    return NodeTopology(numa_nodes, numa_cpus, egl)


def _per_gpu(raw: Any, gpus: int, bound: int, where: str) -> tuple[int, ...]:
    """One integer below ``bound`` per GPU id of the node, or () when not given."""
    if raw is None:
        return ()
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise PlacementConfigError(f"{where} must be a list with one integer per GPU, not {shown(raw)}")
    if len(raw) != gpus:
        raise PlacementConfigError(f"{where} lists {len(raw)} values but the node has {gpus} GPUs (one per GPU id, in order)")
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
