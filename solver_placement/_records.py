"""Placement records with RLinf's field names and meaning, built from an assignment.

Differences from RLinf (all deliberate, listed in docs/rlinf.md): a process never spills into the
next node; ``local_accelerator_rank`` is always an int, the process's own first GPU (also when
``isolate_accelerator=False``), and -1 for processes that hold no GPU.

``visible_accelerators`` has RLinf's meaning, and the launch sets the device variable from it
and nothing else: a process's own GPUs when isolated, else every GPU of its node, so a process
holding no GPU (node-level, robot) sees its node's GPUs, as RLinf's node and packed strategies
give them, unless its component sets ``hide_accelerators``. ``env`` holds the variables a
component's environment keys add (``_specification/environment.py``), which the launch sets as they are.

Records are built column by column: every field of every process is computed with numpy from
the assignment arrays first, then turned into Python values in bulk (``tolist``, list slices,
lookups in per-node tables), and the objects are made last, in one ``map`` over the columns.
At 100,000 GPUs the objects themselves are most of the cost, as they are for any code that
hands out one Python object per process, so two things keep them cheap:

* a frozen dataclass's ``__init__`` stores every field through ``object.__setattr__``, five
  times slower than plain slot stores. Records are therefore made as an unfrozen twin with the
  same slots in the same order and then switched to :class:`Placement` (``__class__``
  assignment, which CPython allows between such layouts): each is then exactly a Placement,
  frozen and equal to one built by its constructor (``tests/internals/test_records.py`` checks);
* the cyclic garbage collector is paused meanwhile: every few hundred new lists and records
  would start a collection over them although none can be garbage yet.

The records are made when first asked for, not when an answer is found: a
:class:`PlacementRecords` holds a component's :class:`RecordColumns` (the numpy arrays every
field is made from) and makes the objects on first use. The independent verifier reads those
arrays as they are where every record's device fields follow from them alone (isolated GPU
processes, robots, node-only processes; no environment keys: ``RecordColumns.plain``), so an answer is verified without
making 400,000 objects (about 2 s on 65,536 nodes, and a garbage collection of several
hundred ms once the collector resumed over them), and the records handed out later are made
from the very arrays it accepted.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, make_dataclass
from functools import cached_property
from itertools import repeat
from typing import Any, overload

import numpy as np

from solver_placement._cluster.cluster import Cluster, ResourceSet
from solver_placement._constants import ACCELERATOR, NODE
from solver_placement._specification.environment import DEFAULT_ENVIRONMENT, EGL_VARIABLES, NUMA_VARIABLES, ProcessEnvironment

#: The configs of a process's custom hardware items (robots), one mapping per item.
HardwareMetadata = tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one process of one component runs.

    RLinf fields: ``rank`` (process rank in the component), ``cluster_node_rank`` (node in the
    cluster), ``placement_node_rank`` (index of that node among the component's nodes, in rank
    order), ``local_accelerator_rank`` (first own GPU on the node, -1 if none),
    ``accelerator_type``, ``local_rank`` / ``local_world_size`` (position and count of the
    component's processes on that node), ``visible_accelerators`` (what CUDA_VISIBLE_DEVICES
    should hold), ``isolate_accelerator``, ``local_hardware_ranks`` (the process's items on its
    node: GPU ids, robot indices, or [] for node-only processes), ``node_group_label``.
    Extras: ``component``, ``hardware_type`` ("Accelerator", a custom type, or "node"),
    ``hardware_ranks`` (ranks within the component's node groups), ``accelerator_model``, and
    ``hardware_metadata``: per item of ``local_hardware_ranks`` of a custom hardware type (a
    robot), that item's entry of the node group's ``hardware.configs`` without ``node_rank``
    (e.g. ``robot_ip``, camera serials); empty for GPUs and node-only processes. ``env``: the
    environment variables the component's ``egl_device`` / ``numa_bind`` keys give the process
    (``MUJOCO_EGL_DEVICE_ID``, ``EGL_DEVICE_ID``, ``NUMA_NODES``, ``NUMA_CPUS``); empty without them.
    """

    rank: int
    cluster_node_rank: int
    placement_node_rank: int
    local_accelerator_rank: int
    accelerator_type: str
    local_rank: int
    local_world_size: int
    visible_accelerators: list[str]
    isolate_accelerator: bool
    local_hardware_ranks: list[int]
    node_group_label: str
    component: str
    hardware_type: str
    hardware_ranks: list[int]
    accelerator_model: str | None
    hardware_metadata: HardwareMetadata = ()
    env: dict[str, str] = field(default_factory=dict)


