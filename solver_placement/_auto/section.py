"""Reading and validating the ``auto_placement:`` keys, up to one cost table per component.

Every rule about what the user may write lives here (keys, bounds, which pipeline is allowed),
so :mod:`solver_placement._auto.problem` only composes tables it can trust. Keys and their
defaults are listed in ``docs/cost_model.md``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from solver_placement._auto.costs import CostTable, megatron_table, profile_table, rollout_table
from solver_placement._cluster.cluster import Cluster
from solver_placement._config import ConfigSource, check_keys, positive_int, require_mapping
from solver_placement._errors import PlacementConfigError, shown
from solver_placement._job import Job, load_job

REASONING = "reasoning"
EMBODIED = "embodied"
#: Largest cluster the auto placer accepts; keeps the tie-break weights inside 64-bit integers.
MAX_AUTO_GPUS = 1 << 20
DEFAULT_TOP_K = 5
#: Most candidates one call reports (each one is a further solve).
MAX_TOP_K = 100
#: GPUs per node when a node count is given without ``num_gpus_per_node`` (the cluster section's default).
DEFAULT_GPUS_PER_NODE = 8

_COMMON_KEYS = ("task", "num_gpus", "num_nodes", "num_gpus_per_node", "costs", "model_parallel", "profiled_gpus", "top_k", "solver")
_REASONING_KEYS = (
    *_COMMON_KEYS,
    "rollout_batch_size",
    "group_size",
    "n_minibatches",
    "max_running_requests",
    "recompute_logprobs",
    "pipeline",
)
_EMBODIED_KEYS = (*_COMMON_KEYS, "env_num", "profiles")

#: What :func:`read_tables` returns: the pipelined components (source first), every
#: component's table, and the batches one iteration pushes through the pipeline.
Tables = tuple[tuple[str, ...], dict[str, CostTable], int]


def read_section(source: ConfigSource | Job) -> tuple[str, dict[str, Any]]:
    """The task and its auto-placement keys, checked against the task's key list.

    Either the keys at the top level, or a job config with an ``auto_placement:`` section beside
    its ``cluster:`` (the collocated run the costs were measured on), whose node count and GPUs
    per node are used unless the section gives them.
    """
    config = load_job(source).config
    if "auto_placement" in config:
        config = _section_with_cluster(config)
    task = config.get("task", REASONING)
    if task not in (REASONING, EMBODIED):
        raise PlacementConfigError(f"task must be {REASONING!r} or {EMBODIED!r}, not {shown(task)}")
    check_keys(config, _REASONING_KEYS if task == REASONING else _EMBODIED_KEYS, f"auto placement ({task})")
    return task, config


def _section_with_cluster(config: Mapping[str, Any]) -> dict[str, Any]:
    """The ``auto_placement:`` section, sized from the job's ``cluster:`` when it does not say."""
    section = require_mapping(config["auto_placement"], "auto_placement")
    if any(key in section for key in ("num_gpus", "num_nodes")):
        return section
    cluster = require_mapping(config.get("cluster", {}), "cluster")
    if "num_nodes" not in cluster:
        raise PlacementConfigError("auto_placement: give num_gpus or num_nodes, or cluster.num_nodes for the cluster size")
    per_node = cluster.get("num_gpus_per_node", DEFAULT_GPUS_PER_NODE)
    if not isinstance(per_node, int) or isinstance(per_node, bool):
        raise PlacementConfigError(
            f"auto_placement: cluster.num_gpus_per_node is {shown(per_node)}; the auto placer needs one GPU count for every "
            "node (or give num_gpus in the section)"
        )
    return {**section, "num_nodes": cluster["num_nodes"], "num_gpus_per_node": per_node}


def cluster_size(config: Mapping[str, Any]) -> tuple[int, int | None]:
    """Total GPUs and GPUs per node (None when only ``num_gpus`` is given)."""
    per_node = config.get("num_gpus_per_node")
    if "num_nodes" in config:
        if "num_gpus" in config:
            raise PlacementConfigError("give either num_gpus or num_nodes (with num_gpus_per_node), not both")
        nodes = positive_int(config["num_nodes"], "num_nodes", maximum=MAX_AUTO_GPUS)
        per_node = positive_int(DEFAULT_GPUS_PER_NODE if per_node is None else per_node, "num_gpus_per_node", maximum=MAX_AUTO_GPUS)
        total = nodes * per_node
    elif "num_gpus" in config:
        total = positive_int(config["num_gpus"], "num_gpus", maximum=MAX_AUTO_GPUS)
        if per_node is not None:
            per_node = positive_int(per_node, "num_gpus_per_node", maximum=MAX_AUTO_GPUS)
            if total % per_node:
                raise PlacementConfigError(f"num_gpus = {total} is not a whole number of nodes of num_gpus_per_node = {per_node}")
    else:
        raise PlacementConfigError("missing num_gpus (or num_nodes and num_gpus_per_node): the cluster size")
    if total > MAX_AUTO_GPUS:
        raise PlacementConfigError(f"the cluster has {total} GPUs, above the auto placer's limit of {MAX_AUTO_GPUS}")
    return total, per_node


