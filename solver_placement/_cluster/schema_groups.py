"""Reading ``cluster.node_groups`` (the values are in ``layout``): labels, node ranks, custom
hardware and each group's software environment, checked in the order the config states them so
the first error reported is the first wrong key.

The hardware limits are checked again whenever a cluster is built (:func:`check_group_limits`):
a derived cluster (one more node, more GPUs) may exceed them where its source did not.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from solver_placement._cluster.alike_configs import alike_configs
from solver_placement._cluster.layout import EnvConfig, GroupSpec, HardwareItems
from solver_placement._cluster.ranks import format_ranks, is_all, parse_rank_list, rank_ranges, ranks_within
from solver_placement._cluster.worker_env import check_env_var
from solver_placement._config import check_keys, gigabytes, require_mapping, text
from solver_placement._constants import ACCELERATOR, NODE, RESERVED_LABELS
from solver_placement._errors import PlacementConfigError, counted, shown
from solver_placement._limits import check, current, exceeded
from solver_placement._limits.reading import CONFIGS_PER_CHECK, check_reading

GROUP_KEYS = ("label", "node_ranks", "hardware", "hardware_type", "ignore_hardware", "env_configs", "gpu_memory_gb", "labels")
ENV_KEYS = ("node_ranks", "env_vars", "python_interpreter_path")


def parse_node_groups(
    configs: Any, num_nodes: int, gpus_per_node: np.ndarray, base: Sequence[GroupSpec] = ()
) -> tuple[list[GroupSpec], list[Mapping[str, Any] | None]]:
    """``cluster.node_groups`` after the ``base`` groups (those of a cluster a section is laid
    over), in order, each with its raw mapping (None for a base group) for :func:`group_properties`.

    The cluster's accelerator counts are checked against the limits first: this is the last step
    before the hardware tables are allocated.
    """
    check_hardware_counts(gpus_per_node, "cluster.num_gpus_per_node", "accelerators")
    if not isinstance(configs, Sequence) or isinstance(configs, str):
        raise PlacementConfigError("cluster.node_groups must be a list of mappings")
    groups: list[GroupSpec] = []
    raws: list[Mapping[str, Any] | None] = []
    declared_by: dict[str, dict[int, str]] = {}
    for group in base:
        admit_group(_within(group, num_nodes), groups, declared_by)
        raws.append(None)
    for index, raw in enumerate(configs, start=len(base)):
        group, mapping = _parse_group(raw, index, num_nodes)
        admit_group(group, groups, declared_by)
        raws.append(mapping)
    _check_item_totals(groups, gpus_per_node, num_nodes)
    return groups, raws


def admit_group(group: GroupSpec, groups: list[GroupSpec], declared_by: dict[str, dict[int, str]]) -> None:
    """Append ``group`` to ``groups`` unless its label is taken or its hardware is another group's.

    ``declared_by`` holds, per hardware type, the group declaring it on each node: a group's
    items are recorded at once (one C-speed update for 655,360 robots), and only a
    group that meets another's names the first of its items that does."""
    if any(group.label == other.label for other in groups):
        raise PlacementConfigError(f"cluster.node_groups: label {group.label!r} is used twice; labels must be unique")
    if group.custom_type is not None and group.items:
        kind, nodes = group.custom_type, group.items.node_ranks
        owners = declared_by.setdefault(kind, {})
        if not owners.keys().isdisjoint(nodes):  # another group's: the labels are unique
            node = next(node for node in nodes if node in owners)
            raise PlacementConfigError(
                f"node group {group.label!r}: {kind} hardware on node {node} is already declared by group {owners[node]!r} "
                "(Cannot have multiple hardware configs of the same type for the same node_rank in different node groups)"
            )
        owners.update(dict.fromkeys(nodes, group.label))
    groups.append(group)


def group_properties(group: GroupSpec, raw: Mapping[str, Any] | None) -> GroupSpec:
    """The group with its ``gpu_memory_gb`` and ``labels`` read (after the cluster-level values,
    as the config's order of checks has it); a base group already holds them."""
    if raw is None:
        return group
    where = f"node group {raw.get('label')!r}"
    memory = None if raw.get("gpu_memory_gb") is None else gigabytes(raw["gpu_memory_gb"], f"{where}: gpu_memory_gb", allow_zero=False)
    return replace(group, gpu_memory_gb=memory, labels=parse_labels(raw.get("labels") or {}, f"{where}: labels"))


def parse_labels(value: Any, where: str) -> dict[str, str]:
    """Topology labels: a mapping of names to text."""
    if type(value) is dict and set(map(type, value)) <= {str} and set(map(type, value.values())) <= {str}:
        return dict(value)  # the common labels (a node's rack), read 65,536 times a cluster: as text() would give them
    mapping = require_mapping(value, where)
    return {key: text(item, f"{where}.{key}") for key, item in mapping.items()}


