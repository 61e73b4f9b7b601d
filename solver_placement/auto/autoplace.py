"""Cost-model auto placement: RLinf's auto-placement toolkit, searched exactly by CP-SAT.

From per-component costs measured in collocated mode (seconds per iteration), batch sizes and
model-parallel sizes, choose between collocation (every component on every GPU, time sharing)
and disaggregation (contiguous GPU blocks in pipeline order, pipelining) and the GPU split,
minimising the modelled iteration time. The cost tables and their validity rules are RLinf's
(``docs/cost_model.md`` writes every formula out). RLinf's toolkit searches them by a memoised
recursion over two-way cuts that keeps one best result per sub-workflow, never tries a 1-GPU
sink and drops mixed layouts after the fact; here every split is one assignment of a CP-SAT
model (each component's GPU count and per-batch time tied by a table constraint over exactly
its allowed rows, the pipeline bottleneck by ``AddMaxEquality``), so the optimum is proven over
all of them. The best few candidates come from re-solving with the earlier ones forbidden.

The answer is a ready ``cluster.component_placement`` block (:meth:`AutoPlacement.to_yaml`)
plus the predicted time of each candidate.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ortools.sat.python import cp_model
from tabulate import tabulate

from solver_placement.constants import DEFAULT_TIME_LIMIT_S
from solver_placement.config import ConfigSource, check_keys, load_config, positive_int, require_mapping
from solver_placement.errors import InfeasiblePlacementError, PlacementConfigError, PlacementError, SolverTimeoutError

COLLOCATED = "collocated"
DISAGGREGATED = "disaggregated"
REASONING = "reasoning"
EMBODIED = "embodied"

#: CP-SAT works on integers: every per-batch time and every collocated total is rounded to this
#: many seconds (1 ns; coarser only if the slowest modelled time would not fit in ``MAX_UNITS``).
#: See ``docs/cost_model.md`` for the resulting error bound.
TIME_UNIT_S = 1e-9
MAX_UNITS = 1 << 61
#: Largest cluster the auto placer accepts; keeps the tie-break weights inside 64-bit integers.
MAX_AUTO_GPUS = 1 << 20
DEFAULT_TOP_K = 5

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
_SOLVER_KEYS = ("time_limit_s", "num_workers", "seed")


# ---------------------------------------------------------------------------------- cost tables
@dataclass(frozen=True)
class CostTable:
    """Seconds per iteration of one component running alone on ``g`` GPUs, for every allowed ``g``.

    A GPU count missing from ``times`` is not allowed (RLinf's validity rules decide which are).
    One iteration is ``batches`` equal batches; a batch costs ``time / batches``, the unit the
    pipeline formula works in.
    """

    name: str
    kind: str
    model_parallel: int
    times: Mapping[int, float]
    batches: int

    def allowed(self) -> tuple[int, ...]:
        """The allowed GPU counts, ascending."""
        return tuple(sorted(self.times))

    def time(self, gpus: int) -> float | None:
        """Seconds per iteration on ``gpus`` GPUs (None when that count is not allowed)."""
        return self.times.get(gpus)

    def batch_time(self, gpus: int) -> float | None:
        """Seconds per batch on ``gpus`` GPUs (None when that count is not allowed)."""
        value = self.times.get(gpus)
        return None if value is None else value / self.batches


def megatron_gpu_counts(
    num_gpus: int, model_parallel: int, rollout_batch_size: int, group_size: int, n_minibatches: int
) -> tuple[int, ...]:
    """GPU counts ``dp * mp`` a Megatron component may use: each training step's sequences split
    evenly into whole groups over the ``dp`` replicas.

    RLinf's rule: with ``per_step = rollout_batch_size * group_size / n_minibatches`` sequences per
    optimizer step, ``dp`` is valid when ``per_step % (dp * group_size) == 0``.
    """
    sequences = rollout_batch_size * group_size
    if sequences % n_minibatches:
        raise PlacementConfigError(
            f"n_minibatches: rollout_batch_size x group_size = {rollout_batch_size} x {group_size} = {sequences} "
            f"sequences must split into n_minibatches = {n_minibatches} equal steps"
        )
    per_step = sequences // n_minibatches
    return tuple(dp * model_parallel for dp in range(1, num_gpus // model_parallel + 1) if per_step % (dp * group_size) == 0)


def megatron_table(
    name: str,
    cost_s: float,
    *,
    profiled_gpus: int,
    model_parallel: int,
    num_gpus: int,
    rollout_batch_size: int,
    group_size: int,
    n_minibatches: int,
) -> CostTable:
    """RLinf's Megatron (actor / inference) scaling curve.

    On the profiled GPU count the measured cost; on a valid ``g`` below it, with ``s = profiled / g``,
    ``cost * s / (1 + clamp(s / 10, 0.1, 0.9))``: fewer GPUs are slower, but less than linearly
    (a smaller data-parallel world communicates less). Counts above the profiled one are not
    modelled.
    """
    times = {profiled_gpus: float(cost_s)}
    for gpus in megatron_gpu_counts(num_gpus, model_parallel, rollout_batch_size, group_size, n_minibatches):
        if gpus < profiled_gpus:
            scale = profiled_gpus / gpus
            times[gpus] = cost_s * scale / (1 + min(0.9, max(0.1, scale / 10)))
    return CostTable(name, "megatron", model_parallel, times, rollout_batch_size)


def rollout_saturation(max_running_requests: int) -> int:
    """Requests one rollout engine serves at once without queueing: RLinf's
    ``ceil(max_running_requests * 0.9)`` from 128 requests up (queue wait), else all of them.

    Computed in integers (``ceil(9 m / 10)``), so 130 gives 117, not the 118 a float product gives.
    """
    return -(-max_running_requests * 9 // 10) if max_running_requests >= 128 else max_running_requests


def rollout_table(
    name: str,
    cost_s: float,
    *,
    profiled_gpus: int,
    model_parallel: int,
    rollout_batch_size: int,
    group_size: int,
    max_running_requests: int,
) -> CostTable:
    """RLinf's rollout (SGLang / vLLM) curve over multiples of the engine size ``mp``.

    While the ``g / mp`` engines can hold every sequence of the batch at once (``(g / mp) *
    saturation >= rollout_batch_size * group_size``) the time is the measured one (generation is
    latency bound); below that it grows as ``cost * profiled / g``.
    """
    saturation = rollout_saturation(max_running_requests)
    sequences = rollout_batch_size * group_size
    times = {profiled_gpus: float(cost_s)}
    for gpus in range(model_parallel, profiled_gpus, model_parallel):
        engines = gpus // model_parallel
        times[gpus] = float(cost_s) if engines * saturation >= sequences else cost_s * profiled_gpus / gpus
    return CostTable(name, "rollout", model_parallel, times, rollout_batch_size)


@dataclass(frozen=True)
class ProfileFit:
    """The curve through profiled (envs per instance -> seconds) points with the best R^2.

    Candidates (RLinf's list): power ``a x^b`` and exponential ``a e^(b x)`` (least squares on
    ``log y``), logarithmic ``a + b ln x`` and quadratic ``a + b x + c x^2`` (least squares on
    ``y``); R^2 is measured on ``y``. A profile of one point, or of equal values, is a constant.
    """

    kind: str
    coefficients: tuple[float, ...]
    r_squared: float

    def __call__(self, x: float) -> float:
        c = self.coefficients
        if self.kind == "constant":
            return c[0]
        if self.kind == "power":
            return c[0] * x ** c[1]
        if self.kind == "exponential":
            return c[0] * math.exp(min(c[1] * x, 700.0))
        if self.kind == "logarithmic":
            return c[0] + c[1] * math.log(x)
        return c[0] + c[1] * x + c[2] * x * x

    @classmethod
    def of(cls, profile: Mapping[int, float]) -> ProfileFit:
        """Fit ``profile`` (at least one point, keys and values positive)."""
        xs = np.array(sorted(profile), dtype=float)
        ys = np.array([profile[int(x)] for x in xs], dtype=float)
        total = float(np.sum((ys - ys.mean()) ** 2))
        if len(xs) == 1 or total == 0.0:
            return cls("constant", (float(ys[0]),), 1.0)
        fits: list[ProfileFit] = []
        b, log_a = np.polyfit(np.log(xs), np.log(ys), 1)
        fits.append(cls("power", (math.exp(log_a), float(b)), 0.0))
        b, log_a = np.polyfit(xs, np.log(ys), 1)
        fits.append(cls("exponential", (math.exp(log_a), float(b)), 0.0))
        b, a = np.polyfit(np.log(xs), ys, 1)
        fits.append(cls("logarithmic", (float(a), float(b)), 0.0))
        if len(xs) >= 3:
            c2, c1, c0 = np.polyfit(xs, ys, 2)
            fits.append(cls("quadratic", (float(c0), float(c1), float(c2)), 0.0))
        scored = [
            cls(fit.kind, fit.coefficients, 1.0 - float(np.sum((ys - np.array([fit(x) for x in xs])) ** 2)) / total)
            for fit in fits
        ]
        return max(scored, key=lambda fit: fit.r_squared)  # first of equals: the order above


def profile_table(
    name: str,
    profile: Mapping[int, float],
    *,
    env_num: int,
    num_gpus: int,
    model_parallel: int,
    divisible: bool,
) -> CostTable:
    """An embodied env / rollout table from profiled seconds per envs-per-instance.

    ``g`` GPUs run ``g / mp`` instances; the busiest holds ``ceil(env_num / instances)`` envs.
    Allowed when that is at most the largest profiled size (no extrapolation beyond it), every
    instance has an env, and, for ``divisible`` (the env workers), the envs split evenly. The
    value is the profiled one, else :class:`ProfileFit`'s; a non-positive fitted value is not
    allowed. An iteration is ``env_num`` batches (RLinf's per-batch unit).
    """
    fit = ProfileFit.of(profile)
    largest = max(profile)
    times: dict[int, float] = {}
    for gpus in range(model_parallel, num_gpus + 1, model_parallel):
        instances = gpus // model_parallel
        if instances > env_num or (divisible and env_num % instances):
            continue
        per_instance = -(-env_num // instances)
        if per_instance > largest:
            continue
        value = float(profile[per_instance]) if per_instance in profile else fit(per_instance)
        if math.isfinite(value) and value > 0:
            times[gpus] = value
    return CostTable(name, "profile", model_parallel, times, env_num)


# ------------------------------------------------------------------------------- the problem
@dataclass(frozen=True)
class AutoProblem:
    """A parsed auto-placement input: the cost tables and how they compose.

    ``pipeline`` lists the components that get contiguous GPU blocks when disaggregated (source
    first); ``resident`` ones run on every GPU in both modes (the embodied actor).
    ``pipeline_batches`` batches flow through the pipeline per iteration.
    """

    task: str
    num_gpus: int
    gpus_per_node: int | None
    pipeline: tuple[str, ...]
    resident: tuple[str, ...]
    tables: Mapping[str, CostTable]
    pipeline_batches: int
    top_k: int
    solver: Mapping[str, Any]

    @classmethod
    def from_config(cls, source: ConfigSource) -> AutoProblem:
        """Parse a YAML path, a DictConfig or a mapping (keys in ``docs/cost_model.md``).

        Either the auto-placement keys at the top level, or a job config with an
        ``auto_placement:`` section beside its ``cluster:`` (the collocated run the costs were
        measured on), whose node count and GPUs per node are used unless the section gives them.
        """
        config = load_config(source)
        if "auto_placement" in config:
            config = _section_with_cluster(config)
        task = config.get("task", REASONING)
        if task not in (REASONING, EMBODIED):
            raise PlacementConfigError(f"task must be {REASONING!r} or {EMBODIED!r}, not {task!r}")
        check_keys(config, _REASONING_KEYS if task == REASONING else _EMBODIED_KEYS, f"auto placement ({task})")
        num_gpus, gpus_per_node = _cluster_size(config)
        top_k = positive_int(config.get("top_k", DEFAULT_TOP_K), "top_k", maximum=100)
        solver = _solver_options(config.get("solver", {}))
        if task == REASONING:
            pipeline, tables, batches = _reasoning_tables(config, num_gpus)
            resident: tuple[str, ...] = ()
        else:
            pipeline, tables, batches = _embodied_tables(config, num_gpus)
            resident = ("actor",)
        if (num_gpus + 1) ** (len(pipeline) - 1) > MAX_UNITS:
            raise PlacementConfigError(
                f"pipeline: {len(pipeline)} stages on {num_gpus} GPUs exceed the 64-bit range of the tie-break "
                "between equally fast splits; use fewer stages or GPUs"
            )
        problem = cls(task, num_gpus, gpus_per_node, pipeline, resident, tables, batches, top_k, solver)
        for name in pipeline:
            problem.alignment(name)
        return problem

    def alignment(self, name: str) -> int:
        """A disaggregated block of ``name`` must start at a multiple of this GPU rank.

        With the node size known, every model-parallel group stays inside one node (a group
        straddling two nodes is not placeable: a process never spans nodes). Unknown node size: 1.
        """
        mp, per_node = self.tables[name].model_parallel, self.gpus_per_node
        if per_node is None or mp == 1:
            return 1
        if mp <= per_node and per_node % mp == 0:
            return mp
        if mp > per_node and mp % per_node == 0:
            return per_node
        raise PlacementConfigError(
            f"model_parallel.{name}: groups of {mp} GPUs cannot tile nodes of num_gpus_per_node = {per_node} "
            "GPUs; one must be a multiple of the other"
        )

    def collocated_time(self) -> float | None:
        """Seconds per iteration with every component on all GPUs (time sharing: the sum)."""
        times = [self.tables[name].time(self.num_gpus) for name in (*self.pipeline, *self.resident)]
        return None if any(t is None for t in times) else float(sum(times))

    def disaggregated_time(self, gpus: Sequence[int]) -> float | None:
        """Seconds per iteration with ``gpus[k]`` GPUs for ``pipeline[k]`` (None if not allowed).

        Pipelining: the first batch passes every stage (warm-up, the sum of the per-batch times),
        then one batch leaves per bottleneck period: ``sum + max * (batches - 1)``; resident
        components add their all-GPU time.
        """
        if len(gpus) != len(self.pipeline) or sum(gpus) != self.num_gpus:
            return None
        batch: list[float] = []
        offset = 0
        for name, count in zip(self.pipeline, gpus, strict=True):
            value = self.tables[name].batch_time(count)
            if value is None or offset % self.alignment(name):
                return None
            batch.append(value)
            offset += count
        resident = [self.tables[name].time(self.num_gpus) for name in self.resident]
        if any(t is None for t in resident):
            return None
        return float(sum(batch) + max(batch) * (self.pipeline_batches - 1) + sum(resident))  # type: ignore[arg-type]

    def candidate(self, mode: str, gpus: Sequence[int] = ()) -> AutoCandidate:
        """The candidate for ``mode`` (and, disaggregated, the GPU counts in pipeline order)."""
        everyone = (*self.resident, *self.pipeline)
        if mode == COLLOCATED:
            total = self.collocated_time()
            if total is None:
                raise PlacementConfigError("collocation is not allowed: a component's table does not cover all GPUs")
            counts = {name: self.num_gpus for name in everyone}
            ranges = {name: (0, self.num_gpus - 1) for name in everyone}
            batch = {name: self.tables[name].batch_time(self.num_gpus) or 0.0 for name in self.pipeline}
            return AutoCandidate(self, COLLOCATED, counts, ranges, total, batch)
        total = self.disaggregated_time(gpus)
        if total is None:
            raise PlacementConfigError(f"{dict(zip(self.pipeline, gpus))} is not an allowed disaggregated split")
        counts = {name: self.num_gpus for name in self.resident}
        ranges = {name: (0, self.num_gpus - 1) for name in self.resident}
        offset = 0
        for name, count in zip(self.pipeline, gpus, strict=True):
            counts[name] = count
            ranges[name] = (offset, offset + count - 1)
            offset += count
        batch = {name: self.tables[name].batch_time(count) or 0.0 for name, count in zip(self.pipeline, gpus, strict=True)}
        return AutoCandidate(self, DISAGGREGATED, counts, ranges, total, batch)


def _section_with_cluster(config: Mapping[str, Any]) -> dict[str, Any]:
    """The ``auto_placement:`` section, sized from the job's ``cluster:`` when it does not say."""
    section = require_mapping(config["auto_placement"], "auto_placement")
    if any(key in section for key in ("num_gpus", "num_nodes")):
        return section
    cluster = require_mapping(config.get("cluster", {}), "cluster")
    if "num_nodes" not in cluster:
        raise PlacementConfigError("auto_placement: give num_gpus or num_nodes, or cluster.num_nodes for the cluster size")
    per_node = cluster.get("num_gpus_per_node", 8)
    if not isinstance(per_node, int) or isinstance(per_node, bool):
        raise PlacementConfigError(
            f"auto_placement: cluster.num_gpus_per_node is {per_node!r}; the auto placer needs one GPU count for every "
            "node (or give num_gpus in the section)"
        )
    return {**section, "num_nodes": cluster["num_nodes"], "num_gpus_per_node": per_node}


def _cluster_size(config: Mapping[str, Any]) -> tuple[int, int | None]:
    """Total GPUs and GPUs per node (None when only ``num_gpus`` is given)."""
    per_node = config.get("num_gpus_per_node")
    if "num_nodes" in config:
        if "num_gpus" in config:
            raise PlacementConfigError("give either num_gpus or num_nodes (with num_gpus_per_node), not both")
        nodes = positive_int(config["num_nodes"], "num_nodes", maximum=MAX_AUTO_GPUS)
        per_node = positive_int(8 if per_node is None else per_node, "num_gpus_per_node", maximum=MAX_AUTO_GPUS)
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


def _solver_options(value: Any) -> dict[str, Any]:
    section = require_mapping(value, "solver")
    check_keys(section, _SOLVER_KEYS, "solver")
    limit = section.get("time_limit_s", DEFAULT_TIME_LIMIT_S)
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not 0 < limit <= 86_400:
        raise PlacementConfigError(f"solver.time_limit_s must be a number of seconds in (0, 86400], not {limit!r}")
    return {
        "time_limit_s": float(limit),
        "num_workers": positive_int(section.get("num_workers", 1), "solver.num_workers", maximum=64),
        "seed": positive_int(section.get("seed", 0), "solver.seed", allow_zero=True, maximum=2**31 - 1),
    }


def _seconds(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise PlacementConfigError(f"{where} must be a positive number of seconds, not {value!r}")
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
    section = require_mapping(config.get("costs"), "costs") if "costs" in config else {}
    check_keys(section, names, "costs", required=names)
    return {name: _seconds(section[name], f"costs.{name}") for name in names}


def _reasoning_tables(config: Mapping[str, Any], num_gpus: int) -> tuple[tuple[str, ...], dict[str, CostTable], int]:
    recompute = config.get("recompute_logprobs", True)
    if not isinstance(recompute, bool):
        raise PlacementConfigError(f"recompute_logprobs must be true or false, not {recompute!r}")
    default = ("rollout", "inference", "actor") if recompute else ("rollout", "actor")
    given = config.get("pipeline", list(default))
    if not isinstance(given, list) or any(not isinstance(name, str) for name in given) or len(set(given)) != len(given):
        raise PlacementConfigError(f"pipeline must be a list of distinct component names, not {given!r}")
    pipeline = tuple(given)
    if pipeline[0] != "rollout" or "actor" not in pipeline or len(pipeline) < 2:
        raise PlacementConfigError(f"pipeline {list(pipeline)} must start with rollout and include actor")
    if not recompute and ("inference" in pipeline or "inference" in (config.get("costs") or {})):
        raise PlacementConfigError(
            "inference: an inference stage needs recompute_logprobs: true (it recomputes the log-probs); without it "
            "the rollout's log-probs are used and there is no inference cost"
        )
    for key in ("rollout_batch_size", "group_size", "max_running_requests"):
        if key not in config:
            raise PlacementConfigError(f"missing {key}: the rollout and Megatron tables depend on it")
    batch = positive_int(config["rollout_batch_size"], "rollout_batch_size")
    group = positive_int(config["group_size"], "group_size")
    minibatches = positive_int(config.get("n_minibatches", 1), "n_minibatches")
    requests = positive_int(config["max_running_requests"], "max_running_requests")
    costs = _costs(config, pipeline)
    mp_defaults = {name: 1 for name in pipeline}
    given_mp = config.get("model_parallel", {})
    if isinstance(given_mp, Mapping) and "inference" in pipeline and "inference" not in given_mp and "actor" in given_mp:
        mp_defaults["inference"] = positive_int(given_mp["actor"], "model_parallel.actor")  # RLinf: inference as the actor
    mp = _named_ints(config, "model_parallel", pipeline, mp_defaults)
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


def _profile(value: Any, where: str) -> dict[int, float]:
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


def _embodied_tables(config: Mapping[str, Any], num_gpus: int) -> tuple[tuple[str, ...], dict[str, CostTable], int]:
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


# ---------------------------------------------------------------------------------- the answer
@dataclass(frozen=True)
class AutoCandidate:
    """One placement: its mode, GPUs and contiguous ranges per component, and predicted time.

    ``batch_times_s`` holds each pipelined component's per-batch seconds on its GPUs (the
    largest is the pipeline's bottleneck when disaggregated).
    """

    problem: AutoProblem = field(repr=False)
    mode: str
    gpus: Mapping[str, int]
    ranges: Mapping[str, tuple[int, int]]
    time_s: float
    batch_times_s: Mapping[str, float]

    def to_component_placement(self, reward_with: str | None = None) -> dict[str, str]:
        """The ``cluster.component_placement`` mapping for this candidate.

        Collocated: one key for every placed component (``actor,rollout: all``); a reasoning job's
        inference is then the actor's own recomputation and is not placed (RLinf refuses an
        inference component in collocated mode). Disaggregated: ``name: first-last`` in pipeline
        order. ``reward_with`` names a component whose GPUs the reward shares (RLinf's
        ModelParallelComponentPlacement requires a reward component).
        """
        if self.mode == COLLOCATED:
            names = [n for n in (*self.problem.resident, *self.problem.pipeline) if not (n == "inference" and self.problem.task == REASONING)]
            names.sort(key=lambda n: n != "actor")
            if reward_with is not None:
                _check_reward(reward_with, names)
                names.append("reward")
            return {",".join(names): "all"}
        mapping = {name: f"{first}-{last}" for name, (first, last) in self.ranges.items()}
        if reward_with is not None:
            _check_reward(reward_with, list(mapping))
            mapping["reward"] = mapping[reward_with]
        return mapping


def _check_reward(reward_with: str, names: Sequence[str]) -> None:
    if "reward" in names:
        raise PlacementConfigError("reward_with: the reward is a pipeline stage here and already placed")
    if reward_with not in names:
        raise PlacementConfigError(f"reward_with: {reward_with!r} is not placed here; choose one of {', '.join(names)}")


@dataclass(frozen=True)
class SearchStats:
    """How the first (best) solve went: status, objective and bound in seconds, wall time."""

    proven_optimal: bool
    objective_s: float
    bound_s: float
    solves: int
    wall_time_s: float

    @property
    def gap(self) -> float:
        """Relative optimality gap of the best candidate, (objective - bound) / objective."""
        return 0.0 if self.objective_s == 0 else (self.objective_s - self.bound_s) / self.objective_s


@dataclass(frozen=True)
class AutoPlacement:
    """The result of :func:`auto_place`: the best candidate first, then the next best ones."""

    problem: AutoProblem = field(repr=False)
    candidates: tuple[AutoCandidate, ...]
    stats: SearchStats

    @property
    def best(self) -> AutoCandidate:
        return self.candidates[0]

    @property
    def mode(self) -> str:
        return self.best.mode

    @property
    def gpus(self) -> Mapping[str, int]:
        return self.best.gpus

    @property
    def ranges(self) -> Mapping[str, tuple[int, int]]:
        return self.best.ranges

    @property
    def time_s(self) -> float:
        return self.best.time_s

    def to_component_placement(self, reward_with: str | None = None) -> dict[str, str]:
        """The best candidate's ``component_placement`` mapping (see :class:`AutoCandidate`)."""
        return self.best.to_component_placement(reward_with)

    def table(self) -> str:
        """The candidates as a text table: rank, mode, GPUs per component, predicted seconds."""
        names = (*self.problem.pipeline, *self.problem.resident)
        rows = [
            [rank, c.mode, *(c.gpus[name] for name in names), f"{c.time_s:.3f}"] for rank, c in enumerate(self.candidates, 1)
        ]
        return tabulate(rows, headers=["#", "mode", *names, "time (s)"], disable_numparse=True)

    def to_yaml(self, reward_with: str | None = None) -> str:
        """A ready ``cluster:`` block for the best candidate, the candidates table as comments."""
        problem = self.problem
        lines = [f"# auto placement ({problem.task}, {problem.num_gpus} GPUs): {self.mode}, predicted {self.time_s:.3f} s per iteration"]
        lines += [f"# {line}" for line in self.table().splitlines()]
        lines.append("cluster:")
        if problem.gpus_per_node is not None:
            lines += [f"  num_nodes: {problem.num_gpus // problem.gpus_per_node}", f"  num_gpus_per_node: {problem.gpus_per_node}"]
        lines.append("  component_placement:")
        lines += [f"    {key}: {value}" for key, value in self.to_component_placement(reward_with).items()]
        return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------- the search
def auto_place(
    source: AutoProblem | ConfigSource,
    *,
    top_k: int | None = None,
    time_limit_s: float | None = None,
    num_workers: int | None = None,
    seed: int | None = None,
) -> AutoPlacement:
    """Choose collocation or a disaggregated split minimising the modelled iteration time.

    Returns the proven-optimal candidate and the next ``top_k - 1`` best distinct ones, each
    found by re-solving with the earlier ones forbidden. Among equal modelled times collocation
    wins, then the split giving more GPUs to earlier pipeline stages. Raises
    :class:`PlacementConfigError` on bad input, :class:`InfeasiblePlacementError` when no GPU
    count satisfies the tables, :class:`SolverTimeoutError` when the time limit passes before
    any placement is found.
    """
    problem = source if isinstance(source, AutoProblem) else AutoProblem.from_config(source)
    options = dict(problem.solver)
    for key, value in (("time_limit_s", time_limit_s), ("num_workers", num_workers), ("seed", seed)):
        if value is not None:
            options[key] = value
    options = _solver_options(options)
    k = problem.top_k if top_k is None else positive_int(top_k, "top_k", maximum=100)
    return _Search(problem, options).run(k)


class _Search:
    """The CP-SAT model of one problem, re-solved once per candidate."""

    def __init__(self, problem: AutoProblem, options: Mapping[str, Any]) -> None:
        self.problem = problem
        self.options = options
        self.model = cp_model.CpModel()
        self.started = time.perf_counter()
        self.solves = 0
        self.collocated_forbidden = False
        self.unit_s = time_unit(problem)
        self._build()

    def _units(self, seconds: float) -> int:
        return int(round(seconds / self.unit_s))

    def _build(self) -> None:
        """Variables: ``collocated``; per pipelined component its GPU count ``g`` and per-batch
        time ``b``, tied by a table constraint over the allowed (count, time) pairs plus ``(0, 0)``
        for collocation (exact: no interpolation between table rows).

        Constraints: ``g = 0`` exactly when collocated; the counts fill the cluster; each block
        starts at a multiple of its alignment; ``bottleneck = max(b)``. Objective ``time`` (integer
        units): the collocated total, or ``sum(b) + (batches - 1) * bottleneck + resident``, one
        linear expression.
        """
        p, m = self.problem, self.model
        total = p.num_gpus
        self.collocated = m.new_bool_var("collocated")
        collocated_time = p.collocated_time()
        self.collocated_units = None if collocated_time is None else self._units(collocated_time)
        if self.collocated_units is None:
            m.add(self.collocated == 0)
        resident = [p.tables[name].time(total) for name in p.resident]
        resident_units = None if any(t is None for t in resident) else self._units(sum(resident))  # type: ignore[arg-type]
        if resident_units is None:
            m.add(self.collocated == 1)
        self.gpus: dict[str, cp_model.IntVar] = {}
        batch_vars: list[cp_model.IntVar] = []
        ceilings: list[int] = [0]
        offset: cp_model.LinearExprT = 0
        counts = fillable_counts(p)
        for name in p.pipeline:
            table = p.tables[name]
            rows = [(g, self._units(table.batch_time(g))) for g in counts[name]]  # type: ignore[arg-type]
            gpus = m.new_int_var_from_domain(cp_model.Domain.from_values([0, *(g for g, _ in rows)]), f"{name}_gpus")
            batch = m.new_int_var(0, max((u for _, u in rows), default=0), f"{name}_batch")
            m.add_allowed_assignments([gpus, batch], [(0, 0), *rows])
            m.add(gpus == 0).only_enforce_if(self.collocated)
            m.add(gpus >= 1).only_enforce_if(~self.collocated)
            step = p.alignment(name)
            if step > 1:
                m.add(offset == step * m.new_int_var(0, total // step, f"{name}_start"))
            offset = offset + gpus
            self.gpus[name] = gpus
            batch_vars.append(batch)
            ceilings.append(max((u for _, u in rows), default=0))
        m.add(offset == total - total * self.collocated)
        bottleneck = m.new_int_var(0, max(ceilings), "bottleneck")
        m.add_max_equality(bottleneck, batch_vars)
        objective = (
            sum(batch_vars)
            + (p.pipeline_batches - 1) * bottleneck
            + (self.collocated_units or 0) * self.collocated
            + (resident_units or 0) * (1 - self.collocated)
        )
        self.time = m.new_int_var(0, MAX_UNITS, "time")
        m.add(self.time == objective)
        m.minimize(self.time)

    def run(self, k: int) -> AutoPlacement:
        """Solve, record, forbid, repeat: the ``k`` best distinct placements, best first."""
        candidates: list[AutoCandidate] = []
        first: tuple[bool, float, float] | None = None
        for _ in range(k):
            solver, status = self._solve()
            if status == cp_model.INFEASIBLE:
                if not candidates:
                    raise self._infeasible()
                break
            if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                if not candidates:
                    raise SolverTimeoutError(
                        f"auto placement: no placement found within solver.time_limit_s = {self.options['time_limit_s']} s"
                    )
                break
            proven = status == cp_model.OPTIMAL
            if first is None:
                first = (proven, solver.objective_value * self.unit_s, solver.best_objective_bound * self.unit_s)
            mode, counts = self._tie_break(solver.value(self.time)) if proven else self._read(solver)
            candidates.append(self.problem.candidate(mode, counts))
            self._forbid(mode, counts)
            if not proven:
                break
        if first is None:
            raise PlacementError("internal error: the auto placement search ended without a result")
        stats = SearchStats(*first, self.solves, time.perf_counter() - self.started)
        return AutoPlacement(self.problem, tuple(candidates), stats)

    def _solve(self) -> tuple[cp_model.CpSolver, int]:
        solver = cp_model.CpSolver()
        params = solver.parameters
        params.max_time_in_seconds = max(self.options["time_limit_s"] - (time.perf_counter() - self.started), 0.01)
        params.random_seed = int(self.options["seed"])
        params.num_workers = int(self.options["num_workers"])
        params.interleave_search = params.num_workers > 1  # same answer whatever the worker count
        status = solver.solve(self.model)
        self.solves += 1
        if status == cp_model.MODEL_INVALID:
            raise PlacementError(f"internal error: the auto placement model is invalid: {self.model.validate()}")
        return solver, status

    def _tie_break(self, best: int) -> tuple[str, tuple[int, ...]]:
        """Among the placements of modelled time ``best`` (integer units): collocation if it is
        one, else the split with lexicographically most GPUs on the earlier stages.

        Solved with ``time`` and ``collocated`` pinned (their domains narrowed, then restored) and
        one weighted objective: weights ``(G + 1)^i`` make it lexicographic, the last stage's count
        being fixed by the others.
        """
        if self.collocated_units == best and not self.collocated_forbidden:
            return COLLOCATED, ()
        names = self.problem.pipeline
        base = self.problem.num_gpus + 1
        pinned = [(self.time, best), (self.collocated, 0)]
        saved = [list(self.model.proto.variables[var.index].domain) for var, _ in pinned]
        for var, value in pinned:
            domain = self.model.proto.variables[var.index].domain
            domain.clear()
            domain.extend([value, value])
        self.model.maximize(sum(base ** (len(names) - 2 - i) * self.gpus[name] for i, name in enumerate(names[:-1])))
        try:
            solver, status = self._solve()
        finally:
            for (var, _), domain in zip(pinned, saved, strict=True):
                self.model.proto.variables[var.index].domain.clear()
                self.model.proto.variables[var.index].domain.extend(domain)
            self.model.minimize(self.time)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            raise SolverTimeoutError(
                f"auto placement: the tie-break among equally fast splits ran out of solver.time_limit_s = {self.options['time_limit_s']} s"
            )
        return self._read(solver)

    def _read(self, solver: cp_model.CpSolver) -> tuple[str, tuple[int, ...]]:
        if solver.boolean_value(self.collocated):
            return COLLOCATED, ()
        return DISAGGREGATED, tuple(solver.value(self.gpus[name]) for name in self.problem.pipeline)

    def _forbid(self, mode: str, counts: tuple[int, ...]) -> None:
        """No-good: every later solve must find a different placement."""
        if mode == COLLOCATED:
            self.collocated_forbidden = True
            self.model.add(self.collocated == 0)
            return
        differs = []
        for name, count in zip(self.problem.pipeline, counts, strict=True):
            literal = self.model.new_bool_var(f"{name}_not_{count}")
            self.model.add(self.gpus[name] != count).only_enforce_if(literal)
            differs.append(literal)
        self.model.add_bool_or(differs)

    def _infeasible(self) -> InfeasiblePlacementError:
        p = self.problem
        conflicts = []
        missing = [name for name in (*p.pipeline, *p.resident) if p.tables[name].time(p.num_gpus) is None]
        if missing:
            conflicts.append(f"collocation: {', '.join(missing)} not modelled on all {p.num_gpus} GPUs")
        for name in p.pipeline:
            allowed = p.tables[name].allowed()
            shown = ", ".join(map(str, allowed[:12])) + (", ..." if len(allowed) > 12 else "")
            conflicts.append(f"{name}: allowed GPU counts {{{shown}}}, block start a multiple of {p.alignment(name)}")
        conflicts.append(f"disaggregation: one block per component, adding up to {p.num_gpus} GPUs")
        return InfeasiblePlacementError(
            "auto placement: no collocated or disaggregated placement satisfies the cost tables:\n  - " + "\n  - ".join(conflicts),
            conflicts,
        )


def fillable_counts(problem: AutoProblem) -> dict[str, list[int]]:
    """Per pipelined component, its allowed counts ``g`` for which the other components can take
    exactly the remaining ``G - g`` GPUs (one allowed count each).

    A sound domain filter, computed on bitsets of reachable sums (bit ``s`` set: some choice of
    counts adds up to ``s``) from both ends of the pipeline. No split is lost, and the big tables
    shrink to what can actually occur: 8192 GPUs with three Megatron stages of power-of-two
    counts leave about 300 of the rollout's 8189 counts. That keeps the CP-SAT model small.
    """
    total = problem.num_gpus
    mask = (1 << (total + 1)) - 1
    allowed = [[g for g in problem.tables[name].allowed() if g <= total] for name in problem.pipeline]

    def add(bits: int, counts: Sequence[int]) -> int:
        out = 0
        for g in counts:
            out |= bits << g
        return out & mask

    prefix = [1]
    for counts in allowed:
        prefix.append(add(prefix[-1], counts))
    suffix = [1]
    for counts in reversed(allowed):
        suffix.append(add(suffix[-1], counts))
    suffix.reverse()
    kept: dict[str, list[int]] = {}
    for i, name in enumerate(problem.pipeline):
        before, after = prefix[i], suffix[i + 1]
        if before.bit_count() > after.bit_count():
            before, after = after, before
        others = add(after, [s for s in range(total + 1) if before >> s & 1])
        kept[name] = [g for g in allowed[i] if others >> (total - g) & 1]
    return kept


def time_unit(problem: AutoProblem) -> float:
    """Seconds per CP-SAT time unit: 1 ns, or the smallest power of ten above it that keeps the
    largest modelled time (every stage at its slowest) within ``MAX_UNITS``."""
    slowest = [max(problem.tables[name].batch_time(g) or 0.0 for g in problem.tables[name].allowed()) for name in problem.pipeline]
    worst = sum(slowest) + max(slowest, default=0.0) * problem.pipeline_batches
    worst += sum(max(problem.tables[name].times.values()) for name in (*problem.pipeline, *problem.resident))
    unit = TIME_UNIT_S
    while worst / unit > MAX_UNITS / 4:
        unit *= 10
    return unit

