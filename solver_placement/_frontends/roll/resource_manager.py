"""Where ROLL's ``ResourceManager`` gets its placement groups: one per node rank, and the node Ray gives each.

ROLL reserves ``num_nodes`` placement groups of one bundle each, ``{"GPU": num_gpus_per_node,
"CPU": max(node_cpu / 2, 1)}``, with Ray's default strategy and no node named
(``roll/distributed/scheduler/resource_manager.py`` lines 43-48 at 8eb27cc2, the same at
v0.1.0). Before that it asserts that enough nodes have ``num_gpus_per_node`` GPUs (line 34) and
that the cluster has ``num_nodes x num_gpus_per_node`` GPUs free (line 41). The group of node rank
``i`` is the ``i``-th created: ROLL asks each group's node for ``NODE_RANK`` and, when that is 0
everywhere (the variable unset, as on a plain ``ray start`` cluster), numbers the groups in
creation order (lines 62-66); a single group is node rank 0.

Ray's GCS schedules the groups in order, each on the feasible node scoring highest by its
``LeastResourceScorer``, the sum over the asked resources of ``(free - asked) / free``; ties go
to the lowest node rank (one of the answers Ray may give). The cluster model has no CPU counts,
so nodes are taken to have CPUs alike: a group then asks half of a node's CPUs, so a node holds
at most two groups, and an untouched node scores 0.5 more on CPUs than one holding a group. A
second group therefore lands beside the first only on a node with many more GPUs than the
others (a 32-GPU node against 4-GPU ones) -- and there both node ranks are told GPUs
``0..num_gpus_per_node-1`` (alibaba/ROLL#78, #205, #326). A group's GPUs are the node's lowest free ones.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

from solver_placement._errors import PlacementConfigError, agreeing, counted
from solver_placement._limits import check

#: Placement groups one node holds when each asks half of its CPUs.
GROUPS_PER_NODE = 2


@dataclass(frozen=True)
class LandedGroup:
    """The placement group of one ROLL node rank: the cluster node it is on (None: no node can
    hold it, Ray leaves it pending) and the first of the GPUs it reserves there."""

    node_rank: int
    node: int | None
    first_gpu: int = 0


def land_groups(gpus_per_node: Sequence[int], size: int, count: int) -> list[LandedGroup]:
    """The ``count`` groups of ``size`` GPUs, in creation (node rank) order, where Ray puts them.

    A node scores ``(free - size) / free`` on GPUs plus 0.5 on CPUs while it holds no group, 0
    with one, and cannot take a third; so the best node is the best of two heaps, untouched nodes
    by free GPUs and nodes holding one group by their score, ties to the lowest node rank."""
    check("max_nodes", count, "ROLL's node ranks", "the placement groups ROLL creates")
    free = [int(gpus) for gpus in gpus_per_node]
    untouched: list[tuple[float, int]] = [(-float(gpus), node) for node, gpus in enumerate(free) if gpus >= size]
    heapq.heapify(untouched)
    holding_one: list[tuple[float, int]] = []
    landed = []
    for rank in range(count):
        options = []
        if untouched:
            options.append((_score(free[untouched[0][1]], size, 0), -untouched[0][1], untouched))
        if holding_one:
            options.append((-holding_one[0][0], -holding_one[0][1], holding_one))
        if not options:
            landed.append(LandedGroup(rank, None))
            continue
        _, negative_node, heap = max(options, key=lambda option: (option[0], option[1]))
        heapq.heappop(heap)
        node = -negative_node
        landed.append(LandedGroup(rank, node, int(gpus_per_node[node]) - free[node]))
        free[node] -= size
        if heap is untouched and free[node] >= size:
            heapq.heappush(holding_one, (-_score(free[node], size, 1), node))
    return landed


def _score(free: int, size: int, held: int) -> float:
    """Ray's ``LeastResourceScorer`` for a group on a node with ``free`` GPUs and ``held`` groups."""
    gpu = (free - size) / free if free else 0.0
    cpu = (1 - (held + 1) / GROUPS_PER_NODE) / (1 - held / GROUPS_PER_NODE)
    return gpu + cpu


def check_resources(gpus_per_node: Sequence[int], size: int, count: int) -> None:
    """ROLL's own assertions before it reserves anything, with its words and a fix."""
    able = sum(1 for gpus in gpus_per_node if gpus >= size)
    if count > able:
        raise PlacementConfigError(
            f"ROLL stops at start (ResourceManager): The Ray clusters(ray_num_nodes: {able}) cannot meet the required number of nodes "
            f"(`num_nodes`{count}): {count} node ranks of {size} GPUs are needed by the highest device number, and {counted(able, 'node')} {agreeing(able, 'has', 'have')} "
            f"{size} GPUs; lower the device numbers of the device_mapping keys, or add nodes"
        )
    total = sum(int(gpus) for gpus in gpus_per_node)
    if count * size > total:
        raise PlacementConfigError(
            f"ROLL stops at start (ResourceManager): num_gpus {count * size} > available_gpu {total}; lower the device numbers of the device_mapping keys"
        )
