"""The ``cluster:`` config section read once into typed values (node counts, per-node values, groups).

The section is RLinf's ``cluster:`` section plus this library's own keys. RLinf keeps other
settings there that do not decide where anything runs (profiling, tracing, network emulation,
dynamic-scheduler policies); they are accepted and ignored, and so is any other key RLinf would
ignore, unless it looks like a misspelling of a known key (``num_gpu_per_node``).

RLinf configs state no GPU count: RLinf reads it from the hardware. A section without
``num_gpus_per_node`` gets :data:`ASSUMED_GPUS_PER_NODE` on every node, never silently: an
:class:`AssumedGpuCountWarning` says so, since a node with no GPU (a robot's) would otherwise be
planned with devices 0-7.

:func:`parse_layout` reads the section (or ``Cluster(...)``'s keyword arguments, which take the
same values) into a :class:`~solver_placement._cluster.layout.ClusterLayout`, once: this package
is the only place a raw ``cluster:`` mapping is read (``schema_groups`` reads its node groups,
``schema_topology`` its ``gpu_topology``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from operator import itemgetter
from typing import Any

import numpy as np

from solver_placement._cluster.layout import ClusterLayout
from solver_placement._cluster.schema_groups import ENV_KEYS as ENV_KEYS
from solver_placement._cluster.schema_groups import GROUP_KEYS as GROUP_KEYS
from solver_placement._cluster.schema_groups import group_properties, parse_labels, parse_node_groups
from solver_placement._cluster.schema_topology import parse_gpu_topology, restated_topology
from solver_placement._config import check_keys, gigabytes, positive_int, require_mapping, text
from solver_placement._constants import DEFAULT_ACCELERATOR_TYPE
from solver_placement._errors import PlacementConfigError, counted, shown
from solver_placement._limits import check

#: GPUs per node a ``cluster:`` section that states none is given (RLinf's usual node).
ASSUMED_GPUS_PER_NODE = 8


class AssumedGpuCountWarning(UserWarning):
    """A cluster was read from a config that states no ``num_gpus_per_node``, so each node was
    given :data:`ASSUMED_GPUS_PER_NODE` GPUs. RLinf configs never state the count (RLinf reads it
    from the hardware), so a plan made from one alone may give GPUs to nodes that have none."""


def assumed_gpu_count(section: Mapping[str, Any]) -> int | None:
    """The GPUs per node a ``cluster:`` section gets without stating them, or None when it states
    them (or states no nodes either, which is refused as a missing ``num_nodes``)."""
    return ASSUMED_GPUS_PER_NODE if "num_nodes" in section and "num_gpus_per_node" not in section else None




#: Keys of ``cluster:`` that describe the cluster or are read by the placement front ends
#: (``auto_scheduler`` and ``use_pre_process_policy`` choose RLinf's AUTO model-parallel layout).
CLUSTER_KEYS = (
    "num_nodes",
    "num_gpus_per_node",
    "accelerator_type",
    "accelerator_model",
    "node_groups",
    "component_placement",
    "auto_scheduler",
    "use_pre_process_policy",
    "solver",
    "gpu_memory_gb",
    "node_labels",
    "gpu_topology",
    "free_gpus_only",
)
#: RLinf's other ``cluster:`` keys, accepted and ignored: what each one does in RLinf. Any key in
#: neither list is refused with the closest known key, so a typo never changes the cluster silently.
RLINF_IGNORED_KEYS = {
    "profiling": "wraps worker groups in a profiler (ClusterConfig.profiling; validate_cfg fills output_dir)",
    "nsight": "the older name of profiling (ClusterConfig docstring example)",
    "tracer": "timeline tracing of workers and runners (enable, output_file; validate_cfg fills output_file)",
    "net_emulation": "emulated delay and bandwidth between workers (enabled, crossdc_pairs, bandwidth_groups)",
    "use_wait_before_last_iter_policy": "dynamic scheduler: wait for rollout before the last actor iteration",
    "recreate_nccl_groups": "Megatron actor: rebuild NCCL groups before each weight sync (AUTO mode)",
    # dynamic-scheduler tuning in RLinf's auto_scheduler example configs (qwen2.5-*-dynamic*.yaml)
    "assign_policy": "dynamic scheduler: how freed GPUs are assigned (e.g. greedy)",
    "rollout_use_all_gpus": "dynamic scheduler: let rollout use every GPU at the start of a step",
    "monitor_interval": "dynamic scheduler: seconds between progress checks",
    "preprocess_threshold": "dynamic scheduler: when the pre-process policy hands GPUs back",
    "migrate_out_max_bs": "dynamic scheduler: largest batch migrated off a rollout instance",
    "fuse_rollout_inference_only": "dynamic scheduler: fuse only rollout and inference",
}

def cluster_part(plain: dict[str, Any]) -> dict[str, Any]:
    """The ``cluster:`` mapping of a plain config: under ``cluster:`` in a whole job config, else
    the config itself (a bare section). The one place this is told apart."""
    if "cluster" in plain and "num_nodes" not in plain:
        return require_mapping(plain["cluster"], "cluster")
    return plain


def section_kwargs(section: dict[str, Any]) -> dict[str, Any]:
    """:class:`~solver_placement.Cluster` arguments of a plain ``cluster:`` section, checked."""
    check_keys(section, (*CLUSTER_KEYS, *RLINF_IGNORED_KEYS), "cluster", required=("num_nodes",))
    assumed = assumed_gpu_count(section)
    if assumed is not None:
        warnings.warn(
            AssumedGpuCountWarning(
                f"cluster.num_gpus_per_node is not stated, so {assumed} GPUs per node are assumed (RLinf reads the count "
                "from the hardware): state num_gpus_per_node (a count, or one per node), or read the live cluster "
                "(Cluster.from_ray(), or --ray ADDRESS on the command line)"
            ),
            stacklevel=2,
        )
    return {
        "num_nodes": section["num_nodes"],
        "num_gpus_per_node": section.get("num_gpus_per_node", ASSUMED_GPUS_PER_NODE),
        "accelerator_type": section.get("accelerator_type", DEFAULT_ACCELERATOR_TYPE),
        "accelerator_model": section.get("accelerator_model"),
        "node_groups": section.get("node_groups") or [],
        "gpu_memory_gb": section.get("gpu_memory_gb"),
        "node_labels": section.get("node_labels"),
        "gpu_topology": section.get("gpu_topology"),
        "free_gpus_only": section.get("free_gpus_only", False),
    }


def parse_layout(stated: Mapping[str, Any], base: ClusterLayout | None = None) -> ClusterLayout:
    """The typed cluster of ``Cluster(...)``'s keyword values (``stated`` holds every key), or of
    the keys a section states over the ``base`` cluster (the others are ``base``'s).

    Checked in the order a config states them, so the first error reported is the first wrong
    key; a value stated once for every node is read once (its errors name entry ``[0]``).
    """
    num_nodes = base.num_nodes if base is not None and "num_nodes" not in stated else positive_int(stated["num_nodes"], "cluster.num_nodes")

    def field(key: str, read: Callable[[Any, int], Any], none_as: Any = None) -> tuple[tuple[Any, ...], bool]:
        """(one value per node, whether stated once), from ``stated`` or else from ``base``."""
        where = f"cluster.{key}"
        if base is not None and key not in stated:
            values, shared = getattr(base, _ATTRIBUTES[key]), key in base.shared
            return tuple(per_node(values[0] if shared else values, num_nodes, where)), shared
        raw = none_as if stated[key] is None and none_as is not None else stated[key]
        values = per_node(raw, num_nodes, where)
        if not isinstance(raw, (list, tuple)):
            return (read(values[0], 0),) * num_nodes, True
        return read_each(values, read), False

    gpus, gpus_shared = field("num_gpus_per_node", lambda g, i: positive_int(g, f"cluster.num_gpus_per_node[{i}]", allow_zero=True))
    types, types_shared = field("accelerator_type", lambda t, i: text(t, f"cluster.accelerator_type[{i}]"))
    models, models_shared = field("accelerator_model", lambda m, i: None if m is None else text(m, f"cluster.accelerator_model[{i}]"))
    raw_groups = stated.get("node_groups") or []
    groups, raws = parse_node_groups(raw_groups, num_nodes, np.array(gpus, dtype=np.int64), base.groups if base is not None else ())
    memory, memory_shared = field("gpu_memory_gb", lambda m, i: None if m is None else gigabytes(m, f"cluster.gpu_memory_gb[{i}]", allow_zero=False))
    labels, labels_shared = field("node_labels", lambda item, i: parse_labels(item, f"cluster.node_labels[{i}]"), none_as={})
    groups = [group_properties(group, raw) for group, raw in zip(groups, raws)]
    if base is not None and "gpu_topology" not in stated:
        topology, topology_shared = restated_topology(base.gpu_topology, "gpu_topology" in base.shared, gpus)
    else:
        topology, topology_shared = parse_gpu_topology(stated["gpu_topology"], gpus)
    free = base.free_gpus_only if base is not None and "free_gpus_only" not in stated else _free_gpus_only(stated["free_gpus_only"], topology)
    shared = {"num_gpus_per_node": gpus_shared, "accelerator_type": types_shared, "accelerator_model": models_shared,
              "gpu_memory_gb": memory_shared, "node_labels": labels_shared, "gpu_topology": topology_shared}  # fmt: skip
    return ClusterLayout(
        num_nodes, gpus, types, models, tuple(groups), memory, labels, topology, free, frozenset(key for key, once in shared.items() if once)
    )


def overlay_section(base: ClusterLayout, section: Mapping[str, Any]) -> ClusterLayout:
    """A config's ``cluster:`` section over ``base`` (a cluster read from a live Ray): every key the
    section states replaces the base's, its node groups follow the base's. Checked as any
    ``cluster:`` section is."""
    check_keys(section, (*CLUSTER_KEYS, *RLINF_IGNORED_KEYS), "cluster")
    stated = {key: section[key] for key in _ATTRIBUTES if key in section}
    stated["node_groups"] = list(section.get("node_groups") or [])
    return parse_layout(stated, base)


#: The per-node keys of a section and the :class:`ClusterLayout` field holding each.
_ATTRIBUTES = {
    "num_nodes": "num_nodes",
    "num_gpus_per_node": "gpus",
    "accelerator_type": "accelerator_types",
    "accelerator_model": "accelerator_models",
    "gpu_memory_gb": "gpu_memory_gb",
    "node_labels": "node_labels",
    "gpu_topology": "gpu_topology",
    "free_gpus_only": "free_gpus_only",
}


def _free_gpus_only(value: Any, gpu_topology: object) -> bool:
    """``cluster.free_gpus_only``: a bool, and never with ``gpu_topology``, whose NUMA nodes and EGL
    indices are per device id, which a position among the free GPUs is not."""
    if not isinstance(value, bool):
        raise PlacementConfigError(f"cluster.free_gpus_only must be true or false, not {shown(value)}")
    if value and gpu_topology is not None:
        raise PlacementConfigError(
            "cluster.free_gpus_only numbers each node's free GPUs 0, 1, ... whichever devices they are, so "
            "cluster.gpu_topology (stated per device id) cannot describe them: give one or the other"
        )
    return value


def read_each(values: list[Any], read: Callable[[Any, int], Any]) -> tuple[Any, ...]:
    """``read(value, index)`` of each value in turn, as a per-node list states them; a list of
    exact scalars (65,536 nodes' GPU counts or memory: a few distinct values) reads each distinct
    value once, at its first index, in the order of first indices, so the first value refused
    is the one a reading in turn refuses (same type and equal, same reading: 1 and 1.0 and true
    are three values)."""
    if not set(map(type, values)) <= _HASHABLE_SCALARS:
        return tuple(read(value, i) for i, value in enumerate(values))
    keys = list(zip(map(type, values), values))
    first = dict(zip(reversed(keys), range(len(keys) - 1, -1, -1)))  # each key's first index
    read_once = {key: read(key[1], index) for key, index in sorted(first.items(), key=itemgetter(1))}
    return tuple(map(read_once.__getitem__, keys))


#: Value types :func:`read_each` reads once per distinct value.
_HASHABLE_SCALARS = frozenset({int, float, str, bool, type(None)})


def per_node(value: Any, num_nodes: int, where: str) -> list[Any]:
    """Expand a scalar to one value per node, or check a per-node list's length.

    The node count is checked against ``max_nodes`` here, before the first per-node list of a
    cluster is made (``num_nodes: 10000000`` used to take 34 s and 5 GB to build).
    """
    check("max_nodes", num_nodes, "cluster.num_nodes", "the number of nodes")
    if isinstance(value, (list, tuple)):
        if len(value) != num_nodes:
            raise PlacementConfigError(f"{where} lists {counted(len(value), 'value')} but the cluster has {counted(num_nodes, 'node')}")
        return list(value)
    return [value] * num_nodes


