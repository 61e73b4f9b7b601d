"""Taking the cluster object RLinf hands to placement code.

RLinf passes its own ``Cluster`` (``rlinf.scheduler.cluster``) to ``get_placement`` (its
``WorkerGroup`` calls ``strategy.get_placement(self._cluster, ...)``) and to the component
placement classes (``HybridComponentPlacement(cfg, Cluster())``). :func:`as_cluster` is the one
place where such an object becomes this project's
:class:`~solver_placement._cluster.cluster.Cluster`, so the import can be swapped and nothing else.

It reads only RLinf's public surface, so RLinf's ``Cluster``, the fakes of RLinf's own tests and
any look-alike work (nothing of RLinf is imported):

* ``num_nodes`` and ``get_node_info(rank)`` for every rank, each node exposing
  ``num_accelerators``, ``accelerator_type``, optionally ``accelerator_model`` and
  ``hardware_resources`` (items with ``type`` and ``infos``: robots and other custom hardware);
* the node groups: ``node_groups`` if the object has it, else RLinf's ``_node_groups`` (a list, or
  a label -> group mapping as in RLinf's test fakes), else only the reserved ``cluster`` and
  ``node`` groups via ``get_node_group(label)``. Each group exposes ``label``, ``node_ranks`` (or
  ``nodes``), ``hardware_type``, optionally ``ignore_hardware`` and ``env_configs``.

The result is built through the ordinary config path (``Cluster(num_nodes=..., node_groups=[...])``)
so it behaves exactly like a cluster written in YAML, and it is cached per object: RLinf's
``Cluster`` does not change after its initialisation.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from solver_placement._cluster.cluster import Cluster
from solver_placement._constants import ACCELERATOR, RESERVED_LABELS
from solver_placement._errors import PlacementConfigError, PlacementError, with_context

#: Converted clusters by source object (weak keys: a dropped RLinf cluster frees its copy).
_CONVERTED: weakref.WeakKeyDictionary[Any, Cluster] = weakref.WeakKeyDictionary()
#: What an object must offer to be read as RLinf's cluster.
REQUIRED_SURFACE = ("num_nodes", "get_node_info", "get_node_group")


def as_cluster(cluster: Any) -> Cluster:
    """``cluster`` as this project's :class:`Cluster`: ours as it is, RLinf's (or a look-alike)
    converted once and cached per object."""
    if isinstance(cluster, Cluster):
        return cluster
    missing = [name for name in REQUIRED_SURFACE if not hasattr(cluster, name)]
    if missing:
        raise PlacementConfigError(
            f"expected a solver_placement Cluster or RLinf's Cluster (with {', '.join(REQUIRED_SURFACE)}), "
            f"but {type(cluster).__name__} has no {', '.join(missing)}"
        )
    try:
        return _CONVERTED[cluster]
    except KeyError:
        pass
    except TypeError:  # neither hashable nor weakly referable: convert every time
        return from_rlinf(cluster)
    converted = from_rlinf(cluster)
    _CONVERTED[cluster] = converted
    return converted


def from_rlinf(cluster: Any) -> Cluster:
    """Convert RLinf's cluster (see the module docstring for what is read), without caching."""
    num_nodes = int(cluster.num_nodes)
    nodes = [cluster.get_node_info(rank) for rank in range(num_nodes)]
    groups = [group for group in _node_groups(cluster) if str(group.label) not in RESERVED_LABELS]
    custom = _custom_hardware(nodes)
    try:
        return Cluster(
            num_nodes=num_nodes,
            num_gpus_per_node=[int(node.num_accelerators) for node in nodes],
            accelerator_type=[str(node.accelerator_type) for node in nodes],
            accelerator_model=[_accelerator_model(node) for node in nodes],
            node_groups=_group_configs(groups, custom),
        )
    except PlacementError as error:
        raise with_context(error, f"reading {type(cluster).__name__}") from None


