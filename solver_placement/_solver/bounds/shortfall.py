"""A declarative component too large for its own window, by counting alone.

The first question about a declarative component needs no other component: do the items it may
use (its node groups, narrowed by ``resources``) hold its processes at all, and does some node
hold one process's span of ranks? When not, that component's shape is the whole conflict, and
the arithmetic is said in the user's terms ("needs 5 processes x 4 GPUs = 20 GPUs, but node
group 'cluster' (16 GPUs) offers 16"). Resolving a spec only lays out the candidates; this is
where a spec too big for its cluster is caught, before any other bound or model.
"""

from __future__ import annotations

import numpy as np

from solver_placement._arrays import distinct
from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import Statement, counted
from solver_placement._specification.candidates import ComponentRequest, component_noun
from solver_placement._specification.placement_spec import PlacementSpec

#: The rule whose keys (the component's size within its group) a shortfall rests on.
RULE = "per_process"


def shortfall(spec: PlacementSpec) -> Statement | None:
    """The first declarative component (config order) its window cannot hold, as one statement."""
    for request in spec.requests.values():
        if not request.determined and (statement := _short(request, spec.cluster)) is not None:
            return statement
    return None


def _short(request: ComponentRequest, cluster: Cluster) -> Statement | None:
    """Too few distinct items for every process's share, or no node as wide as one process's
    span of ranks (``hardware_per_process`` items ``stride`` apart)."""
    processes, per_process, stride = request.num_processes, int(request.amount[0]), request.stride or 1
    # a free window is one shared row (overlapping groups may list an item twice, as the ranks
    # do); a filled window's rows are blocks of it, each item once
    window = request.cand_hw[: int(request.indptr[1])] if request.shared_window else request.window_items
    resources, noun = request.resources, component_noun(request.resources)
    keys = ("processes", *(["hardware_per_process"] if per_process > 1 else []), *(["stride"] if stride > 1 else []), "node_group")
    needed = processes * per_process // request.max_share
    offered = distinct(window).size
    if needed > offered:
        text = (
            f"{request.name}: needs {counted(processes, 'process', 'processes')} x {counted(per_process, noun)} = {counted(needed, noun)}, "
            f"but {resources.describe()} offers {offered}"
        )
        return Statement(text, request.name, keys, RULE)
    span = (per_process - 1) * stride + 1
    widest = int(np.bincount(cluster.hw_node[window], minlength=cluster.num_nodes).max())
    if span > widest:
        shape = f"{counted(per_process, noun)} per process" + (f" with stride {stride}" if stride > 1 else "")
        text = f"{request.name}: needs {shape} on one node (a span of {span}), but the largest node in {resources.describe()} has {widest}"
        return Statement(text, request.name, keys, RULE)
    return None
