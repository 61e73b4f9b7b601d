"""Where verl's resource pools land: the node Ray gives each of their placement groups.

verl makes one placement group per entry of a pool's ``process_on_nodes`` (``STRICT_PACK``: all
its bundles, one per GPU, on one node; ``RayResourcePool.get_placement_groups`` in
``verl/single_controller/ray/base.py``, 0.4.1 and 0.9.1) when its driver first needs the pool,
pools in the order the driver creates them. Ray's GCS schedules pending groups in that order and
puts each on the feasible node scoring highest, the sum over the asked resources of
``(free - asked) / free`` (its ``LeastResourceScorer``): the node left freest. So an earlier pool
takes the emptiest nodes and a later one what is left; a solver free to choose could hand a
separate reward pool node 1 and the trainer nodes 0 and 2, which verl does not do.

The score counts CPUs too: each bundle asks ``{"CPU": max_colocate_count, "GPU": 1}``. The cluster
model has no CPU counts, so nodes are taken to have CPUs alike and many (as GPU nodes do, tens to
hundreds against a few per GPU); then the GPU term decides, and where it ties (as many GPUs free)
the CPU term goes to the node with the fewest CPUs reserved. That is what Ray 2.60 did on a local
cluster, six times of six: nodes of 8 and 4 GPUs with 64 CPUs each, two groups of 4 GPUs asking 3
CPUs per bundle, the first on the 8-GPU node, the second on the 4-GPU node, both then 4 GPUs free
but the first with 12 CPUs fewer. (On nodes of very unequal CPU counts the CPU term can outweigh
the GPU term, Ray then differing from this model: 8 GPUs and 8 CPUs lost to 6 GPUs and 64 CPUs.)
A tie in both Ray breaks in its node map's order, which no config fixes and which changed from
one run to the next, and from one group to the next within a run; here it goes to the lowest node
rank, one of the answers Ray may give and the one a reservation then pins. A group's bundles get
the node's lowest free GPUs, and verl ranks a pool's workers over its groups sorted by node
address (node rank here), then by bundle.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from solver_placement._cluster.ranks import format_ranks
from solver_placement._errors import InfeasiblePlacementError, Statement, agreeing
from solver_placement._limits import check

#: The rule the statements of a pool left without a node name (``Statement.rule``).
RULE = "pool_order"


@dataclass(frozen=True)
class PoolRequest:
    """One pool as Ray is asked for it: GPUs per placement group (``process_on_nodes``), the
    nodes it may use (its node group, ascending), the component that stands for it in
    statements, and the CPUs each bundle asks (verl's ``max_colocate_count``)."""

    name: str
    entries: tuple[int, ...]
    nodes: tuple[int, ...]
    component: str
    cpus_per_gpu: int = 1


@dataclass(frozen=True)
class Landed:
    """A placement group on its node: the node's GPUs it holds, ascending, and its place in the
    order its pool created its groups (verl's split of a pool can see them in that order)."""

    node: int
    gpus: range
    created: int = 0


def land_pools(gpus_per_node: Sequence[int], requests: Sequence[PoolRequest]) -> dict[str, list[Landed]]:
    """Each pool's placement groups, in ``requests`` (creation) order, on the nodes Ray picks;
    each pool's groups listed in verl's rank order (by node, creation order on one node).

    A group no node can hold is refused: Ray would leave it pending and verl would wait forever."""
    check("max_processes", sum(sum(request.entries) for request in requests), "resource pools", "the number of GPUs the pools ask for")
    free = [int(count) for count in gpus_per_node]
    cpus = [0] * len(free)  # CPUs reserved per node
    heaps: dict[tuple[int, ...], tuple[list[tuple[int, int, int]], frozenset[int]]] = {}
    shared: dict[int, tuple[list[tuple[int, int, int]], frozenset[int]]] = {}  # by the id of a request's nodes tuple
    landed: dict[str, list[Landed]] = {}
    for request in requests:
        # hashing a tuple reads all of it: once per tuple object, not per pool or placement group
        # (80,000 pools of one node group would otherwise hash its 80,000 nodes 80,000 times)
        if id(request.nodes) not in shared:
            if request.nodes not in heaps:
                heap = [(-free[node], cpus[node], node) for node in request.nodes]
                heapq.heapify(heap)
                heaps[request.nodes] = (heap, frozenset(request.nodes))
            shared[id(request.nodes)] = heaps[request.nodes]
        own_heap = shared[id(request.nodes)][0]
        groups: list[Landed] = []
        for index, size in enumerate(request.entries):
            node = _freest(own_heap, free, cpus)
            if node is None or free[node] < size:
                raise _pending(request, index, free, {**landed, request.name: groups}, requests)
            used = int(gpus_per_node[node]) - free[node]
            groups.append(Landed(node, range(used, used + size), index))
            free[node] -= size
            cpus[node] += size * request.cpus_per_gpu
            for heap, members in heaps.values():
                if node in members:
                    heapq.heappush(heap, (-free[node], cpus[node], node))
        landed[request.name] = sorted(groups, key=lambda group: group.node)
    return landed


def _freest(heap: list[tuple[int, int, int]], free: Sequence[int], cpus: Sequence[int]) -> int | None:
    """The node with the most free GPUs, then the fewest CPUs reserved, then the lowest rank;
    entries that are stale are dropped."""
    while heap:
        negative_free, reserved, node = heap[0]
        if -negative_free == free[node] and reserved == cpus[node]:
            return node
        heapq.heappop(heap)
    return None


def _pending(
    request: PoolRequest, index: int, free: Sequence[int], landed: Mapping[str, Sequence[Landed]], requests: Sequence[PoolRequest]
) -> InfeasiblePlacementError:
    """The group Ray would leave pending, the nodes the groups before it took, and the most a node has left."""
    size = request.entries[index]
    most = max((free[node] for node in request.nodes), default=0)
    before = [other for other in requests if landed.get(other.name)]
    taken = "; ".join(f"{other.name} took {_nodes([group.node for group in landed[other.name]])}" for other in before)
    text = (
        f"resource pool {request.name!r}: placement group {index} needs {size} GPUs on one node, but once the groups created "
        f"before it are placed ({taken or 'none'}; Ray gives each the freest node) the freest of its nodes have {most} free "
        f"({_nodes([node for node in request.nodes if free[node] == most])}); Ray would leave the group pending and verl would wait for it forever"
    )
    others = tuple(other.component for other in before if other.name != request.name)
    return InfeasiblePlacementError(f"no placement exists: {text}", [Statement(text, request.component, ("process_on_nodes",), RULE, None, others)])


def _nodes(nodes: Sequence[int]) -> str:
    """``node 3`` or ``nodes 0-2``."""
    return f"{agreeing(len(set(nodes)), 'node')} {format_ranks(nodes)}"