def _accelerator_model(node: Any) -> str | None:
    """RLinf's ``NodeInfo.accelerator_model`` (e.g. ``"NV_GPU:A800"``), or the same read from the
    node's first accelerator (RLinf's definition) when the object lacks the property."""
    model = getattr(node, "accelerator_model", None)
    if model is None:
        accelerators = [r for r in getattr(node, "hardware_resources", None) or () if str(r.type) == ACCELERATOR and r.infos]
        model = accelerators[0].infos[0].model if accelerators else None
    return str(model) if model else None


def _node_groups(cluster: Any) -> list[Any]:
    """RLinf's node groups in cluster order, however the object keeps them."""
    groups = getattr(cluster, "node_groups", None)
    if groups is None:
        groups = getattr(cluster, "_node_groups", None)
    if callable(groups):
        groups = groups()
    if isinstance(groups, Mapping):
        groups = list(groups.values())
    if groups is None:
        groups = [cluster.get_node_group(label) for label in RESERVED_LABELS]
    return [group for group in groups if group is not None]


def _custom_hardware(nodes: list[Any]) -> dict[str, dict[int, list[str]]]:
    """Per custom hardware type (robots, ...): per node, the model of each item, in node order."""
    found: dict[str, dict[int, list[str]]] = {}
    for rank, node in enumerate(nodes):
        for resource in getattr(node, "hardware_resources", None) or ():
            if str(resource.type) == ACCELERATOR:
                continue
            models = [str(getattr(info, "model", resource.type)) for info in resource.infos]
            if models:
                found.setdefault(str(resource.type), {})[rank] = models
    return found


def _group_configs(groups: Iterable[Any], custom: dict[str, dict[int, list[str]]]) -> list[dict[str, Any]]:
    """``cluster.node_groups`` entries stating RLinf's groups and, inside them, its custom hardware.

    RLinf finds a node's robots on the node itself; here every item is declared once, by the
    first group of its type that holds its node (items no group of their type holds are
    unreachable in RLinf too and are left out). A group whose type is None counts nodes, which
    ``ignore_hardware`` states whatever hardware its nodes have.
    """
    declared: set[tuple[str, int]] = set()
    configs = []
    for group in groups:
        nodes = _group_nodes(group)
        if not nodes:
            continue  # RLinf drops empty groups too
        entry: dict[str, Any] = {"label": str(group.label), "node_ranks": nodes}
        hardware_type = group.hardware_type
        if hardware_type is None:
            entry["ignore_hardware"] = True
        elif str(hardware_type) in custom:
            entry.update(_declare_items(str(hardware_type), nodes, custom[str(hardware_type)], declared))
        else:
            entry["hardware_type"] = str(hardware_type)
        env_configs = [_env_config(env) for env in getattr(group, "env_configs", None) or ()]
        if env_configs:
            entry["env_configs"] = env_configs
        configs.append(entry)
    return configs


def _group_nodes(group: Any) -> list[int]:
    ranks = getattr(group, "node_ranks", None)
    if ranks is None:
        ranks = [node.node_rank for node in group.nodes]
    return sorted({int(rank) for rank in ranks})


def _declare_items(
    hardware_type: str, nodes: list[int], per_node: dict[int, list[str]], declared: set[tuple[str, int]]
) -> dict[str, Any]:
    """``hardware`` declaring the not yet declared items of ``nodes``, or just the type."""
    items: list[dict[str, Any]] = []
    for node in nodes:
        if node in per_node and (hardware_type, node) not in declared:
            declared.add((hardware_type, node))
            items.extend({"node_rank": node, "item": index, "model": model} for index, model in enumerate(per_node[node]))
    if not items:
        return {"hardware_type": hardware_type}
    return {"hardware": {"type": hardware_type, "configs": items}}


def _env_config(env: Any) -> dict[str, Any]:
    """RLinf's ``NodeGroupEnvConfig`` (or its dict form) as a plain env_configs entry."""
    if isinstance(env, Mapping):
        return dict(env)
    entry: dict[str, Any] = {"node_ranks": env.node_ranks}
    if getattr(env, "env_vars", None):
        entry["env_vars"] = [dict(item) for item in env.env_vars]
    if getattr(env, "python_interpreter_path", None) is not None:
        entry["python_interpreter_path"] = str(env.python_interpreter_path)
    return entry