#: Field names in declaration order: the order of the columns ``placement_records`` maps over.
FIELD_ORDER = tuple(f.name for f in fields(Placement))
#: Placement's twin, not frozen: the same slots in the same order, so a record made as one can
#: become a Placement (see the module docstring).
UnfrozenPlacement: type[Any] = make_dataclass("UnfrozenPlacement", [(f.name, f.type) for f in fields(Placement)], slots=True)


def placement_records(
    component: str,
    indptr: np.ndarray,
    hardware: np.ndarray,
    ranks: np.ndarray,
    resources: ResourceSet,
    cluster: Cluster,
    isolate_accelerator: bool = True,
    environment: ProcessEnvironment = DEFAULT_ENVIRONMENT,
) -> PlacementRecords:
    """The records of a CSR assignment (physical ids per process, rank order), made on first use;
    ``environment``: the component's environment keys (``visible_accelerators`` and ``env``)."""
    return PlacementRecords(component, RecordColumns(indptr, hardware, ranks, resources, cluster, isolate_accelerator, environment))


class PlacementRecords(Sequence[Placement]):
    """One component's records in rank order, made from :attr:`columns` the first time one is
    read and kept: every later read gets the same objects. Until then the verifier reads the
    columns themselves (see the module docstring)."""

    def __init__(self, component: str, columns: RecordColumns) -> None:
        self.component = component
        self.columns = columns
        self._made: list[Placement] | None = None

    def __len__(self) -> int:
        return self.columns.size

    @overload
    def __getitem__(self, index: int) -> Placement: ...

    @overload
    def __getitem__(self, index: slice) -> list[Placement]: ...

    def __getitem__(self, index: int | slice) -> Placement | list[Placement]:
        return self.made()[index]

    def __iter__(self) -> Iterator[Placement]:
        return iter(self.made())

    def __eq__(self, other: object) -> bool:
        """Equal to any sequence of the same records in the same order (a list of them too)."""
        return isinstance(other, Sequence) and self.made() == list(other)

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which do not hash either

    @property
    def is_made(self) -> bool:
        """Whether the records exist yet (the verifier reads made records as they are)."""
        return self._made is not None

    def made(self) -> list[Placement]:
        """The records, made now if they were not yet."""
        if self._made is None:
            if not self.columns.size:
                self._made = []
            else:
                with collector_paused():
                    self._made = _build(self.component, self.columns)
        return self._made


