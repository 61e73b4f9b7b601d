"""Placement records with RLinf's field names and meaning, built from an assignment.

Differences from RLinf (all deliberate, listed in the README): a process never spills into the
next node; ``local_accelerator_rank`` is always an int, the process's own first GPU (also when
``isolate_accelerator=False``), and -1 for processes that hold no GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solver_placement.cluster.cluster import Cluster, ResourceSet
from solver_placement.constants import ACCELERATOR, NODE


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
    ``hardware_ranks`` (ranks within the component's node groups), ``accelerator_model``.
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


def build_placements(
    component: str,
    indptr: np.ndarray,
    hardware: np.ndarray,
    ranks: np.ndarray,
    resources: ResourceSet,
    cluster: Cluster,
    isolate_accelerator: bool = True,
) -> list[Placement]:
    """Turn a CSR assignment (physical ids per process, rank order) into placement records."""
    # Vectorised per-field arrays first, then one loop that builds the records: kept together so
    # the hot path (100,000 GPUs) reads top to bottom.
    num_processes = indptr.size - 1
    if num_processes == 0:
        return []
    first = indptr[:-1]
    first_hw = hardware[first]
    nodes = cluster.hw_node[first_hw]
    kinds = cluster.hw_kind[first_hw]
    local_rank, local_world = _local_positions(nodes)
    node_order = _first_appearance_index(nodes)
    labels = [resources.groups[g].label for g in resources.group_of[ranks[first]].tolist()]
    local_all = cluster.hw_local[hardware].tolist()
    rank_all = ranks.tolist()
    bounds = indptr.tolist()
    accelerator_kind = cluster.kinds.index(ACCELERATOR)
    placements = []
    for p in range(num_processes):
        node = int(nodes[p])
        kind_name = cluster.kinds[int(kinds[p])]
        own = local_all[bounds[p]:bounds[p + 1]]
        holds_gpus = int(kinds[p]) == accelerator_kind
        visible = [str(g) for g in own] if (holds_gpus and isolate_accelerator) else cluster.node_accelerator_ids[node]
        placements.append(
            Placement(
                rank=p,
                cluster_node_rank=node,
                placement_node_rank=int(node_order[p]),
                local_accelerator_rank=own[0] if holds_gpus else -1,
                accelerator_type=cluster.accelerator_types[node],
                local_rank=int(local_rank[p]),
                local_world_size=int(local_world[p]),
                visible_accelerators=list(visible),
                isolate_accelerator=isolate_accelerator,
                local_hardware_ranks=[] if kind_name == NODE else own,
                node_group_label=labels[p],
                component=component,
                hardware_type=kind_name,
                hardware_ranks=rank_all[bounds[p]:bounds[p + 1]],
                accelerator_model=cluster.accelerator_models[node],
            )
        )
    return placements


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
