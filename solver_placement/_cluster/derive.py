"""Clusters derived from a cluster's typed values: nodes lost, one more node, GPUs alone.

Why a module: ``_replan`` and ``_diagnose`` ask what a job would do on a cluster that differs
from the stated one in one respect. Each derivation here edits a
:class:`~solver_placement._cluster.layout.ClusterLayout` with ``dataclasses.replace`` (the source
is never changed) and leaves every check to the building of the new cluster, which applies the
same limits as a config stating it. Derivations that take new raw values (GPU counts, memory, a
config section) read them with ``schema.parse_layout`` over the source instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import replace

from solver_placement._cluster.layout import ClusterLayout, GroupSpec
from solver_placement._cluster.ranks import rank_runs
from solver_placement._cluster.schema_groups import admit_group, parse_label
from solver_placement._constants import ACCELERATOR, DEFAULT_ACCELERATOR_TYPE, NO_ACCELERATOR


def layout_with_extra_node(layout: ClusterLayout, like: int) -> ClusterLayout:
    """``layout`` plus one node shaped like node ``like``: its GPUs, memory, labels and topology,
    a member of each group ``like`` is in, with a copy of each hardware item ``like`` holds.

    The new cluster states each node as it is: per-node memory and labels as its groups left
    them, a node without GPUs as the default accelerator type with no model (a value stated once
    for every node stays so).
    """
    new = layout.num_nodes
    merged_memory, merged_labels = layout.node_properties()
    memory = layout.gpu_memory_gb if "gpu_memory_gb" in layout.shared else tuple(merged_memory)
    labels: tuple[Mapping[str, str], ...] = layout.node_labels if "node_labels" in layout.shared else tuple(merged_labels)
    types = tuple(stated if gpus else DEFAULT_ACCELERATOR_TYPE for stated, gpus in zip(layout.accelerator_types, layout.gpus))
    models = tuple(stated if gpus else None for stated, gpus in zip(layout.accelerator_models, layout.gpus))
    topology = None if layout.gpu_topology is None else (*layout.gpu_topology, layout.gpu_topology[like])
    return replace(
        layout,
        num_nodes=new + 1,
        gpus=(*layout.gpus, layout.gpus[like]),
        accelerator_types=(*types, layout.accelerator_types[like] if layout.gpus[like] else NO_ACCELERATOR),
        accelerator_models=(*models, models[like]),
        groups=tuple(_grown(group, like, new) for group in layout.groups),
        gpu_memory_gb=(*memory, memory[like]),
        node_labels=(*labels, labels[like]),
        gpu_topology=topology,
        shared=layout.shared - {"num_gpus_per_node", "accelerator_type", "accelerator_model"},
    )


def gpus_layout(node_labels: Sequence[Mapping[str, str]], gpus: Sequence[int], groups: Mapping[str, Sequence[int]]) -> ClusterLayout:
    """A cluster of GPUs alone on the same nodes: ``gpus`` per node, the nodes' ``node_labels``
    as they stand (each group's already merged in), and GPU groups of the given labels and
    nodes (ascending); the default accelerator type, no model, memory or topology. What
    ``Cluster(len(gpus), gpus, node_labels=..., node_groups=[{"label", "node_ranks", "hardware_type": "Accelerator"}])``
    states, without reading it node by node again (the count model's views of items of other
    kinds, ``counts/kinds.py``: 0.1 s a view on 65,536 nodes, a parse and a bind more)."""
    nodes = len(gpus)
    return ClusterLayout(
        nodes, tuple(gpus), (DEFAULT_ACCELERATOR_TYPE,) * nodes, (None,) * nodes,
        tuple(GroupSpec(label, tuple(ranks), hardware_type=ACCELERATOR, ranges=rank_runs(ranks)) for label, ranks in groups.items()),
        (None,) * nodes, tuple(node_labels), None, False, frozenset({"accelerator_type", "accelerator_model", "gpu_memory_gb"}),
    )  # fmt: skip


def _grown(group: GroupSpec, like: int, new: int) -> GroupSpec:
    """The group with node ``new`` beside ``like`` (and copies of ``like``'s items), if it holds
    ``like``; its ranks are then listed, and an env config for ``all`` its nodes covers ``new``."""
    if like not in group.node_ranks:
        return group
    copies = group.items.kept([node == like for node in group.items.node_ranks]).moved(new)
    nodes = tuple(sorted({*group.node_ranks, new}))
    envs = tuple(replace(env, node_ranks=nodes) if position in group.env_all else env for position, env in enumerate(group.env_configs))
    return replace(group, node_ranks=nodes, items=group.items + copies, env_configs=envs, ranges=())


def layout_without_nodes(layout: ClusterLayout, lost: Set[int], survivors: str | None) -> ClusterLayout:
    """``layout`` with the ``lost`` nodes emptied (no GPUs, no topology, no custom hardware) and
    removed from every group; a group left without nodes is gone. ``survivors`` names a group of
    the remaining nodes that counts nodes, checked as a group the config states.

    A group that counted GPUs states it (``hardware_type``): if its surviving nodes have none it
    must offer no GPUs, not silently start counting nodes.
    """
    groups: list[GroupSpec] = []
    declared_by: dict[str, dict[int, str]] = {}
    for group in layout.groups:
        survived = _surviving(group, lost, layout.gpus)
        if survived is not None:
            admit_group(survived, groups, declared_by)
    remaining = tuple(node for node in range(layout.num_nodes) if node not in lost)
    if survivors is not None and remaining:
        admit_group(GroupSpec(parse_label(survivors, len(groups)), remaining, ignore_hardware=True), groups, declared_by)
    topology = layout.gpu_topology
    if topology is not None and "gpu_topology" not in layout.shared:  # a lost node keeps no GPUs to describe
        topology = tuple(None if node in lost else entry for node, entry in enumerate(topology))
    return replace(
        layout,
        gpus=tuple(0 if node in lost else count for node, count in enumerate(layout.gpus)),
        groups=tuple(groups),
        gpu_topology=topology,
        shared=layout.shared - {"num_gpus_per_node"},
    )


def _surviving(group: GroupSpec, lost: Set[int], gpus: tuple[int, ...]) -> GroupSpec | None:
    """The group without the ``lost`` nodes; None when every node was lost (components naming
    the group are then refused by name)."""
    nodes = tuple(node for node in group.node_ranks if node not in lost)
    if not nodes:
        return None
    envs = tuple(
        replace(env, node_ranks=kept) for env in group.env_configs if (kept := tuple(node for node in env.node_ranks if node not in lost))
    )
    pinned = ACCELERATOR if group.custom_type is None and group.resource_type(gpus) == ACCELERATOR else group.hardware_type
    items = group.items.kept([node not in lost for node in group.items.node_ranks])
    return replace(group, node_ranks=nodes, items=items, hardware_type=pinned, env_configs=envs, ranges=(), env_all=frozenset())
