"""``cluster.segment_size``: NeMo-RL's NVLink domains, how it picks nodes by them and orders ranks.

NeMo-RL learns a node's NVLink domain and its place in the fabric from two Ray resources that
its ``ray.sub`` registers (``nvlink_domain_<ClusterUUID>: 1`` from ``nvidia-smi -q``, empty on
DGX/HGX machines without a fabric, and ``topo_rank``, at least 1; ``virtual_cluster.py`` lines
131-162 at 7ea279ab). A stated cluster gives them as node labels: :data:`DOMAIN_LABEL` (the
ClusterUUID) and :data:`TOPO_RANK_LABEL` (a whole number); a cluster read from a live Ray
(``--ray``) has them as what ``Cluster.from_ray`` makes of any custom resource, hardware items of
that type on the node (one ``nvlink_domain_<ClusterUUID>`` item, ``topo_rank`` items as many as
the rank), read back here the way ``get_ray_cluster_topology`` reads the resources (lines
475-497). With ``segment_size`` set:

* ``prepare_segment_topology`` (lines 585-642): with no node in a known domain it prints
  "falling back to unordered allocation" and changes nothing; else ``select_segment_nodes``
  (lines 500-582) refuses ``num_nodes`` not divisible by ``segment_size`` (``ValueError``), sorts
  each domain's nodes by ``topo_rank`` and the domains by their lowest, takes whole segments
  greedily, and raises ``ResourceInsufficientError`` when too few segments form. Each selected
  node becomes a constraint ``{domain: 0.001}`` on the bundles of one "node" group, in order: a
  group may land on any node of its domain, not on the node selected;
* a unified placement group's bundles are sorted by ``_sort_bundle_indices_by_topology`` (lines
  645-758): by (Ray node ID, GPU) when no bundle knows a domain or a ``topo_rank``, else by (the
  domain's lowest ``topo_rank``, ``topo_rank``, GPU), after dropping, per domain, the bundles past
  its whole segments (``(nodes // segment_size) * segment_size * gpus_per_node``, sorted by
  ``topo_rank`` and GPU); any bundle dropped fails ``_get_sorted_bundle_indices``'s assert
  (lines 1113-1121).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import PlacementConfigError, shown

#: The node label giving a node's NVLink domain (NeMo-RL's ``nvlink_domain_<ClusterUUID>`` resource).
DOMAIN_LABEL = "nvlink_domain"
#: The node label giving a node's topological rank (NeMo-RL's ``topo_rank`` resource).
TOPO_RANK_LABEL = "topo_rank"
#: The prefix of the Ray resource by which ``ray.sub`` advertises a node's NVLink domain.
RESOURCE_PREFIX = "nvlink_domain_"
#: NeMo-RL's sentinels for a node without a domain or a ``topo_rank`` (``NVLINK_DOMAIN_UNKNOWN``, ``TOPO_RANK_UNKNOWN``).
UNKNOWN_DOMAIN = "unknown"
UNKNOWN_RANK = -1


@dataclass(frozen=True)
class NodeTopology:
    """What NeMo-RL's probes read of one node: its NVLink domain and ``topo_rank`` (or the sentinels)."""

    domain: str
    topo_rank: int


def cluster_topology(cluster: Cluster) -> tuple[NodeTopology, ...]:
    """Per node, its domain and ``topo_rank``: from the cluster's node labels, else from the Ray
    resources a live cluster advertises them by (see the module docstring)."""
    domains, ranks = _ray_resources(cluster)
    nodes = []
    for node, labels in enumerate(cluster.node_labels):
        domain = labels.get(DOMAIN_LABEL) or domains[node] or UNKNOWN_DOMAIN
        rank_text = labels.get(TOPO_RANK_LABEL, ranks[node])
        if rank_text is None:
            rank = UNKNOWN_RANK
        elif rank_text.isdigit() and int(rank_text) >= 1:
            rank = int(rank_text)
        else:
            raise PlacementConfigError(
                f"NeMo-RL: cluster.node_labels[{node}].{TOPO_RANK_LABEL}={shown(rank_text)}: a topo_rank is a whole number of at least 1 "
                "(ray.sub registers it as a Ray resource, which Ray drops at 0); give the node's rank or remove the label"
            )
        nodes.append(NodeTopology(domain, rank))
    return tuple(nodes)


def _ray_resources(cluster: Cluster) -> tuple[list[str | None], list[str | None]]:
    """Per node, the ClusterUUID of its ``nvlink_domain_<ClusterUUID>`` resource and its
    ``topo_rank`` resource's amount, as text; None where it has none. (``ray.sub`` gives a node
    one domain; with several NeMo-RL keeps the last in Ray's resource order, which the cluster
    model does not keep: the last by name here.)"""
    domains: list[str | None] = [None] * cluster.num_nodes
    for kind in sorted(kind for kind in cluster.kinds if kind.startswith(RESOURCE_PREFIX)):
        for node in np.flatnonzero(cluster.items_per_node(kind)).tolist():
            domains[node] = kind.removeprefix(RESOURCE_PREFIX)
    counts = cluster.items_per_node(TOPO_RANK_LABEL).tolist()
    return domains, [str(count) if count else None for count in counts]