def group_mapping(raw: Any, index: int) -> dict[str, Any]:
    """One raw entry of ``cluster.node_groups`` as a mapping, or the refusal naming its position."""
    return require_mapping(raw, f"cluster.node_groups[{index}]")


def parse_label(value: Any, index: int) -> str:
    """A node group's label: text, not reserved, non-empty and without a comma."""
    label = text(value, f"cluster.node_groups[{index}]: label")
    where = f"node group {label!r}"
    if label in RESERVED_LABELS:
        raise PlacementConfigError(f"{where}: the label {label!r} is reserved (reserved labels: cluster, node)")
    if not label.strip() or "," in label:
        raise PlacementConfigError(f"{where}: a label must be non-empty and must not contain a comma")
    return label


def check_group_limits(groups: Sequence[GroupSpec], gpus_per_node: np.ndarray, num_nodes: int) -> None:
    """Every hardware limit of a cluster, in the order a config stating it is checked."""
    check_hardware_counts(gpus_per_node, "cluster.num_gpus_per_node", "accelerators")
    for group in groups:
        if group.custom_type is not None:
            _check_config_count(len(group.items), len(group.node_ranks), f"node group {group.label!r}")
    _check_item_totals(groups, gpus_per_node, num_nodes)


def _check_item_totals(groups: Sequence[GroupSpec], gpus_per_node: np.ndarray, num_nodes: int) -> None:
    items = [node for group in groups for node in group.items.node_ranks]
    check_hardware_counts(np.bincount(np.array(items, dtype=np.int64), minlength=num_nodes), "cluster.node_groups: hardware", "custom hardware items")
    check("max_hardware_items", int(gpus_per_node.sum()) + len(items) + num_nodes, "cluster", "the number of hardware items (accelerators, custom items and nodes)")


def _check_config_count(configs: int, nodes: int, where: str) -> None:
    """A group's hardware configs within the limits: in all, and on its busiest node at least."""
    check("max_hardware_items", configs, f"{where}: hardware.configs", "the number of hardware configs")
    if configs > current().max_items_per_node * nodes:  # each names a node: one holds too many
        busiest = f"at least {-(-configs // nodes)} ({counted(configs, 'config')} on {counted(nodes, 'node')})"
        raise exceeded("max_items_per_node", busiest, f"{where}: hardware.configs", "the number of items of its busiest node")


def _within(group: GroupSpec, num_nodes: int) -> GroupSpec:
    """A base group on a cluster of ``num_nodes`` nodes, checked as its config would be: its ranks
    must name nodes (``all``: every node), its hardware and env configs nodes of the group."""
    where = f"node group {group.label!r}"
    ranges = group.stated_ranges()
    nodes = tuple(ranks_within(ranges, num_nodes, "node_ranks", where).tolist())
    if group.custom_type is not None:
        _check_config_count(len(group.items), len(nodes), where)
    members = frozenset(nodes)
    for position, node in enumerate(group.items.node_ranks):
        if node not in members:
            raise PlacementConfigError(_outside_group(where, position, node))
    envs = []
    for position, env in enumerate(group.env_configs):
        outside = sorted(set(env.node_ranks) - set(nodes)) if position not in group.env_all else []
        if outside:
            raise PlacementConfigError(_env_outside_group(f"{where}: env_configs[{position}]", outside[0]))
        envs.append(replace(env, node_ranks=nodes) if position in group.env_all else env)
    return replace(group, node_ranks=nodes, env_configs=tuple(envs))


def _outside_group(where: str, position: int, node: int) -> str:
    """The refusal of a hardware config on a node outside its group."""
    return f"{where}: hardware.configs[{position}] names node_rank {node}, which is not in the group's node_ranks (must be within node_ranks)"


def _env_outside_group(here: str, node: int) -> str:
    """The refusal of an env config naming a node outside its group."""
    return f"{here}: node {node} is not in the group's node_ranks (must be a subset of node_ranks)"


def check_hardware_counts(per_node_counts: np.ndarray, where: str, noun: str) -> None:
    """Refuse more than ``max_items_per_node`` items on one node or ``max_hardware_items`` in all."""
    if per_node_counts.size:
        busiest = int(per_node_counts.argmax())
        check("max_items_per_node", int(per_node_counts[busiest]), f"{where}[{busiest}]", f"the number of {noun} of node {busiest}")
        check("max_hardware_items", int(per_node_counts.sum()), where, f"the number of {noun} of the cluster")


