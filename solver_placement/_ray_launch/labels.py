"""How a reservation tells Ray where each bundle goes: by node labels, else by Ray node id and
custom resources.

Ray 2.49+ schedules placement-group bundles by node labels (``bundle_label_selector``) and
recommends labels over the older custom-resource pattern for anything that is not counted. So
the nodes of a model carry labels (the embedded Ray sets them, ``ray start --labels`` on a real
cluster, a dry run assumes them): ``solver-placement/node-rank``, one
``solver-placement/group.<name>`` per node group without custom hardware, Ray's
``ray.io/accelerator-type`` for the GPU model, and the model's topology labels. Two schemes,
chosen per plan:

* ``labels``: every node the plan uses carries its rank label. A bundle selects its node by
  rank, and states as labels what the plan relies on there and the node advertises: its GPU model
  (GPU bundles), the node groups of the processes anchored to it. The selectors name no Ray node
  id, so they read the same on every start of the cluster (and in a dry run without Ray).
* ``resources`` (the fallback, for a cluster whose nodes carry no rank label): nodes in IP order,
  each bundle pinned by Ray's own ``ray.io/node-id`` label, the GPU model as Ray's
  ``accelerator_type:<model>`` resource (the amount Ray's ``accelerator_type`` option asks).

Counted hardware (GPUs, robots, CPUs) stays a resource in both: a label cannot be used up.
Required ``topology`` domains add their label in both (``domains``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from solver_placement._cluster.cluster import Cluster
from solver_placement._cluster.ray_nodes import (
    ACCELERATOR_TYPE_LABEL,
    GPU_MODEL_PREFIX,
    NODE_ID_LABEL,
    NODE_RANK_LABEL,
    RayNode,
    group_label,
    label_value_ok,
)
from solver_placement._constants import ACCELERATOR, CLUSTER_LABEL, NODE_LABEL

LABELS = "labels"
RESOURCES = "resources"
#: The share of a node's ``accelerator_type:<model>`` resource a GPU bundle asks in the resource
#: scheme: what Ray's own ``accelerator_type=`` option asks, so any number of bundles fit.
GPU_MODEL_SHARE = 0.001


@dataclass(frozen=True)
class Scheme:
    """Which way the plan's bundles find their nodes, and why that one."""

    name: str
    reason: str


def cluster_node_labels(cluster: Cluster, rank: int) -> dict[str, str]:
    """The labels node ``rank`` of the model carries on Ray (the module docstring lists them).

    A group with custom hardware is its resource, not a label; a name or GPU model Ray would
    refuse as a label is left out (the launch then does without it)."""
    labels = {**cluster.node_labels[rank], NODE_RANK_LABEL: str(rank)}
    for group in cluster.node_groups.values():
        if group.label in (CLUSTER_LABEL, NODE_LABEL) or group.hardware_type not in (ACCELERATOR, None) or rank not in group.node_ranks:
            continue
        key = group_label(group.label)
        if key is not None:
            labels[key] = "true"
    model = cluster.accelerator_models[rank]
    if model is not None and label_value_ok(model):
        labels[ACCELERATOR_TYPE_LABEL] = model
    return labels


def choose_scheme(nodes: Mapping[int, RayNode]) -> Scheme:
    """Labels when every node the plan uses carries its rank label, else resources."""
    unlabelled = sorted(rank for rank, node in nodes.items() if NODE_RANK_LABEL not in node.labels)
    if not unlabelled:
        return Scheme(LABELS, f"every node the plan uses carries {NODE_RANK_LABEL}: bundles select their nodes by label")
    return Scheme(
        RESOURCES,
        f"Ray's nodes carry no {NODE_RANK_LABEL} label: node ranks in IP order, bundles pinned by {NODE_ID_LABEL}, "
        f"GPU models as {GPU_MODEL_PREFIX}<model> resources",
    )


def node_selector(scheme: Scheme, node: RayNode, groups: frozenset[str], holds_gpu: bool) -> dict[str, str]:
    """The selector of a bundle on ``node``: the node, and under the label scheme the GPU
    model (``holds_gpu``) and the node groups (``groups``, of the processes anchored to it) that
    the node advertises as labels."""
    if scheme.name == RESOURCES:
        return {NODE_ID_LABEL: node.node_id}
    selector = {NODE_RANK_LABEL: node.labels[NODE_RANK_LABEL]}  # as the node spells it ("3", or "03": the same rank)
    if holds_gpu and ACCELERATOR_TYPE_LABEL in node.labels:
        selector[ACCELERATOR_TYPE_LABEL] = node.labels[ACCELERATOR_TYPE_LABEL]
    for group in sorted(groups):
        key = group_label(group)
        if key is not None and key in node.labels:
            selector[key] = node.labels[key]
    return selector


def gpu_model_resource(scheme: Scheme, node: RayNode) -> dict[str, float]:
    """Under the resource scheme, the share of the node's GPU-model resource a GPU bundle asks
    (none when the node advertises no model, or under the label scheme)."""
    if scheme.name != RESOURCES:
        return {}
    models = sorted(key for key in node.resources if key.startswith(GPU_MODEL_PREFIX))
    return {models[0]: GPU_MODEL_SHARE} if models else {}