def size_of(cluster: Cluster) -> tuple[int, int]:
    """Total GPUs and GPUs per node of a given cluster, which the auto placer needs alike on
    every node (its splits are whole nodes or GPU blocks of one node size)."""
    counts = sorted({int(count) for count in cluster.gpus_per_node})
    if len(counts) != 1 or not counts[0]:
        raise PlacementConfigError(f"auto placement needs one GPU count on every node; the given cluster has {', '.join(map(str, counts))} GPUs per node")
    total = counts[0] * cluster.num_nodes
    if total > MAX_AUTO_GPUS:
        raise PlacementConfigError(f"the cluster has {total} GPUs, above the auto placer's limit of {MAX_AUTO_GPUS}")
    return total, counts[0]


def read_top_k(value: Any) -> int:
    """The number of candidates to report."""
    return positive_int(value, "top_k", maximum=MAX_TOP_K)


def read_tables(task: str, config: Mapping[str, Any], num_gpus: int) -> Tables:
    """The task's pipeline and cost tables on a cluster of ``num_gpus``."""
    return _reasoning_tables(config, num_gpus) if task == REASONING else _embodied_tables(config, num_gpus)


# ----------------------------------------------------------------------------------- reasoning
def _reasoning_tables(config: Mapping[str, Any], num_gpus: int) -> Tables:
    """rollout -> [inference ->] actor (or the given ``pipeline``): rollout's table, Megatron's for the rest."""
    pipeline = _reasoning_pipeline(config)
    for key in ("rollout_batch_size", "group_size", "max_running_requests"):
        if key not in config:
            raise PlacementConfigError(f"missing {key}: the rollout and Megatron tables depend on it")
    batch = positive_int(config["rollout_batch_size"], "rollout_batch_size")
    group = positive_int(config["group_size"], "group_size")
    minibatches = positive_int(config.get("n_minibatches", 1), "n_minibatches")
    requests = positive_int(config["max_running_requests"], "max_running_requests")
    costs = _costs(config, pipeline)
    mp = _named_ints(config, "model_parallel", pipeline, _reasoning_mp_defaults(config, pipeline))
    profiled = _named_ints(config, "profiled_gpus", pipeline, {name: num_gpus for name in pipeline})
    tables: dict[str, CostTable] = {}
    for name in pipeline:
        if name == "rollout":
            tables[name] = rollout_table(
                name, costs[name], profiled_gpus=profiled[name], model_parallel=mp[name],
                rollout_batch_size=batch, group_size=group, max_running_requests=requests,
            )  # fmt: skip
        else:
            tables[name] = megatron_table(
                name, costs[name], profiled_gpus=profiled[name], model_parallel=mp[name], num_gpus=num_gpus,
                rollout_batch_size=batch, group_size=group, n_minibatches=minibatches,
            )  # fmt: skip
    return pipeline, tables, batch


