"""Node groups and the parsing of the ``cluster:`` config section (node counts, per-node values, groups).

The section is RLinf's ``cluster:`` section plus this library's own keys. RLinf keeps other
settings there that do not decide where anything runs (profiling, tracing, network emulation,
dynamic-scheduler policies); they are accepted and ignored, and so is any other key RLinf would
ignore, unless it looks like a misspelling of a known key (``num_gpu_per_node``).

RLinf configs state no GPU count: RLinf reads it from the hardware. A section without
``num_gpus_per_node`` gets :data:`ASSUMED_GPUS_PER_NODE` on every node, never silently: an
:class:`AssumedGpuCountWarning` says so, since a node with no GPU (a robot's) would otherwise be
planned with devices 0-7.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from solver_placement._cluster.ranks import format_ranks, is_all, parse_rank_list
from solver_placement._config import check_keys, gigabytes, require_mapping, text
from solver_placement._constants import ACCELERATOR, DEFAULT_ACCELERATOR_TYPE, NODE, RESERVED_LABELS
from solver_placement._errors import PlacementConfigError, shown
from solver_placement._limits import check, current, exceeded

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


@dataclass(frozen=True)
class EnvConfig:
    """Software environment of some nodes of a group (used when launching workers)."""

    node_ranks: tuple[int, ...]
    env_vars: Mapping[str, str] = field(default_factory=dict)
    python_interpreter_path: str | None = None


@dataclass(frozen=True)
class HardwareItem:
    """One non-accelerator hardware item (e.g. a robot) declared in a node group's config."""

    type: str
    node_rank: int
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NodeGroup:
    """A labelled set of nodes and the kind of resource its ranks count.

    ``hardware_type`` is ``"Accelerator"``, a custom type name, or ``None`` when the group's
    resources are its nodes (no accelerators, ``ignore_hardware``, or the reserved ``node`` label).
    """

    label: str
    node_ranks: tuple[int, ...]
    hardware_type: str | None
    env_configs: tuple[EnvConfig, ...] = ()

    @property
    def resource_noun(self) -> str:
        if self.hardware_type is None:
            return "nodes"
        return "GPUs" if self.hardware_type == ACCELERATOR else f"{self.hardware_type} items"


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
GROUP_KEYS = ("label", "node_ranks", "hardware", "hardware_type", "ignore_hardware", "env_configs", "gpu_memory_gb", "labels")
ENV_KEYS = ("node_ranks", "env_vars", "python_interpreter_path")


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


def node_properties(
    gpu_memory_gb: Any, node_labels: Any, groups: Sequence[Mapping[str, Any]], group_nodes: Sequence[tuple[int, ...]], num_nodes: int
) -> tuple[list[float | None], list[dict[str, str]]]:
    """Per node: GPU memory (GB, None if unknown) and topology labels (e.g. rack, nvlink_domain).

    Cluster-level values (a number or a per-node list; a per-node list of label mappings) come
    first; a node group's ``gpu_memory_gb`` and ``labels`` then apply to its nodes.
    """
    memory = [None if m is None else gigabytes(m, f"cluster.gpu_memory_gb[{i}]", allow_zero=False) for i, m in enumerate(per_node(gpu_memory_gb, num_nodes, "cluster.gpu_memory_gb"))]
    raw_labels = per_node(node_labels if node_labels is not None else {}, num_nodes, "cluster.node_labels")
    labels = [_labels(item, f"cluster.node_labels[{i}]") for i, item in enumerate(raw_labels)]
    for group, nodes in zip(groups, group_nodes):
        where = f"node group {group.get('label')!r}"
        for node in nodes:
            if group.get("gpu_memory_gb") is not None:
                memory[node] = gigabytes(group["gpu_memory_gb"], f"{where}: gpu_memory_gb", allow_zero=False)
            labels[node].update(_labels(group.get("labels") or {}, f"{where}: labels"))
    return memory, labels


def _labels(value: Any, where: str) -> dict[str, str]:
    mapping = require_mapping(value, where)
    return {key: text(item, f"{where}.{key}") for key, item in mapping.items()}


def per_node(value: Any, num_nodes: int, where: str) -> list[Any]:
    """Expand a scalar to one value per node, or check a per-node list's length.

    The node count is checked against ``max_nodes`` here, before the first per-node list of a
    cluster is made (``num_nodes: 10000000`` used to take 34 s and 5 GB to build).
    """
    check("max_nodes", num_nodes, "cluster.num_nodes", "the number of nodes")
    if isinstance(value, (list, tuple)):
        if len(value) != num_nodes:
            raise PlacementConfigError(f"{where} lists {len(value)} values but the cluster has {num_nodes} nodes")
        return list(value)
    return [value] * num_nodes


