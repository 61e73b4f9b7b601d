"""The cluster as frozen, typed values: what a ``cluster:`` section (or ``Cluster(...)``'s keyword
arguments) states, parsed once by ``schema``.

A :class:`ClusterLayout` holds what the config *states* (a node without GPUs keeps its stated
accelerator type, a group keeps whether it named its resource), so that every derived cluster
(a node lost, one more node, other GPU counts or memory, a config over a live cluster) is these
values edited with ``dataclasses.replace`` and bound again, never a raw mapping read twice. What
follows from the values together (a group's resource type, a node's memory after its groups'
overrides) is decided when a :class:`~solver_placement._cluster.cluster.Cluster` is built.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, compress
from numbers import Integral
from typing import Any

import numpy as np

from solver_placement._cluster.ranks import RankRange
from solver_placement._cluster.topology import StatedTopology
from solver_placement._constants import ACCELERATOR


@dataclass(frozen=True)
class EnvConfig:
    """Software environment of some nodes of a group (used when launching workers)."""

    node_ranks: tuple[int, ...]
    env_vars: Mapping[str, str] = field(default_factory=dict)
    python_interpreter_path: str | None = None


@dataclass(frozen=True)
class HardwareItems:
    """A node group's custom hardware items (robots), one column per field, in config order.

    Columns, not an object per item: 65,536 nodes hold 655,360 robots, and an object and a
    mapping each were most of reading such a cluster. An item's config (its keys but
    ``node_rank``) is kept as its keys and values, and made a mapping only when asked for
    (:meth:`metadata`): alike configs share one tuple of keys.
    """

    node_ranks: tuple[int, ...] = ()
    keys: tuple[tuple[str, ...], ...] = ()
    values: tuple[tuple[Any, ...], ...] = ()

    def __len__(self) -> int:
        return len(self.node_ranks)

    def metadata(self, index: int) -> dict[str, Any]:
        """Item ``index``'s config without its ``node_rank``: a new mapping each call."""
        return dict(zip(self.keys[index], self.values[index]))

    def kept(self, keep: Sequence[bool]) -> HardwareItems:
        """The items ``keep`` marks, in order."""
        return HardwareItems(tuple(compress(self.node_ranks, keep)), tuple(compress(self.keys, keep)), tuple(compress(self.values, keep)))

    def moved(self, node: int) -> HardwareItems:
        """These items, every one on ``node``."""
        return HardwareItems((node,) * len(self), self.keys, self.values)

    def __add__(self, other: HardwareItems) -> HardwareItems:
        return HardwareItems(self.node_ranks + other.node_ranks, self.keys + other.keys, self.values + other.values)


class ItemMetadata(Mapping[int, Mapping[str, Any]]):
    """Each custom item's config (without ``node_rank``) by its physical id, made when looked up:
    the cluster's table of them (``Cluster.hw_metadata``) without a mapping per robot built."""

    def __init__(self, first_id: int, stated: Sequence[int] | np.ndarray, groups: Sequence[HardwareItems]) -> None:
        """``stated[i]``: the position, among the ``groups``' items in turn, of the item with id
        ``first_id + i``."""
        self._first_id, self._stated, self._groups = first_id, stated, groups
        self._starts = list(accumulate((len(items) for items in groups), initial=0))

    def __getitem__(self, physical_id: int) -> dict[str, Any]:
        index = physical_id - self._first_id if isinstance(physical_id, Integral) else -1
        if not 0 <= index < len(self._stated):
            raise KeyError(physical_id)
        stated = int(self._stated[index])
        group = bisect_right(self._starts, stated) - 1
        return self._groups[group].metadata(stated - self._starts[group])

    def __iter__(self) -> Iterator[int]:
        return iter(range(self._first_id, self._first_id + len(self._stated)))

    def __len__(self) -> int:
        return len(self._stated)