def _reasoning_pipeline(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The stages in order: ``pipeline`` if given, else RLinf's, which depends on ``recompute_logprobs``."""
    recompute = config.get("recompute_logprobs", True)
    if not isinstance(recompute, bool):
        raise PlacementConfigError(f"recompute_logprobs must be true or false, not {shown(recompute)}")
    default = ("rollout", "inference", "actor") if recompute else ("rollout", "actor")
    given = config.get("pipeline", list(default))
    if not isinstance(given, list) or any(not isinstance(name, str) for name in given) or len(set(given)) != len(given):
        raise PlacementConfigError(f"pipeline must be a list of distinct component names, not {shown(given)}")
    pipeline = tuple(given)
    if pipeline[0] != "rollout" or "actor" not in pipeline or len(pipeline) < 2:
        raise PlacementConfigError(f"pipeline {list(pipeline)} must start with rollout and include actor")
    if not recompute and ("inference" in pipeline or "inference" in (config.get("costs") or {})):
        raise PlacementConfigError(
            "inference: an inference stage needs recompute_logprobs: true (it recomputes the log-probs); without it "
            "the rollout's log-probs are used and there is no inference cost"
        )
    return pipeline


def _reasoning_mp_defaults(config: Mapping[str, Any], pipeline: Sequence[str]) -> dict[str, int]:
    """Model-parallel size 1 everywhere, except that inference defaults to the actor's (RLinf's rule)."""
    defaults = {name: 1 for name in pipeline}
    given = config.get("model_parallel", {})
    if isinstance(given, Mapping) and "inference" in pipeline and "inference" not in given and "actor" in given:
        defaults["inference"] = positive_int(given["actor"], "model_parallel.actor")
    return defaults


# ------------------------------------------------------------------------------------ embodied
def _embodied_tables(config: Mapping[str, Any], num_gpus: int) -> Tables:
    """env -> rollout pipelined from their profiles; the actor's Megatron table on all GPUs."""
    if "env_num" not in config:
        raise PlacementConfigError("missing env_num: the number of environments the env and rollout tables split")
    env_num = positive_int(config["env_num"], "env_num")
    profiles = require_mapping(config.get("profiles"), "profiles") if "profiles" in config else {}
    check_keys(profiles, ("env", "rollout"), "profiles", required=("env", "rollout"))
    costs = _costs(config, ("actor",))
    mp = _named_ints(config, "model_parallel", ("actor", "rollout"), {"actor": 1, "rollout": 1})
    profiled = _named_ints(config, "profiled_gpus", ("actor",), {"actor": num_gpus})
    tables = {
        "env": profile_table("env", _profile(profiles["env"], "profiles.env"), env_num=env_num, num_gpus=num_gpus, model_parallel=1, divisible=True),
        "rollout": profile_table(
            "rollout", _profile(profiles["rollout"], "profiles.rollout"), env_num=env_num, num_gpus=num_gpus,
            model_parallel=mp["rollout"], divisible=False,
        ),  # fmt: skip
        "actor": megatron_table(
            "actor", costs["actor"], profiled_gpus=profiled["actor"], model_parallel=mp["actor"], num_gpus=num_gpus,
            rollout_batch_size=1, group_size=1, n_minibatches=1,
        ),  # fmt: skip
    }
    if tables["actor"].time(num_gpus) is None:
        raise PlacementConfigError(
            f"profiled_gpus.actor = {profiled['actor']}: the embodied actor runs on all {num_gpus} GPUs, so its cost "
            "must be profiled there"
        )
    return ("env", "rollout"), tables, 1


def _profile(value: Any, where: str) -> dict[int, float]:
    """Profiled points ``envs per instance: seconds`` (YAML may give the keys as strings)."""
    section = require_mapping(value, where)
    if not section:
        raise PlacementConfigError(f"{where} needs at least one profiled point (envs per instance: seconds)")
    points: dict[int, float] = {}
    for key, seconds in section.items():
        text = str(key).strip()
        if isinstance(key, bool) or not text.isdigit():
            raise PlacementConfigError(f"{where}: key {key!r} must be a whole number of envs per instance")
        points[positive_int(int(text), f"{where} key")] = _seconds(seconds, f"{where}.{key}")
    return points


# -------------------------------------------------------------------------------------- values
def _seconds(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise PlacementConfigError(f"{where} must be a positive number of seconds, not {shown(value)}")
    return float(value)


def _named_ints(config: Mapping[str, Any], key: str, names: Sequence[str], defaults: Mapping[str, int]) -> dict[str, int]:
    """``config[key]`` as one positive int per name: an int for all, or a mapping over ``names``."""
    value = config.get(key, {})
    if isinstance(value, int) and not isinstance(value, bool):
        return {name: positive_int(value, key, maximum=MAX_AUTO_GPUS) for name in names}
    section = require_mapping(value, key)
    check_keys(section, names, key)
    return {name: positive_int(section.get(name, defaults[name]), f"{key}.{name}", maximum=MAX_AUTO_GPUS) for name in names}


def _costs(config: Mapping[str, Any], names: Sequence[str]) -> dict[str, float]:
    """The measured collocated seconds per iteration, one required per name."""
    section = require_mapping(config.get("costs"), "costs") if "costs" in config else {}
    check_keys(section, names, "costs", required=names)
    return {name: _seconds(section[name], f"costs.{name}") for name in names}