def _build(component: str, columns: RecordColumns) -> list[Placement]:
    """Every column as a Python sequence, then one record per process in one pass."""
    cluster, environment = columns.cluster, columns.environment
    visible = columns.visible_accelerators(environment.hide_accelerators)
    local_rank, local_world = columns.positions
    values: dict[str, Any] = {
        "rank": range(columns.size),
        "cluster_node_rank": columns.nodes.tolist(),
        "placement_node_rank": columns.placement_node_rank.tolist(),
        "local_accelerator_rank": columns.first_gpu.tolist(),
        "accelerator_type": columns.per_node(cluster.accelerator_types),
        "local_rank": local_rank.tolist(),
        "local_world_size": local_world.tolist(),
        "visible_accelerators": visible,
        "isolate_accelerator": repeat(columns.isolate),
        "local_hardware_ranks": columns.local_hardware_ranks(),
        "node_group_label": columns.group_labels(),
        "component": repeat(component),
        "hardware_type": _lookup(columns.kinds, cluster.kinds),
        "hardware_ranks": columns.split(columns.ranks.tolist()),
        "accelerator_model": columns.per_node(cluster.accelerator_models),
        "hardware_metadata": columns.hardware_metadata(),
        "env": columns.env(environment, visible),
    }
    records = list(map(UnfrozenPlacement, *(values[name] for name in FIELD_ORDER)))
    for record in records:
        record.__class__ = Placement
    return records


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (if it runs) while records are made (see the module doc)
    or read back by the verifier: both make an object or a list per process, and collections
    meanwhile walk every live object."""
    running = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if running:
            gc.enable()


class RecordColumns:
    """The per-process arrays every field of a component's records is computed from, read once
    from the assignment; the records are made from them, and the verifier reads them as they are.

    A process's node, hardware type and group label are those of its first item (the model
    keeps every process on one node and one hardware type).
    """

    def __init__(
        self,
        indptr: np.ndarray,
        hardware: np.ndarray,
        ranks: np.ndarray,
        resources: ResourceSet,
        cluster: Cluster,
        isolate: bool,
        environment: ProcessEnvironment,
    ) -> None:
        self.cluster, self.resources, self.isolate, self.environment = cluster, resources, isolate, environment
        self.indptr, self.hardware, self.ranks = indptr, hardware, ranks
        self.size = int(indptr.size - 1)
        self.first = indptr[:-1]
        self.bounds = indptr.tolist()
        self.one_item_each = bool((np.diff(indptr) == 1).all())
        first_hw = hardware[self.first]
        self.nodes = cluster.hw_node[first_hw]
        self.kinds = cluster.hw_kind[first_hw]
        self.local = cluster.hw_local[hardware]
        self.holds_gpus = self.kinds == cluster.kinds.index(ACCELERATOR)

    @property
    def plain(self) -> bool:
        """Whether every record's device fields follow from these arrays alone: a process holding
        GPUs sees only its own (``visible_accelerators`` its ``local_hardware_ranks`` as text), one
        holding a robot or a node sees its node's GPUs or none (``hide_accelerators``), a robot's
        ``hardware_metadata`` is its items' configs, and no ``egl_device`` / ``numa_bind`` (an
        empty ``env``). What the verifier may read without the records."""
        return (self.isolate or not self.holds_gpus.any()) and not (self.environment.egl_device or self.environment.numa_bind)

    @cached_property
    def placement_node_rank(self) -> np.ndarray:
        """Per process, the index of its node among the component's nodes by first appearance."""
        return _first_appearance_index(self.nodes)

    @cached_property
    def positions(self) -> tuple[np.ndarray, np.ndarray]:
        """Per process, ``local_rank`` and ``local_world_size``: its index among the component's
        processes on its node, and how many there are."""
        return _local_positions(self.nodes)

    @cached_property
    def first_gpu(self) -> np.ndarray:
        """Per process, ``local_accelerator_rank``: its first item's local index, -1 without GPUs."""
        return np.where(self.holds_gpus, self.local[self.first], -1)

    def split(self, flat: list[Any]) -> list[list[Any]]:
        """``flat`` (one value per item) cut into one fresh list per process."""
        if self.one_item_each:  # the common shape at scale, and the fastest to cut
            return [[value] for value in flat]
        return [flat[lo:hi] for lo, hi in zip(self.bounds[:-1], self.bounds[1:])]

    def per_node(self, table: Sequence[Any]) -> list[Any]:
        """A per-node value (accelerator type or model) for every process."""
        return _lookup(self.nodes, table)

    def local_hardware_ranks(self) -> list[list[int]]:
        """Each process's items on its node ([] for node-only processes)."""
        own = self.split(self.local.tolist())
        for p in np.flatnonzero(self.kinds == self.cluster.kinds.index(NODE)).tolist():
            own[p] = []
        return own

    def visible_accelerators(self, hide: bool) -> list[list[str]]:
        """Own GPUs for isolated GPU processes, else every GPU of the node (a fresh list each);
        none for processes holding no GPU when ``hide`` (``hide_accelerators``)."""
        if self.isolate and self.holds_gpus.all():
            names = _lookup(self.local, [str(i) for i in range(int(self.local.max()) + 1)])
            return self.split(names)
        node_ids = self.cluster.node_accelerator_ids
        visible = list(map(list, map(node_ids.__getitem__, self.nodes.tolist())))
        if self.isolate:
            for p in np.flatnonzero(self.holds_gpus).tolist():
                visible[p] = [str(g) for g in self.local[self.bounds[p]:self.bounds[p + 1]].tolist()]
        if hide:
            for p in np.flatnonzero(~self.holds_gpus).tolist():
                visible[p] = []
        return visible

    def env(self, environment: ProcessEnvironment, visible: Sequence[Sequence[str]]) -> list[dict[str, str]]:
        """Per process, the variables of the component's ``egl_device`` / ``numa_bind`` keys (a
        fresh dict each, empty without them): the EGL index of the GPU it renders on (its own
        first GPU, else the first it sees) and the NUMA nodes and CPUs of its own GPUs, from the
        node's ``gpu_topology`` (the spec refused these keys where the topology cannot answer)."""
        if not (environment.egl_device or environment.numa_bind):
            return [{} for _ in range(self.size)]
        rows: list[dict[str, str]] = []
        for p, node in enumerate(self.nodes.tolist()):
            topology = self.cluster.gpu_topology[node]
            own = self.local[self.bounds[p]:self.bounds[p + 1]].tolist() if self.holds_gpus[p] else []
            row: dict[str, str] = {}
            renders_on = own[0] if own else (int(visible[p][0]) if visible[p] else None)
            if environment.egl_device and renders_on is not None:
                index = str(topology.egl_device(renders_on) if topology is not None else renders_on)
                row.update(dict.fromkeys(EGL_VARIABLES, index))
            if environment.numa_bind and own and topology is not None:
                row.update(zip(NUMA_VARIABLES, topology.numa_binding(own)))
            rows.append(row)
        return rows

    def group_labels(self) -> list[str]:
        labels = [group.label for group in self.resources.groups]
        return _lookup(self.resources.group_of[self.ranks[self.first]], labels)

    def hardware_metadata(self) -> Any:
        """Per process, a copy of each custom item's config; nothing to copy on clusters without
        hardware configs (the common case at scale), where every record shares the empty tuple."""
        metadata = self.cluster.hw_metadata
        custom = ~self.holds_gpus & (self.kinds != self.cluster.kinds.index(NODE))
        if not metadata or not custom.any():
            return repeat(())
        rows: list[HardwareMetadata] = [()] * self.size
        for p in np.flatnonzero(custom).tolist():
            items = self.hardware[self.bounds[p]:self.bounds[p + 1]].tolist()
            rows[p] = tuple(dict(metadata.get(hw, {})) for hw in items)
        return rows