def knows_domains(topology: Sequence[NodeTopology], nodes: Sequence[int]) -> bool:
    """Whether any of ``nodes`` is in a known NVLink domain (``prepare_segment_topology``'s ``has_topology``)."""
    return any(topology[node].domain != UNKNOWN_DOMAIN for node in nodes)


def select_segment_nodes(topology: Sequence[NodeTopology], nodes: Sequence[int], segment_size: int, num_nodes: int) -> tuple[list[int], list[int]]:
    """``select_segment_nodes``: the nodes picked, in topological order, and the others (in node order);
    NeMo-RL's ``ValueError`` and ``ResourceInsufficientError`` refused in its words, with a segment size that works."""
    if num_nodes % segment_size != 0:
        raise PlacementConfigError(
            f"NeMo-RL refuses this config on a cluster with NVLink domains (virtual_cluster.py line 522 at 7ea279ab): ValueError: "
            f"num_nodes ({num_nodes}) must be divisible by segment_size ({segment_size}). Fix: {_working_size(topology, nodes, num_nodes)}"
        )
    selected = _selected(topology, nodes, segment_size, num_nodes)
    if selected is None:
        per_domain = {f"nvlink_domain_{domain}": len(members) for domain, members in _domains(topology, nodes)}
        raise PlacementConfigError(
            f"NeMo-RL stops in setup on this cluster (virtual_cluster.py line 565 at 7ea279ab): ResourceInsufficientError: Cannot form "
            f"{num_nodes // segment_size} complete segments of {segment_size} nodes. Nodes per domain: {per_domain}. Need {num_nodes} nodes "
            f"total. Fix: {_working_size(topology, nodes, num_nodes)}"
        )
    chosen = set(selected)
    return selected, [node for node in nodes if node not in chosen]


def _domains(topology: Sequence[NodeTopology], nodes: Sequence[int]) -> list[tuple[str, list[int]]]:
    """The known domains of ``nodes``, each's nodes by ``topo_rank``, the domains by their lowest (stable, as NeMo-RL sorts)."""
    domains: dict[str, list[int]] = {}
    for node in nodes:
        if topology[node].domain != UNKNOWN_DOMAIN:
            domains.setdefault(topology[node].domain, []).append(node)
    for members in domains.values():
        members.sort(key=lambda node: topology[node].topo_rank)
    return sorted(domains.items(), key=lambda item: topology[item[1][0]].topo_rank)


def _selected(topology: Sequence[NodeTopology], nodes: Sequence[int], segment_size: int, num_nodes: int) -> list[int] | None:
    needed, taken, selected = num_nodes // segment_size, 0, []
    for _, members in _domains(topology, nodes):
        if taken >= needed:
            break
        take = min(len(members) // segment_size, needed - taken)
        selected += members[: take * segment_size]
        taken += take
    return selected if taken == needed else None


def _working_size(topology: Sequence[NodeTopology], nodes: Sequence[int], num_nodes: int) -> str:
    """The fix: the largest segment size that divides ``num_nodes`` and forms on these domains (checked here)."""
    for size in range(num_nodes, 0, -1):
        if num_nodes % size == 0 and _selected(topology, nodes, size, num_nodes) is not None:
            return f"cluster.segment_size={size} forms its segments on this cluster (or null: no NVLink pinning)"
    return f"the cluster's NVLink domains hold fewer than {num_nodes} nodes: give more nodes, or cluster.segment_size=null (no NVLink pinning)"


def sorted_bundle_indices(
    landed: Sequence[tuple[int, int]], topology: Sequence[NodeTopology], segment_size: int | None, gpus_per_node: int
) -> list[int]:
    """``_sort_bundle_indices_by_topology`` over the (node, GPU) each bundle landed on: the bundle
    indices in rank order (fewer than the bundles when segment trimming dropped some)."""
    info = [(index, node, gpu, topology[node].domain, topology[node].topo_rank) for index, (node, gpu) in enumerate(landed)]
    if not any(domain != UNKNOWN_DOMAIN or rank != UNKNOWN_RANK for _, _, _, domain, rank in info):
        return [index for index, *_ in sorted(info, key=lambda item: (item[1], item[2]))]
    if segment_size is not None:
        per_domain: dict[str, list[tuple[int, int, int, str, int]]] = {}
        for item in info:
            per_domain.setdefault(item[3], []).append(item)
        info = []
        for members in per_domain.values():
            usable = len({item[1] for item in members}) // segment_size * segment_size * gpus_per_node
            info += sorted(members, key=lambda item: (item[4], item[2]))[:usable]
    lowest: dict[str, int] = {}
    for _, _, _, domain, rank in info:
        lowest[domain] = min(rank, lowest.get(domain, rank))
    return [index for index, *_ in sorted(info, key=lambda item: (lowest[item[3]], item[4], item[2]))]
