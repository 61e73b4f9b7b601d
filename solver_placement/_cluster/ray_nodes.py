"""The cluster model of a Ray cluster's nodes: pure data in, ``Cluster`` arguments out, no Ray import.

Users run Ray clusters that already know their nodes, GPUs, GPU models, robots and labels;
:meth:`Cluster.from_ray <solver_placement._cluster.cluster.Cluster.from_ray>` reads them (the
connection lives in ``ray_launch.connect``) and this module turns what the nodes advertise into
the arguments of our :class:`Cluster`. It sits in ``_cluster/`` so the mapping is one rule with
one home, testable without Ray, and shared by the reader and the launch (which maps node ranks
to Ray nodes the same way). Mapping of Ray's view:

* node order: the ``solver-placement/node-rank`` label when nodes carry it (then every node
  must, with ranks 0..n-1), else by IP, then Ray node id, so ranks are the same on every call;
* ``GPU`` resource: GPUs of the node; their model: the ``accelerator_type:<name>`` resource,
  else Ray's ``ray.io/accelerator-type`` label (what Ray 2.49+ sets on a node whose GPUs it detects);
* any other custom resource (``franka: 2``): that many hardware items of that type, in a node
  group named after the type (item metadata: ``ray_index`` 0..count-1 on the node); the
  resources Ray makes for placement groups (``GPU_group_<id>``) are not hardware;
* a ``solver-placement/group.<name>`` label (what the embedded Ray gives the nodes of a node
  group): the node is in node group ``<name>``;
* every other label, Ray's own included (``ray.io/accelerator-type``, ``ray.io/availability-zone``),
  but not ``ray.io/node-id``: a topology label (so ``topology`` rules read racks or NVLink domains
  from the live cluster), and for each key of ``group_by_labels`` one node group per value,
  named after the value.

With ``available=True`` the nodes' resources are what is free now (Ray's available resources),
and the model says so (``free_gpus_only``): its GPU ids are positions among a node's free GPUs.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from solver_placement._errors import LaunchError, agreeing, counted
from solver_placement._limits import check

#: Node label giving a Ray node its rank in the cluster model.
NODE_RANK_LABEL = "solver-placement/node-rank"
#: Prefix of the node label saying a node is in a node group (``solver-placement/group.gpu: "true"``).
GROUP_LABEL_PREFIX = "solver-placement/group."
#: Ray's default label naming a node (every node of Ray 2.49+ carries it).
NODE_ID_LABEL = "ray.io/node-id"
#: Ray's default label naming a node's GPU model, where Ray detects one (``A100``).
ACCELERATOR_TYPE_LABEL = "ray.io/accelerator-type"
#: Prefix of the resource by which Ray advertises a node's GPU model (``accelerator_type:A100``).
GPU_MODEL_PREFIX = "accelerator_type:"
#: Seconds to wait for a Ray head to accept a TCP connection before calling its address dead.
DEFAULT_CONNECT_TIMEOUT_S = 10.0
#: Ray resources that are not hardware items.
_NOT_ITEMS = ("CPU", "GPU", "memory", "object_store_memory")
#: The resources Ray adds to a node for each placement group on it (``GPU_group_<id>``,
#: ``bundle_group_0_<id>``; a group id is 36 hex digits): another job's reservation, not hardware.
_PLACEMENT_GROUP_RESOURCE = re.compile(r"_group_(?:[0-9]+_)?[0-9a-f]{36}$")
#: A label name Ray accepts (its Kubernetes-style rule): what a node group name must be to become a label.
_LABEL_NAME = re.compile(r"[a-zA-Z0-9]([a-zA-Z0-9_.-]{0,61}[a-zA-Z0-9])?")


@dataclass(frozen=True)
class RayNode:
    """What the cluster model and the launch plan need to know of one Ray node."""

    node_id: str
    ip: str
    resources: Mapping[str, float]
    labels: Mapping[str, str] = field(default_factory=dict)


def ip_key(ip: str) -> tuple[int, ...] | tuple[str]:
    """Sort key ordering IPv4 addresses numerically (10.0.0.9 before 10.0.0.10), others as text."""
    parts = ip.split(".")
    return tuple(int(x) for x in parts) if all(x.isdigit() for x in parts) else (ip,)


def gpu_models(node: RayNode) -> list[str]:
    """The GPU models a node advertises (Ray's ``accelerator_type:<name>`` resources and its
    ``ray.io/accelerator-type`` label), sorted."""
    models = {key.removeprefix(GPU_MODEL_PREFIX) for key in node.resources if key.startswith(GPU_MODEL_PREFIX)}
    if ACCELERATOR_TYPE_LABEL in node.labels:
        models.add(node.labels[ACCELERATOR_TYPE_LABEL])
    return sorted(models)


def label_value_ok(value: str) -> bool:
    """Whether Ray takes ``value`` as a label value or label name (its Kubernetes-style rule)."""
    return _LABEL_NAME.fullmatch(value) is not None


def group_label(group: str) -> str | None:
    """The node label of node group ``group``, or None when the name cannot be a Ray label name."""
    return f"{GROUP_LABEL_PREFIX}{group}" if label_value_ok(group) else None


def ray_cluster_kwargs(nodes: Sequence[RayNode], group_by_labels: Sequence[str] = (), *, available: bool = False) -> dict[str, Any]:
    """The :class:`Cluster` arguments describing ``nodes`` (the module docstring gives the mapping);
    ``available``: the nodes' resources are what is free now."""
    ordered = ordered_nodes(nodes)
    labels = [{k: v for k, v in node.labels.items() if k not in (NODE_ID_LABEL, NODE_RANK_LABEL) and not k.startswith(GROUP_LABEL_PREFIX)}
              for node in ordered]  # fmt: skip
    return {
        "num_nodes": len(ordered),
        "num_gpus_per_node": [int(node.resources.get("GPU", 0)) for node in ordered],
        "accelerator_model": [_gpu_model(node) for node in ordered],
        "node_groups": [*_hardware_groups(ordered), *_group_label_groups(ordered), *_label_groups(labels, group_by_labels)],
        "node_labels": labels,
        "free_gpus_only": available,
    }


