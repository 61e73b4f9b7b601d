"""Windows over part of a node: a class kept off the GPUs its window leaves out.

A free component whose ``resources`` window (or node group) holds only k of a node's GPUs may
use exactly those k there. To the count model that is the same as a rank-string component it
must avoid on the rest: the node's room for the class is k, and the per-node construction keeps
the class off the other GPUs (``layout.py``'s ``keep_off``). So a partial window joins the GPUs
a class is *blocked* from (``problem.py``); where classes that compete for a node's GPUs are
kept off different ones, the node's patterns are checked by GPU type (``typed.py``).

A process of several GPUs takes ranks ``h, h + stride, ...`` of its window; the construction
gives it consecutive GPU ids, so where a window holds part of a node its ranks must follow the
GPU ids there (``0-3`` of a node does, ``3,0-2`` does not), else the count model declines.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from solver_placement._cluster.cluster import Cluster
from solver_placement._constants import ACCELERATOR
from solver_placement._solver.rules.stride import enforced_stride
from solver_placement._specification.candidates import ComponentRequest


def partial_nodes(cluster: Cluster, held: np.ndarray) -> np.ndarray:
    """Per node, whether a window that holds ``held`` GPUs there (``problem.window_per_node``)
    holds some but not all of them."""
    return (held > 0) & (held < cluster.gpus_per_node)


def outside_window(cluster: Cluster, request: ComponentRequest, partial: np.ndarray) -> np.ndarray:
    """The GPUs (physical ids, ascending) of the nodes the free request's window holds in part
    (``partial``: :func:`partial_nodes`) that it leaves out."""
    if not partial.any():
        return np.zeros(0, dtype=np.int64)
    gpus = np.flatnonzero(cluster.hw_kind == cluster.kinds.index(ACCELERATOR))
    inside = np.zeros(cluster.num_hardware, dtype=bool)
    inside[request.cand_hw] = True
    return gpus[partial[cluster.hw_node[gpus]] & ~inside[gpus]].astype(np.int64)


def strides_off_ids(cluster: Cluster, members: Mapping[str, ComponentRequest], partial: np.ndarray) -> str:
    """'' when every strided member's window ranks follow GPU ids on the nodes the root's window
    holds in part (``partial``: :func:`partial_nodes`; consecutive ids, consecutive ranks), else
    the first member whose do not."""
    if not partial.any():
        return ""
    for name, request in members.items():
        if enforced_stride(request) is None:
            continue
        rank_of = np.full(cluster.num_hardware, -1, dtype=np.int64)
        rank_of[request.cand_hw[::-1]] = request.cand_rank[::-1]  # an item listed twice: its first rank
        items = request.window_items
        items = items[partial[cluster.hw_node[items]]]
        neighbours = (items[1:] == items[:-1] + 1) & (cluster.hw_node[items[1:]] == cluster.hw_node[items[:-1]])
        if (rank_of[items[1:]][neighbours] - rank_of[items[:-1]][neighbours] != 1).any():
            return f"{name}: a resources window over part of a node whose ranks do not follow the GPU ids there (a stride needs them to)"
    return ""
