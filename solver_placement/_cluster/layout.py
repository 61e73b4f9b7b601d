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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

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
class HardwareItem:
    """One non-accelerator hardware item (e.g. a robot) declared in a node group's config."""

    type: str
    node_rank: int
    metadata: Mapping[str, Any] = field(default_factory=dict)


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
    items: tuple[HardwareItem, ...] = ()
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

    def node_properties(self) -> tuple[list[float | None], list[dict[str, str]]]:
        """Per node, its GPU memory (GB, None if unknown) and topology labels: the cluster-level
        values, then each group's over its nodes, in config order (a later group wins)."""
        memory = list(self.gpu_memory_gb)
        labels = list(map(dict, self.node_labels))  # a new mapping per node (a group may add to it), at C speed
        for group in self.groups:
            if group.gpu_memory_gb is None and not group.labels:
                continue  # nothing over its nodes: a group of 65,536 nodes is not walked node by node
            for node in group.node_ranks:
                if group.gpu_memory_gb is not None:
                    memory[node] = group.gpu_memory_gb
                labels[node].update(group.labels)
        return memory, labels