def parse_node_groups(
    configs: Any, num_nodes: int, gpus_per_node: np.ndarray
) -> tuple[list[NodeGroup], list[HardwareItem]]:
    """Parse ``cluster.node_groups`` into groups (config order) and their custom hardware items.

    The cluster's accelerator counts are checked against the limits first: this is the last step
    before the hardware tables are allocated.
    """
    check_hardware_counts(gpus_per_node, "cluster.num_gpus_per_node", "accelerators")
    if not isinstance(configs, Sequence) or isinstance(configs, str):
        raise PlacementConfigError("cluster.node_groups must be a list of mappings")
    groups: list[NodeGroup] = []
    items: list[HardwareItem] = []
    declared_by: dict[tuple[str, int], str] = {}
    for index, raw in enumerate(configs):
        group, group_items = _parse_group(raw, index, num_nodes, gpus_per_node)
        if any(group.label == other.label for other in groups):
            raise PlacementConfigError(f"cluster.node_groups: label {group.label!r} is used twice; labels must be unique")
        for item in group_items:
            owner = declared_by.setdefault((item.type, item.node_rank), group.label)
            if owner != group.label:
                raise PlacementConfigError(
                    f"node group {group.label!r}: {item.type} hardware on node {item.node_rank} is already declared by group {owner!r} "
                    "(Cannot have multiple hardware configs of the same type for the same node_rank in different node groups)"
                )
        groups.append(group)
        items.extend(group_items)
    check_hardware_counts(np.bincount(np.array([item.node_rank for item in items], dtype=np.int64), minlength=num_nodes), "cluster.node_groups: hardware", "custom hardware items")
    check("max_hardware_items", int(gpus_per_node.sum()) + len(items) + num_nodes, "cluster", "the number of hardware items (accelerators, custom items and nodes)")
    return groups, items


def check_hardware_counts(per_node_counts: np.ndarray, where: str, noun: str) -> None:
    """Refuse more than ``max_items_per_node`` items on one node or ``max_hardware_items`` in all."""
    if per_node_counts.size:
        busiest = int(per_node_counts.argmax())
        check("max_items_per_node", int(per_node_counts[busiest]), f"{where}[{busiest}]", f"the number of {noun} of node {busiest}")
        check("max_hardware_items", int(per_node_counts.sum()), where, f"the number of {noun} of the cluster")


def _parse_group(
    raw: Any, index: int, num_nodes: int, gpus_per_node: np.ndarray
) -> tuple[NodeGroup, list[HardwareItem]]:
    where = f"cluster.node_groups[{index}]"
    group = require_mapping(raw, where)
    check_keys(group, GROUP_KEYS, where, required=("label", "node_ranks"))
    label = text(group["label"], f"{where}: label")
    where = f"node group {label!r}"
    if label in RESERVED_LABELS:
        raise PlacementConfigError(f"{where}: the label {label!r} is reserved (reserved labels: cluster, node)")
    if not label.strip() or "," in label:
        raise PlacementConfigError(f"{where}: a label must be non-empty and must not contain a comma")
    nodes = tuple(int(n) for n in parse_rank_list(group["node_ranks"], "node_ranks", where, available=num_nodes))
    ignore = group.get("ignore_hardware", False)
    if not isinstance(ignore, bool):
        raise PlacementConfigError(f"{where}: ignore_hardware must be true or false, not {shown(ignore)}")
    hardware = group.get("hardware")
    items: list[HardwareItem] = []
    if hardware is not None:
        if ignore:
            raise PlacementConfigError(
                f"{where}: 'hardware' cannot be combined with ignore_hardware: true "
                "(Cannot specify hardware when ignore_hardware is set to True)"
            )
        if "hardware_type" in group:
            raise PlacementConfigError(f"{where}: give either 'hardware' or 'hardware_type', not both (hardware_type should not be specified)")
        hardware_type, items = _parse_hardware(hardware, nodes, where)
    elif ignore:
        hardware_type = None
    elif "hardware_type" in group:
        hardware_type = text(group["hardware_type"], f"{where}: hardware_type")
    else:
        hardware_type = ACCELERATOR if any(gpus_per_node[n] for n in nodes) else None
    env_configs = _parse_env_configs(group.get("env_configs") or [], nodes, where)
    return NodeGroup(label, nodes, hardware_type, env_configs), items


