"""The cluster model: nodes, node groups, hardware types and the rank tables between them.

Every piece of hardware gets one *physical id* in a flat table (``hw_node``, ``hw_kind``,
``hw_local``): accelerators first (node by node), then custom hardware such as robots, then one
pseudo-item per node for node-only placement. Node groups map their *group ranks* (what a
placement string counts) to physical ids, so two groups that share a node share hardware, and
collocation, exclusivity and capacity are decided on physical ids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import chain
from typing import Any

import numpy as np

from solver_placement._cluster.derive import layout_with_extra_node, layout_without_nodes
from solver_placement._cluster.layout import ClusterLayout, HardwareItems, ItemMetadata, NodeGroup
from solver_placement._cluster.ray_nodes import DEFAULT_CONNECT_TIMEOUT_S, ray_cluster_kwargs
from solver_placement._cluster.schema import cluster_part, overlay_section, parse_layout, section_kwargs
from solver_placement._cluster.schema_groups import check_group_limits
from solver_placement._cluster.summary import describe_cluster
from solver_placement._cluster.topology import NodeTopology, bind_topology
from solver_placement._config import did_you_mean, load_config
from solver_placement._config_copy import collector_paused
from solver_placement._constants import ACCELERATOR, CLUSTER_LABEL, DEFAULT_ACCELERATOR_TYPE, NO_ACCELERATOR, NODE, NODE_LABEL
from solver_placement._errors import PlacementConfigError, counted
from solver_placement._limits import check
from solver_placement._limits.reading import check_reading


@dataclass(frozen=True)
class ResourceSet:
    """The resources selected by one or more node groups, indexed by placement rank.

    ``physical[r]`` is the physical hardware id of rank ``r``; ``group_of[r]`` indexes ``groups``.
    """

    groups: tuple[NodeGroup, ...]
    physical: np.ndarray
    group_of: np.ndarray

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(group.label for group in self.groups)

    @property
    def counts_nodes(self) -> bool:
        return any(group.hardware_type is None for group in self.groups)

    def __len__(self) -> int:
        return int(self.physical.size)

    def describe(self) -> str:
        parts = [f"{group.label!r} ({counted(self.group_size(i), group.resource_unit)})" for i, group in enumerate(self.groups)]
        return "node group " + " + ".join(parts)

    def group_size(self, index: int) -> int:
        return int(np.count_nonzero(self.group_of == index))


class Cluster:
    """Nodes with accelerators, optional custom hardware and labelled node groups.

    Build it from code (``Cluster(num_nodes=2, num_gpus_per_node=8)``) or from a config with
    :meth:`from_config`. ``node_groups`` takes the same dicts as the YAML ``cluster.node_groups``.
    """

    def __init__(
        self,
        num_nodes: int | None = None,
        num_gpus_per_node: int | Sequence[int] = 8,
        accelerator_type: str | Sequence[str] = DEFAULT_ACCELERATOR_TYPE,
        accelerator_model: str | Sequence[str | None] | None = None,
        node_groups: Sequence[Mapping[str, Any]] | None = None,
        gpu_memory_gb: float | Sequence[float | None] | None = None,
        node_labels: Sequence[Mapping[str, str]] | None = None,
        gpu_topology: Mapping[str, Any] | Sequence[Mapping[str, Any] | None] | None = None,
        *,
        free_gpus_only: bool = False,
        cluster_cfg: Any = None,
    ) -> None:
        if cluster_cfg is not None:  # RLinf's spelling: Cluster(cluster_cfg=cfg.cluster)
            if num_nodes is not None:
                raise PlacementConfigError("give either num_nodes/... or cluster_cfg, not both")
            stated = section_kwargs(cluster_part(load_config(cluster_cfg)))
        else:
            stated = {
                "num_nodes": num_nodes,
                "num_gpus_per_node": num_gpus_per_node,
                "accelerator_type": accelerator_type,
                "accelerator_model": accelerator_model,
                "node_groups": node_groups,
                "gpu_memory_gb": gpu_memory_gb,
                "node_labels": node_labels,
                "gpu_topology": gpu_topology,
                "free_gpus_only": free_gpus_only,
            }
        with collector_paused():
            layout = parse_layout(stated)
        self._bind(layout)

    @classmethod
    def from_layout(cls, layout: ClusterLayout) -> Cluster:
        """The cluster of typed values already read (a derived cluster's): checked against the
        limits as a config stating them is, never read from a mapping again."""
        cluster = cls.__new__(cls)
        cluster._bind(layout)
        return cluster

    def _bind(self, layout: ClusterLayout) -> None:
        """The tables every stage reads, from what ``layout`` states: what follows from its values
        together (a group's resource type, a node's memory after its groups) is decided here."""
        #: What the config states, typed: every derived cluster is built from an edited copy.
        self.layout = layout
        self.num_nodes = layout.num_nodes
        check("max_nodes", layout.num_nodes, "cluster.num_nodes", "the number of nodes")
        self.gpus_per_node = np.array(layout.gpus, dtype=np.int64)
        check_group_limits(layout.groups, self.gpus_per_node, layout.num_nodes)
        every = all(layout.gpus)  # every node has GPUs: the stated types and models stand (not a pass per node)
        self.accelerator_types: tuple[str, ...] = (
            layout.accelerator_types if every else tuple(t if g else NO_ACCELERATOR for t, g in zip(layout.accelerator_types, layout.gpus))
        )
        self.accelerator_models: tuple[str | None, ...] = (
            layout.accelerator_models if every else tuple(m if g else None for m, g in zip(layout.accelerator_models, layout.gpus))
        )
        self.gpu_memory_gb, self.node_labels = layout.node_properties()
        #: Per node, the NUMA node and EGL index of each GPU as the config states them (None: not stated).
        self.gpu_topology: tuple[NodeTopology | None, ...] = bind_topology(layout.gpu_topology, "gpu_topology" in layout.shared, layout.gpus)
        #: The GPU counts are the GPUs that were free when the cluster was read, beside other jobs
        #: (``from_ray(available=True)``): a GPU id is a position among its node's free GPUs, which
        #: the launch maps to the devices Ray reserves (``ray_launch.free_gpus``).
        self.free_gpus_only = layout.free_gpus_only
        check_reading("reading the cluster")  # under a call's limit: the table below is ~0.3 s of 16,384 nodes of robots
        self._build_hardware_table([(spec.custom_type, spec.items) for spec in layout.groups if spec.custom_type is not None and spec.items])
        self.node_groups: dict[str, NodeGroup] = {
            spec.label: NodeGroup(spec.label, spec.node_ranks, spec.resource_type(layout.gpus), spec.env_configs) for spec in layout.groups
        }
        all_nodes = tuple(range(self.num_nodes))
        self.node_groups[CLUSTER_LABEL] = NodeGroup(
            CLUSTER_LABEL, all_nodes, ACCELERATOR if self.gpus_per_node.any() else None
        )
        self.node_groups[NODE_LABEL] = NodeGroup(NODE_LABEL, all_nodes, None)
        self._resource_cache: dict[tuple[str | bool, ...], ResourceSet] = {}

    @classmethod
    def from_config(cls, config: Any) -> Cluster:
        """Build from a ``cluster:`` mapping, a config holding one, a DictConfig or a YAML path."""
        return cls(cluster_cfg=config)

    @classmethod
    def from_ray(
        cls,
        address: str | None = None,
        *,
        group_by_labels: Sequence[str] = (),
        connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
        available: bool = False,
    ) -> Cluster:
        """The cluster a running Ray cluster describes: its nodes, GPUs, GPU models, robots and labels.

        Attaches as a launch does (a Ray this process is connected to, ``address``, ``RAY_ADDRESS``,
        the last ``ray start``; a dead address fails within ``connect_timeout_s``) and stays
        connected. ``group_by_labels`` makes one node group per value of each node label key.
        ``available=True`` counts only the GPUs and items free now (Ray's available resources), so a
        job is placed beside the ones already running (``free_gpus_only``).
        The mapping is in :mod:`solver_placement._cluster.ray_nodes`; Ray (an optional extra) is
        imported only here, when called.
        """
        # The one upward import of _cluster/ (tests/test_architecture.py lists it): connecting follows
        # the launch's attach rules, which have one home in ray_launch, and runs only when called.
        from solver_placement._ray_launch.connect import live_nodes

        nodes = live_nodes(address, connect_timeout_s, available=available)
        return cls(**ray_cluster_kwargs(nodes, group_by_labels, available=available))

    def with_extra_node(self, like: int) -> Cluster:
        """This cluster plus one node shaped like node ``like`` (same GPUs, groups and hardware)."""
        return Cluster.from_layout(layout_with_extra_node(self.layout, like))

    def without_nodes(self, lost: Set[int], survivors: str | None = None) -> Cluster:
        """This cluster with the ``lost`` nodes emptied (no GPUs, no custom hardware) and removed
        from every node group, plus a group ``survivors`` of the remaining nodes (counting nodes)
        when it is named. Node ranks keep naming the same machines.

        Groups that counted GPUs say so explicitly (``hardware_type``): a group whose surviving
        nodes have no GPUs must offer no GPUs, not silently start counting nodes.
        """
        return Cluster.from_layout(layout_without_nodes(self.layout, lost, survivors))

    def with_gpus_per_node(self, gpus: Sequence[int]) -> Cluster:
        """This cluster with ``gpus[n]`` GPUs on node ``n`` (everything else as it is)."""
        return Cluster.from_layout(parse_layout({"num_gpus_per_node": list(gpus)}, self.layout))

    def with_gpu_memory_gb(self, memory: Sequence[float | None]) -> Cluster:
        """This cluster with ``memory[n]`` GB per GPU on node ``n`` (None: unknown)."""
        return Cluster.from_layout(parse_layout({"gpu_memory_gb": list(memory)}, self.layout))

    def under_section(self, section: Mapping[str, Any]) -> Cluster:
        """This cluster (read from a live Ray) with a config's ``cluster:`` section over it: every
        key the section states replaces this cluster's, and its node groups follow this cluster's
        (which name the live ranks). The section is checked as any ``cluster:`` section is."""
        return Cluster.from_layout(overlay_section(self.layout, section))

    def items_per_node(self, kind: str) -> np.ndarray:
        """How many items of hardware type ``kind`` each node has (zeros for a type it does not know)."""
        if kind not in self.kinds:
            return np.zeros(self.num_nodes, dtype=np.int64)
        return np.bincount(self.hw_node[self.hw_kind == self.kinds.index(kind)], minlength=self.num_nodes)

    def __repr__(self) -> str:
        """One short line: runs of like nodes and the stated groups (``_cluster/summary.py``)."""
        items = [(kind, self.items_per_node(kind)) for kind in self.kinds[1:-1]]
        groups = [group for label, group in self.node_groups.items() if label not in (CLUSTER_LABEL, NODE_LABEL)]
        return describe_cluster(self.layout.gpus, self.accelerator_models, self.accelerator_types, items, groups, self.free_gpus_only)

    # ----------------------------------------------------------------- hardware table
    def _build_hardware_table(self, custom: Sequence[tuple[str, HardwareItems]]) -> None:
        """The physical ids' table: ``custom`` holds each group's hardware type and items, in
        config order."""
        num_accelerators = int(self.gpus_per_node.sum())
        acc_node = np.repeat(np.arange(self.num_nodes, dtype=np.int64), self.gpus_per_node)
        acc_start = np.concatenate(([0], np.cumsum(self.gpus_per_node)[:-1]))
        acc_local = np.arange(num_accelerators, dtype=np.int64) - np.repeat(acc_start, self.gpus_per_node)
        custom_types = list(dict.fromkeys(kind for kind, _ in custom))
        self.kinds: tuple[str, ...] = (ACCELERATOR, *custom_types, NODE)
        # items by kind, node, then config order (a stable sort), numbered on each node from 0:
        # as arrays, since 65,536 nodes hold 655,360 robots
        kind_of = {kind: 1 + index for index, kind in enumerate(custom_types)}
        sizes = [len(items) for _, items in custom]
        stated_kind = np.repeat(np.array([kind_of[kind] for kind, _ in custom], dtype=np.int64), sizes)
        stated_node = np.fromiter(chain.from_iterable(items.node_ranks for _, items in custom), dtype=np.int64, count=sum(sizes))
        order = np.lexsort((stated_node, stated_kind))
        custom_node, custom_kind = stated_node[order], stated_kind[order]
        starts = np.flatnonzero(np.diff(custom_kind, prepend=-1) | np.diff(custom_node, prepend=-1))  # each (kind, node)'s first
        custom_local = np.arange(order.size, dtype=np.int64) - np.repeat(starts, np.diff(starts, append=order.size))
        self.hw_node = np.concatenate((acc_node, custom_node, np.arange(self.num_nodes, dtype=np.int64)))
        self.hw_kind = np.concatenate(
            (np.zeros(num_accelerators, dtype=np.int64), custom_kind, np.full(self.num_nodes, len(self.kinds) - 1))
        )
        self.hw_local = np.concatenate((acc_local, custom_local, np.zeros(self.num_nodes, dtype=np.int64)))
        self.hw_metadata: Mapping[int, Mapping[str, Any]] = ItemMetadata(num_accelerators, order, [items for _, items in custom])
        self._node_item_offset = num_accelerators + order.size

    @property
    def num_accelerators(self) -> int:
        return int(self.gpus_per_node.sum())

    @property
    def num_hardware(self) -> int:
        """Number of physical ids (accelerators + custom items + one per node)."""
        return int(self.hw_node.size)

    def physical_id(self, node: int, kind: str, local: int) -> int:
        """The physical id of item ``local`` of type ``kind`` on ``node`` (``kind`` "node": the node)."""
        key = (node, kind, local if kind != NODE else 0)
        if key not in self._physical_index:
            raise PlacementConfigError(f"node {node} has no {kind} {local}")
        return self._physical_index[key]

    @cached_property
    def _physical_index(self) -> dict[tuple[int, str, int], int]:
        return {
            (node, self.kinds[kind], local): hw
            for hw, (node, kind, local) in enumerate(zip(self.hw_node.tolist(), self.hw_kind.tolist(), self.hw_local.tolist()))
        }

    def kind_of(self, physical_id: int) -> str:
        return self.kinds[int(self.hw_kind[physical_id])]

    # ----------------------------------------------------------------- node groups
    def node_group(self, label: str) -> NodeGroup:
        try:
            return self.node_groups[label]
        except KeyError:
            raise PlacementConfigError(f"node group {label!r} not found{did_you_mean(label, self.node_groups, 'groups')}") from None

    def resources(self, labels: Sequence[str], count_nodes: bool = False) -> ResourceSet:
        """The resources of the given groups, ranked group after group in the listed order.

        ``count_nodes`` ranks the groups' nodes instead of their hardware.
        """
        key: tuple[str | bool, ...] = (*labels, count_nodes)
        if key not in self._resource_cache:
            groups = tuple(self.node_group(label) for label in labels)
            if count_nodes:
                groups = tuple(replace(group, hardware_type=None) for group in groups)
            per_group = [self._group_physical(group) for group in groups]
            self._resource_cache[key] = ResourceSet(
                groups=groups,
                physical=np.concatenate(per_group) if per_group else np.zeros(0, dtype=np.int64),
                group_of=np.repeat(np.arange(len(groups)), [ids.size for ids in per_group]),
            )
        return self._resource_cache[key]

    def _group_physical(self, group: NodeGroup) -> np.ndarray:
        nodes = np.array(group.node_ranks, dtype=np.int64)
        if group.hardware_type is None:
            return self._node_item_offset + nodes
        if group.hardware_type not in self.kinds:
            return np.zeros(0, dtype=np.int64)  # a type no node group declared items of
        kind = self.kinds.index(group.hardware_type)
        in_group = np.zeros(self.num_nodes, dtype=bool)
        in_group[nodes] = True
        return np.flatnonzero((self.hw_kind == kind) & in_group[self.hw_node])

    def describe(self) -> str:
        gpus = self.gpus_per_node
        shape = f"{counted(int(gpus[0]), 'GPU')} each" if (gpus == gpus[0]).all() else f"GPUs per node {gpus.tolist()}"
        custom = [kind for kind in self.kinds[1:-1]]
        extra = f", custom hardware: {', '.join(custom)}" if custom else ""
        return f"{counted(self.num_nodes, 'node')}, {shape}{extra}"

    @cached_property
    def node_accelerator_ids(self) -> tuple[tuple[str, ...], ...]:
        """Per node, the visible-device strings of all its accelerators ("0".."n-1"): one tuple per
        GPU count, shared by the nodes of that count (65,536 nodes: 0.1 s as one string at a time,
        0.02 s as a list copied per node)."""
        counts = self.gpus_per_node.tolist()
        ids = {count: tuple(str(i) for i in range(count)) for count in set(counts)}
        return tuple(map(ids.__getitem__, counts))