@dataclass(frozen=True)
class NodeGroup:
    """A labelled set of nodes and the kind of resource its ranks count.

    ``hardware_type`` is ``"Accelerator"``, a custom type name, or ``None`` when the group's
    resources are its nodes (no accelerators, ``ignore_hardware``, or the reserved ``node`` label).
    """

    label: str
    node_ranks: tuple[int, ...]
    hardware_type: str | None
    env_configs: tuple[EnvConfig, ...] = ()

    @property
    def resource_unit(self) -> str:
        """What one of the group's ranks counts, in the words messages use (``GPU``, ``node``,
        ``robot item``); :func:`~solver_placement._errors.counted` puts a count before it."""
        if self.hardware_type is None:
            return "node"
        return "GPU" if self.hardware_type == ACCELERATOR else f"{self.hardware_type} item"

    @property
    def resource_noun(self) -> str:
        """What the group's ranks count, plural (``GPUs``, ``nodes``)."""
        return f"{self.resource_unit}s"


@dataclass(frozen=True)
class GroupSpec:
    """One entry of ``cluster.node_groups`` as stated: the resource it counts is left to the
    cluster's GPU counts (:meth:`resource_type`), since a derived cluster may change them."""

    label: str
    node_ranks: tuple[int, ...]
    #: ``hardware.type`` and one item per ``hardware.configs`` entry, when the group declares hardware.
    custom_type: str | None = None
    items: HardwareItems = HardwareItems()
    #: ``hardware_type`` as stated (None: not stated).
    hardware_type: str | None = None
    ignore_hardware: bool = False
    env_configs: tuple[EnvConfig, ...] = ()
    gpu_memory_gb: float | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    #: ``node_ranks`` as stated, range by range (None: ``all``; empty: the ranks listed one by one),
    #: so a cluster of another node count checks them as their text would be checked.
    ranges: tuple[RankRange, ...] | None = ()
    #: Positions in ``env_configs`` of those stated for ``all`` the group's nodes.
    env_all: frozenset[int] = frozenset()

    def stated_ranges(self) -> tuple[RankRange, ...] | None:
        """:attr:`ranges`, a listed group's ranks as one range each."""
        return self.ranges if self.ranges is None or self.ranges else tuple(RankRange(rank, rank) for rank in self.node_ranks)

    def resource_type(self, gpus_per_node: Sequence[int]) -> str | None:
        """The kind of resource the group's ranks count on nodes with these GPU counts: its
        hardware, nodes when told to ignore hardware, the stated type, else GPUs when any of its
        nodes has one."""
        if self.custom_type is not None:
            return self.custom_type
        if self.ignore_hardware:
            return None
        if self.hardware_type is not None:
            return self.hardware_type
        return ACCELERATOR if any(gpus_per_node[n] for n in self.node_ranks) else None


@dataclass(frozen=True)
class ClusterLayout:
    """A whole ``cluster:`` section, one value per node where the config states one per node.

    ``shared`` names the keys stated once for every node (a scalar, one ``gpu_topology``
    mapping): a config laid over this cluster that states another node count spreads those to
    every node and refuses the per-node ones of the wrong length, as a section stating both would.
    """

    num_nodes: int
    gpus: tuple[int, ...]
    #: As stated; a node without GPUs shows ``NO_ACCELERATOR`` only once the cluster is built.
    accelerator_types: tuple[str, ...]
    accelerator_models: tuple[str | None, ...]
    groups: tuple[GroupSpec, ...]
    #: Cluster-level values, before the overrides of the node groups.
    gpu_memory_gb: tuple[float | None, ...]
    node_labels: tuple[Mapping[str, str], ...]
    #: None: not stated; else per node its entry (None where a node states none).
    gpu_topology: tuple[StatedTopology | None, ...] | None
    free_gpus_only: bool
    shared: frozenset[str] = frozenset()

    def node_properties(self) -> tuple[list[float | None], list[Mapping[str, str]]]:
        """Per node, its GPU memory (GB, None if unknown) and topology labels: the cluster-level
        values, then each group's over its nodes, in config order (a later group wins).

        A node's labels are the stated mapping itself, shared with this layout and with every
        node stating the same, unless a group adds to them (then a new one): read, never changed.
        A copy per node was 0.05 s of every cluster of 65,536 nodes, built twice a solve."""
        memory = list(self.gpu_memory_gb)
        labels = list(self.node_labels)
        for group in self.groups:
            if group.gpu_memory_gb is None and not group.labels:
                continue  # nothing over its nodes: a group of 65,536 nodes is not walked node by node
            for node in group.node_ranks:
                if group.gpu_memory_gb is not None:
                    memory[node] = group.gpu_memory_gb
                if group.labels:
                    labels[node] = {**labels[node], **group.labels}
        return memory, labels

