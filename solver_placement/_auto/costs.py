"""RLinf's cost tables: seconds per iteration of one component on each GPU count it may use.

The formulas and validity rules are RLinf's auto-placement toolkit's (``docs/cost_model.md``
writes every one out); they are kept here, apart from the search, so that each can be checked
by hand against the documentation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from solver_placement._auto.profile_fit import ProfileFit
from solver_placement._errors import PlacementConfigError

#: From this many running requests on, RLinf counts only 90 % of them as served without queueing.
QUEUEING_REQUESTS = 128


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
    return -(-max_running_requests * 9 // 10) if max_running_requests >= QUEUEING_REQUESTS else max_running_requests


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
