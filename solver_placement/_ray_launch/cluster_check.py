"""Does the Ray cluster match the cluster model? Every difference, before anything is reserved.

A model that states its cluster was solved for that hardware; launched on a Ray cluster with
fewer GPUs on a node, another GPU model or a missing robot, the plan would land on hardware it
was not made for. Ray nodes the model has but Ray lacks are only a difference when the plan
uses them: a plan re-planned around a lost node (``solver_placement.replan``) still launches.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from solver_placement._cluster.cluster import Cluster
from solver_placement._cluster.ray_nodes import NODE_RANK_LABEL, RayNode, gpu_models
from solver_placement._constants import ACCELERATOR, NODE
from solver_placement._errors import PlacementConfigError

#: The way out of every model/Ray mismatch, for the messages that report one. A Ray already
#: running on the machine (a ``ray start`` cluster, ``RAY_ADDRESS``) wins over the embedded one, so
#: the user must be told how to ask for the embedded Ray; nothing tells this code whether the CLI
#: or Python called, so both spellings are named.
EMBEDDED_RAY_HINT = 'or launch on the embedded Ray shaped like the model: --local on the command line, address="local" in Python'


def check_cluster_matches(cluster: Cluster, nodes: Sequence[RayNode | None], used: Collection[int]) -> None:
    """Raise one error listing every difference between the model and Ray's nodes."""
    found = differences(cluster, nodes, used)
    if found:
        raise PlacementConfigError(
            f"the Ray cluster differs from the cluster model in {len(found)} way(s): " + "; ".join(found)
            + f" (launch on a matching cluster; solve against the live one: Cluster.from_ray; {EMBEDDED_RAY_HINT})"
        )


def differences(cluster: Cluster, nodes: Sequence[RayNode | None], used: Collection[int]) -> list[str]:
    """Per model node: missing (when the plan uses it), fewer GPUs, another GPU model, fewer items."""
    found = []
    for rank, node in enumerate(nodes):
        if node is None:
            if rank in used:
                found.append(f"node {rank} of the plan has no Ray node (no Ray node carries {NODE_RANK_LABEL}={rank}; re-plan without it: solver_placement.replan)")
            continue
        found.extend(_node_differences(cluster, rank, node))
    return found


def _node_differences(cluster: Cluster, rank: int, node: RayNode) -> list[str]:
    where = f"node {rank} (Ray node {node.node_id[:12]}, {node.ip})"
    found = []
    gpus = int(cluster.gpus_per_node[rank])
    if node.resources.get("GPU", 0.0) + 1e-9 < gpus:
        found.append(f"{where} has {node.resources.get('GPU', 0.0):g} GPU(s), the model {gpus}")
    model = cluster.accelerator_models[rank]
    ray_models = gpu_models(node)
    if model is not None and ray_models and model not in ray_models:
        found.append(f"{where} has {'/'.join(ray_models)} GPUs, the model {model}")
    for kind, count in sorted(items_on(cluster, rank).items()):
        if node.resources.get(kind, 0.0) + 1e-9 < count:
            found.append(f"{where} has {node.resources.get(kind, 0.0):g} {kind}, the model {count}")
    return found


def items_on(cluster: Cluster, rank: int) -> dict[str, int]:
    """The model's custom hardware items (robots) on node ``rank``, counted per type."""
    counts: dict[str, int] = {}
    for hw in map(int, (cluster.hw_node == rank).nonzero()[0]):
        kind = cluster.kind_of(hw)
        if kind not in (ACCELERATOR, NODE):
            counts[kind] = counts.get(kind, 0) + 1
    return counts