def _lookup(indices: np.ndarray, table: Sequence[Any]) -> list[Any]:
    """``[table[i] for i in indices]`` as one numpy gather (table values are shared, not copied)."""
    as_objects = np.empty(len(table), dtype=object)
    as_objects[:] = list(table)
    return as_objects[indices].tolist()


def _local_positions(nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per process: its index among the processes on its node, and how many there are."""
    order = np.argsort(nodes, kind="stable")
    sorted_nodes = nodes[order]
    starts = np.flatnonzero(np.r_[True, sorted_nodes[1:] != sorted_nodes[:-1]])
    counts = np.diff(np.r_[starts, sorted_nodes.size])
    block = np.repeat(np.arange(starts.size), counts)
    local = np.empty_like(nodes)
    local[order] = np.arange(nodes.size) - starts[block]
    world = np.empty_like(nodes)
    world[order] = counts[block]
    return local, world


def _first_appearance_index(nodes: np.ndarray) -> np.ndarray:
    """Per process: index of its node among distinct nodes ordered by first appearance."""
    unique, first_index, inverse = np.unique(nodes, return_index=True, return_inverse=True)
    rank_of_unique = np.empty(unique.size, dtype=np.int64)
    rank_of_unique[np.argsort(first_index, kind="stable")] = np.arange(unique.size)
    return rank_of_unique[inverse]
