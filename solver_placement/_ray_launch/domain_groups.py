"""Required ``topology`` domains at launch: groups the solver kept inside one NVLink domain or rack
are reserved so that Ray keeps them there too, and nodes Ray cannot place by domain are refused.

* Every node holding a process of a component whose ``topology`` rule ``require``s a label (for
  groups of more than one process) must carry that label on Ray, with the value the model gives
  it. A node without it would be used blind: Ray cannot keep a group inside a domain it cannot
  see. Every such node is named in one ``PlacementConfigError`` before anything is reserved.
* Every bundle on such a node selects the node's domain (``rack: r2``) besides its node: Ray
  places it only inside that domain, in every Ray of our range (the label-selector way).
* Where Ray has ``topology_strategy`` (2.57 on), the reservation is one placement group per
  domain (nodes with the same values of the required labels), each asking Ray to keep all its
  bundles inside one value of the label (``STRICT_PACK``; Ray takes one such label per group),
  plus one plain group for the bundles outside every domain. Ray checks the rule itself then, at
  the cost of several groups instead of one (each is reserved whole; all are removed on failure).

After landing, the probe checks every bundle is on its planned node (``probe``), so the domains
hold whatever Ray did.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from solver_placement._cluster.cluster import Cluster
from solver_placement._cluster.ray_nodes import NODE_ID_LABEL, RayNode
from solver_placement._errors import PlacementConfigError
from solver_placement._records import Placement
from solver_placement._specification.placement_spec import PlacementSpec

#: How Ray packs bundles over nodes, inside a domain or not (few nodes, best effort; each bundle
#: is pinned to its node anyway). Never STRICT_PACK: Ray 2.49.0 ignores bundle label selectors under it.
NODE_STRATEGY = "PACK"


@dataclass(frozen=True)
class PlacementGroupPlan:
    """One placement group of the reservation: its bundles (indices into the plan's), and either
    a ``strategy`` or Ray's ``topology_strategy`` keeping it inside ``domain``."""

    bundles: list[int]
    strategy: str | None
    topology_strategy: dict[str, str] | None
    domain: dict[str, str]


def required_domains(spec: PlacementSpec) -> dict[str, tuple[str, ...]]:
    """Per component, the labels its groups must stay inside (``require`` rules on groups of more than one process)."""
    required: dict[str, tuple[str, ...]] = {}
    for name, component in spec.components.items():
        rules = component.constraints
        tp, pp = rules.tensor_parallel_size, rules.pipeline_parallel_size
        labels = [rule.label for rule in rules.topology if rule.required and (tp if rule.group == "tensor_parallel" else tp * pp) > 1]
        if labels:
            required[name] = tuple(sorted(set(labels)))
    return required


def node_domains(
    placements: Mapping[str, Sequence[Placement]],
    required: Mapping[str, Sequence[str]],
    nodes: Mapping[int, RayNode],
    cluster: Cluster | None,
) -> dict[int, dict[str, str]]:
    """Per node rank holding a process of a component in ``required``, the node's value of each
    label required there; every node lacking one on Ray (or disagreeing with the model) in one error."""
    wanted: dict[int, set[str]] = defaultdict(set)
    needed_by: dict[tuple[int, str], set[str]] = defaultdict(set)
    for name, labels in required.items():
        for p in placements.get(name, ()):
            wanted[p.cluster_node_rank].update(labels)
            for label in labels:
                needed_by[(p.cluster_node_rank, label)].add(name)
    domains: dict[int, dict[str, str]] = {}
    problems = []
    for rank in sorted(wanted):
        node = nodes[rank]
        where = f"node {rank} (Ray node {node.node_id[:12]}, {node.ip})"
        domains[rank] = {}
        for label in sorted(wanted[rank]):
            value = node.labels.get(label)
            modelled = cluster.node_labels[rank].get(label) if cluster is not None else None
            users = ", ".join(sorted(needed_by[(rank, label)]))
            if value is None:
                problems.append(f"{where} carries no {label!r} label, which {users} require(s) there")
            elif modelled is not None and modelled != value:
                problems.append(f"{where} has {label}={value} on Ray but {label}={modelled} in the model")
            else:
                domains[rank][label] = value
    if problems:
        raise PlacementConfigError(
            f"the plan keeps groups inside topology domains Ray cannot see on {len(problems)} node label(s): " + "; ".join(problems)
            + " (label the nodes, e.g. `ray start --labels rack=r1`, or re-plan on nodes that carry the label)"
        )
    return domains


def placement_groups(bundle_nodes: Sequence[int], domains: Mapping[int, Mapping[str, str]], topology_strategy: bool) -> list[PlacementGroupPlan]:
    """The reservation's placement groups (the module docstring says when there are several);
    ``bundle_nodes``: the node rank of each bundle, in plan order."""
    everything = list(range(len(bundle_nodes)))
    if not topology_strategy or not any(domains.values()):
        return [PlacementGroupPlan(everything, NODE_STRATEGY, None, {})]
    cells: dict[tuple[tuple[str, str], ...], list[int]] = defaultdict(list)
    for index, rank in enumerate(bundle_nodes):
        cells[tuple(sorted(domains.get(rank, {}).items()))].append(index)
    groups = []
    for cell, bundles in sorted(cells.items()):
        if cell:
            groups.append(PlacementGroupPlan(bundles, None, {NODE_ID_LABEL: NODE_STRATEGY, cell[0][0]: "STRICT_PACK"}, dict(cell)))
        else:
            groups.append(PlacementGroupPlan(bundles, NODE_STRATEGY, None, {}))
    return groups