def _parse_group(raw: Any, index: int, num_nodes: int) -> tuple[GroupSpec, dict[str, Any]]:
    """One entry of ``cluster.node_groups`` (its memory and labels are read later), and its mapping."""
    group = group_mapping(raw, index)
    check_keys(group, GROUP_KEYS, f"cluster.node_groups[{index}]", required=("label", "node_ranks"))
    label = parse_label(group["label"], index)
    where = f"node group {label!r}"
    ranges = rank_ranges(group["node_ranks"], "node_ranks", where)
    nodes = tuple(ranks_within(ranges, num_nodes, "node_ranks", where).tolist())
    ignore = group.get("ignore_hardware", False)
    if not isinstance(ignore, bool):
        raise PlacementConfigError(f"{where}: ignore_hardware must be true or false, not {shown(ignore)}")
    hardware = group.get("hardware")
    custom_type: str | None = None
    items = HardwareItems()
    stated_type: str | None = None
    if hardware is not None:
        if ignore:
            raise PlacementConfigError(
                f"{where}: 'hardware' cannot be combined with ignore_hardware: true "
                "(Cannot specify hardware when ignore_hardware is set to True)"
            )
        if "hardware_type" in group:
            raise PlacementConfigError(f"{where}: give either 'hardware' or 'hardware_type', not both (hardware_type should not be specified)")
        custom_type, items = _parse_hardware(hardware, nodes, where)
    elif not ignore and "hardware_type" in group:
        stated_type = text(group["hardware_type"], f"{where}: hardware_type")
    env_configs = _parse_env_configs(group.get("env_configs") or [], nodes, where)
    env_all = frozenset(position for position, env in enumerate(group.get("env_configs") or []) if is_all(env["node_ranks"]))
    spec = GroupSpec(label, nodes, custom_type, items, stated_type, ignore, env_configs, ranges=ranges, env_all=env_all)
    return spec, group


def _parse_hardware(hardware: Any, nodes: tuple[int, ...], where: str) -> tuple[str, HardwareItems]:
    """A group's ``hardware``: its type and one item per config, each config on a node of the group."""
    spec = require_mapping(hardware, f"{where}: hardware")
    check_keys(spec, ("type", "configs"), f"{where}: hardware", required=("type",))
    hardware_type = text(spec["type"], f"{where}: hardware.type").strip()
    if not hardware_type or hardware_type in (ACCELERATOR, NODE):
        raise PlacementConfigError(f"{where}: hardware type {hardware_type!r} is reserved or empty")
    configs = spec.get("configs") or []
    if not isinstance(configs, list):
        raise PlacementConfigError(f"{where}: hardware.configs must be a list of mappings")
    _check_config_count(len(configs), len(nodes), where)
    members = frozenset(nodes)  # one look-up per config: a scan of the group's nodes made 16,384 nodes' robots quadratic
    alike = alike_configs(configs, members, where)
    if alike is not None:
        return hardware_type, alike
    return hardware_type, _items_one_by_one(configs, members, where)


def _items_one_by_one(configs: list[Any], members: frozenset[int], where: str) -> HardwareItems:
    """The hardware items of a group's configs, each checked in turn: the first wrong config is
    the one refused, whatever it is wrong in."""
    nodes, keys, values = [], [], []
    seen: set[Hashable] = set()
    for position, raw in enumerate(configs):
        if position % CONFIGS_PER_CHECK == 0:
            check_reading(f"reading the hardware configs of {where}")
        config = require_mapping(raw, f"{where}: hardware.configs[{position}]")
        node = config.get("node_rank")
        if isinstance(node, bool) or not isinstance(node, int):
            raise PlacementConfigError(f"{where}: hardware.configs[{position}] needs an integer node_rank")
        if node not in members:
            raise PlacementConfigError(_outside_group(where, position, node))
        fingerprint = _fingerprint(config)
        if fingerprint in seen:
            raise PlacementConfigError(f"{where}: hardware.configs[{position}] duplicates an earlier config (Duplicate hardware configs found)")
        seen.add(fingerprint)
        nodes.append(node)
        keys.append(tuple(key for key in config if key != "node_rank"))
        values.append(tuple(value for key, value in config.items() if key != "node_rank"))
    return HardwareItems(tuple(nodes), tuple(keys), tuple(values))


def _fingerprint(config: dict[str, Any]) -> Hashable:
    """What two hardware configs share exactly when they are duplicates: equal as JSON text with
    sorted keys (1, 1.0 and true differ; so do 0.0 and -0.0; two NaNs are equal). A config of
    exact scalars (a robot's ``robot_ip``, serials: the common one) gets a tuple of its keys, value
    types and values (floats by their text, which JSON writes alike), a quarter of the cost of
    the JSON text every other config gets; the two forms never compare equal, and a config of
    scalars never equals one holding a list or mapping as JSON either."""
    if set(map(type, config.values())) <= _SCALARS:
        return tuple(sorted((key, type(value), repr(value) if type(value) is float else value) for key, value in config.items()))
    return json.dumps(config, sort_keys=True, default=repr)  # plain values: equal configs, equal text


#: The value types a hardware config's fingerprint keeps as they are (exact types: their equality is JSON's).
_SCALARS = frozenset({str, int, float, bool, type(None)})


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
            raise PlacementConfigError(_env_outside_group(here, outside[0]))
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
            check_env_var(key, env[key], where)
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


