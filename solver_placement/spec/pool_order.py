"""Where verl's resource pools land: the node Ray gives each of their placement groups.

verl makes one placement group per entry of a pool's ``process_on_nodes`` (``STRICT_PACK``: all
its bundles, one per GPU, on one node) when its driver first needs the pool, pools in the order
the driver creates them. Ray's GCS schedules pending groups in that order and puts each on the
feasible node scoring highest, the sum over the asked resources of ``(free - asked) / free``
(its ``LeastResourceScorer``): the node left freest. So an earlier pool takes the emptiest nodes
and a later one what is left; a solver free to choose could hand a separate reward pool node 1
and the trainer nodes 0 and 2, which verl does not do. Ray breaks ties in its node map's hash
order, which nothing in a config fixes; here they go to the lowest node rank, one of the answers
Ray may give and the one a reservation then pins. A group's bundles get the node's lowest free
GPUs, and verl ranks a pool's workers over its groups sorted by node address (node rank here),
then by bundle.

Nodes are scored on GPUs alone: each bundle also asks ``max_colocate_count`` CPUs, and the
cluster model has no CPU counts, so nodes are taken to have CPUs alike and enough.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from solver_placement.cluster.ranks import format_ranks
from solver_placement.errors import InfeasiblePlacementError, Statement
from solver_placement.limits import check

#: The rule the statements of a pool left without a node name (``Statement.rule``).
RULE = "pool_order"


@dataclass(frozen=True)
class PoolRequest:
    """One pool as Ray is asked for it: GPUs per placement group (``process_on_nodes``), the
    nodes it may use (its node group, ascending), and the component that stands for it in
    statements."""

    name: str
    entries: tuple[int, ...]
    nodes: tuple[int, ...]
    component: str


@dataclass(frozen=True)
class Landed:
    """A placement group on its node: the node's GPUs it holds, ascending."""

    node: int
    gpus: range


def land_pools(gpus_per_node: Sequence[int], requests: Sequence[PoolRequest]) -> dict[str, list[Landed]]:
    """Each pool's placement groups, in ``requests`` (creation) order, on the nodes Ray picks;
    each pool's groups listed in verl's rank order (by node, creation order on one node).

    A group no node can hold is refused: Ray would leave it pending and verl would wait forever."""
    check("max_processes", sum(sum(request.entries) for request in requests), "resource pools", "the number of GPUs the pools ask for")
    free = [int(count) for count in gpus_per_node]
    heaps: dict[tuple[int, ...], tuple[list[tuple[int, int]], frozenset[int]]] = {}
    landed: dict[str, list[Landed]] = {}
    for request in requests:
        if request.nodes not in heaps:
            heap = [(-free[node], node) for node in request.nodes]
            heapq.heapify(heap)
            heaps[request.nodes] = (heap, frozenset(request.nodes))
        groups: list[Landed] = []
        for index, size in enumerate(request.entries):
            node = _freest(heaps[request.nodes][0], free)
            if node is None or free[node] < size:
                raise _pending(request, index, free, {**landed, request.name: groups}, requests)
            used = int(gpus_per_node[node]) - free[node]
            groups.append(Landed(node, range(used, used + size)))
            free[node] -= size
            for heap, members in heaps.values():
                if node in members:
                    heapq.heappush(heap, (-free[node], node))
        landed[request.name] = sorted(groups, key=lambda group: group.node)
    return landed


def _freest(heap: list[tuple[int, int]], free: Sequence[int]) -> int | None:
    """The node with the most free GPUs (lowest rank on a tie), dropping entries that are stale."""
    while heap:
        negative_free, node = heap[0]
        if -negative_free == free[node]:
            return node
        heapq.heappop(heap)
    return None


def _pending(
    request: PoolRequest, index: int, free: Sequence[int], landed: Mapping[str, Sequence[Landed]], requests: Sequence[PoolRequest]
) -> InfeasiblePlacementError:
    """The group Ray would leave pending, the nodes the groups before it took, and the most a node has left."""
    size = request.entries[index]
    most = max((free[node] for node in request.nodes), default=0)
    holding = format_ranks(node for node in request.nodes if free[node] == most)
    before = [other for other in requests if landed.get(other.name)]
    taken = "; ".join(f"{other.name} took node(s) {format_ranks(group.node for group in landed[other.name])}" for other in before)
    text = (
        f"resource pool {request.name!r}: placement group {index} needs {size} GPUs on one node, but once the groups created "
        f"before it are placed ({taken or 'none'}; Ray gives each the freest node) the freest of its nodes have {most} free "
        f"(node(s) {holding}); Ray would leave the group pending and verl would wait for it forever"
    )
    others = tuple(other.component for other in before if other.name != request.name)
    return InfeasiblePlacementError(f"no placement exists: {text}", [Statement(text, request.component, ("process_on_nodes",), RULE, None, others)])