def _parse_hardware(hardware: Any, nodes: tuple[int, ...], where: str) -> tuple[str, list[HardwareItem]]:
    spec = require_mapping(hardware, f"{where}: hardware")
    check_keys(spec, ("type", "configs"), f"{where}: hardware", required=("type",))
    hardware_type = text(spec["type"], f"{where}: hardware.type").strip()
    if not hardware_type or hardware_type in (ACCELERATOR, NODE):
        raise PlacementConfigError(f"{where}: hardware type {hardware_type!r} is reserved or empty")
    configs = spec.get("configs") or []
    if not isinstance(configs, list):
        raise PlacementConfigError(f"{where}: hardware.configs must be a list of mappings")
    check("max_hardware_items", len(configs), f"{where}: hardware.configs", "the number of hardware configs")
    if len(configs) > current().max_items_per_node * len(nodes):  # each names a node: one holds too many
        busiest = f"at least {-(-len(configs) // len(nodes))} ({len(configs)} configs on {len(nodes)} node(s))"
        raise exceeded("max_items_per_node", busiest, f"{where}: hardware.configs", "the number of items of its busiest node")
    items = []
    seen: set[str] = set()
    for position, raw in enumerate(configs):
        config = require_mapping(raw, f"{where}: hardware.configs[{position}]")
        node = config.get("node_rank")
        if isinstance(node, bool) or not isinstance(node, int):
            raise PlacementConfigError(f"{where}: hardware.configs[{position}] needs an integer node_rank")
        if node not in nodes:
            raise PlacementConfigError(
                f"{where}: hardware.configs[{position}] names node_rank {node}, which is not in the group's node_ranks (must be within node_ranks)"
            )
        fingerprint = json.dumps(config, sort_keys=True, default=repr)  # plain values: equal configs, equal text
        if fingerprint in seen:
            raise PlacementConfigError(f"{where}: hardware.configs[{position}] duplicates an earlier config (Duplicate hardware configs found)")
        seen.add(fingerprint)
        metadata = {key: value for key, value in config.items() if key != "node_rank"}
        items.append(HardwareItem(hardware_type, node, metadata))
    return hardware_type, items


def _parse_env_configs(raw: Any, nodes: tuple[int, ...], where: str) -> tuple[EnvConfig, ...]:
    """The group's env_configs; their ``node_ranks`` name nodes of the group (``all``: every one)."""
    if not isinstance(raw, list):
        raise PlacementConfigError(f"{where}: env_configs must be a list of mappings")
    result = []
    covered: set[int] = set()
    for position, item in enumerate(raw):
        here = f"{where}: env_configs[{position}]"
        config = require_mapping(item, here)
        check_keys(config, ENV_KEYS, here, required=("node_ranks",))
        if is_all(config["node_ranks"]):
            env_nodes = nodes
        else:
            env_nodes = tuple(int(n) for n in parse_rank_list(config["node_ranks"], "node_ranks", here))
        outside = sorted(set(env_nodes) - set(nodes))
        if outside:
            raise PlacementConfigError(f"{here}: node {outside[0]} is not in the group's node_ranks (must be a subset of node_ranks)")
        overlap = sorted(covered & set(env_nodes))
        if overlap:
            raise PlacementConfigError(
                f"{here}: node {overlap[0]} already has an env_config in this group (Node rank {overlap[0]} in env_config is duplicated)"
            )
        covered.update(env_nodes)
        interpreter = config.get("python_interpreter_path")
        env_vars = _parse_env_vars(config.get("env_vars") or {}, f"{here} (node_ranks {format_ranks(env_nodes)})")
        result.append(EnvConfig(env_nodes, env_vars, None if interpreter is None else _env_text(interpreter, here)))
    return tuple(result)


def _parse_env_vars(raw: Any, where: str) -> dict[str, str]:
    """Accept RLinf's list of one-key mappings or a plain mapping."""
    entries = raw if isinstance(raw, list) else [raw]
    env: dict[str, str] = {}
    for entry in entries:
        mapping = require_mapping(entry, f"{where}: env_vars")
        for key, value in mapping.items():
            _check_env_name(key, where)
            if key in env:
                raise PlacementConfigError(f"{where}: env var {shown(key)} is set twice")
            env[key] = _env_value(value, f"{where}: env var {shown(key)}")
    return env


def _check_env_name(name: str, where: str) -> None:
    """Refuse a name no OS can set, while the config is read.

    The OS stores a variable as ``NAME=VALUE`` ending at a NUL byte, so a name that is empty or
    holds ``=`` or NUL cannot be set; Ray would fail to start the workers and the launch would
    only end at its timeout, far from the config line at fault.
    """
    problem = "is empty" if not name else "contains '='" if "=" in name else "contains a NUL byte" if "\0" in name else None
    if problem is not None:
        raise PlacementConfigError(
            f"{where}: env var name {shown(name)} {problem}; no OS accepts such a name (it must be non-empty, without '=' or NUL)"
        )


def _env_value(value: Any, where: str) -> str:
    """An env var's value as the process sees it, refused while the config is read when it holds
    a NUL byte (the OS ends the value there, so the launch could not set it). The message gives
    the NUL's position, not the value: env values are often tokens that must not reach a log."""
    result = _env_text(value, where)
    nul = result.find("\0")
    if nul >= 0:
        raise PlacementConfigError(
            f"{where}: its value contains a NUL byte (character {nul} of {len(result)}), which no OS accepts in an environment variable"
        )
    return result


def _env_text(value: Any, where: str) -> str:
    """An environment value as the text a process sees (YAML's ``1`` is ``"1"``); an int too long
    to print is refused rather than crashing ``str``."""
    return text(value, where) if isinstance(value, int) and not isinstance(value, bool) else str(value)