def ordered_nodes(nodes: Sequence[RayNode]) -> list[RayNode]:
    """Nodes by their node-rank label (all of them must carry 0..n-1), else by (IP, node id)."""
    if not nodes:
        raise LaunchError("the Ray cluster has no alive node")
    labelled = [node for node in nodes if NODE_RANK_LABEL in node.labels]
    if not labelled:
        return sorted(nodes, key=lambda node: (ip_key(node.ip), node.node_id))
    ranks = sorted(node.labels[NODE_RANK_LABEL] for node in labelled)
    if len(labelled) != len(nodes) or ranks != sorted(str(rank) for rank in range(len(nodes))):
        raise LaunchError(
            f"Ray's {NODE_RANK_LABEL} labels must number every alive node 0..{len(nodes) - 1} once; "
            f"{len(labelled)} of {counted(len(nodes), 'node')} {agreeing(len(labelled), 'carries', 'carry')} ranks {', '.join(ranks)}"
        )
    return sorted(nodes, key=lambda node: int(node.labels[NODE_RANK_LABEL]))


def _gpu_model(node: RayNode) -> str | None:
    """The node's GPU model: its ``accelerator_type:`` resource, else its ``ray.io/accelerator-type`` label."""
    if not node.resources.get("GPU", 0):
        return None
    advertised = sorted(key.removeprefix(GPU_MODEL_PREFIX) for key in node.resources if key.startswith(GPU_MODEL_PREFIX))
    return advertised[0] if advertised else node.labels.get(ACCELERATOR_TYPE_LABEL)


def _hardware_groups(ordered: Sequence[RayNode]) -> list[dict[str, Any]]:
    """One node group per custom resource type, one item per unit on each node."""
    configs: dict[str, list[dict[str, int]]] = defaultdict(list)
    for rank, node in enumerate(ordered):
        for name, amount in sorted(node.resources.items()):
            if name in _NOT_ITEMS or name.startswith(("node:", GPU_MODEL_PREFIX)) or _PLACEMENT_GROUP_RESOURCE.search(name) or int(amount) < 1:
                continue
            # checked before the items are made: a node advertising 10**12 of a resource must not fill memory first
            check("max_items_per_node", int(amount), f"Ray node {rank} ({node.node_id})", f"its amount of resource {name!r} (one hardware item each)")
            configs[name].extend({"node_rank": rank, "ray_index": index} for index in range(int(amount)))
    return [
        {"label": kind, "node_ranks": _ranks(sorted({c["node_rank"] for c in items})), "hardware": {"type": kind, "configs": items}}
        for kind, items in sorted(configs.items())
    ]


def _group_label_groups(ordered: Sequence[RayNode]) -> list[dict[str, Any]]:
    """One node group per ``solver-placement/group.<name>`` label, over the nodes carrying it."""
    members: dict[str, list[int]] = defaultdict(list)
    for rank, node in enumerate(ordered):
        for key in node.labels:
            if key.startswith(GROUP_LABEL_PREFIX):
                members[key.removeprefix(GROUP_LABEL_PREFIX)].append(rank)
    return [{"label": name, "node_ranks": _ranks(ranks)} for name, ranks in sorted(members.items())]


def _label_groups(labels: Sequence[dict[str, str]], keys: Sequence[str]) -> list[dict[str, Any]]:
    """For each key, one node group per value of that label, named after the value."""
    groups = []
    for key in keys:
        values = sorted({node_labels[key] for node_labels in labels if key in node_labels})
        if not values:
            raise LaunchError(f"group_by_labels: no Ray node carries the label {key!r}")
        for value in values:
            groups.append({"label": value, "node_ranks": _ranks([r for r, node_labels in enumerate(labels) if node_labels.get(key) == value])})
    return groups


def _ranks(ranks: Sequence[int]) -> str:
    return ",".join(map(str, ranks))
