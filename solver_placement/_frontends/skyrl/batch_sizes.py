"""SkyRL's batch-size rule: whether a policy (ref, critic) of so many GPUs gets whole batches.

SkyRL's ``validate_cfg`` calls ``validate_batch_sizes`` before any worker starts (``utils.py``
lines 56-187 and 241 at 0.4.0, lines 49-179 and 239 in 0.3.1; the rule is the same in both).
It splits each batch over the data-parallel ranks, so the number of GPUs decides whether SkyRL
starts at all: 6 GPUs with its defaults (``train_batch_size`` 1024, ``policy_mini_batch_size`` 256,
``n_samples_per_prompt`` 5) fail, because ``256 * 5 // 6 = 213`` does not divide
``1024 * 5 // 6 = 853``. With ``dp`` the data-parallel size (``num_nodes x num_gpus_per_node``,
divided by ``sequence_parallel_size``, or by ``pipeline x context x tensor`` under Megatron, which
must divide it), each of these is an ``assert`` of SkyRL, refused here with its message:

* ``train_batch_size >= policy_mini_batch_size > 0`` (and the critic's, with a critic);
  ``micro_train_batch_size_per_gpu`` and ``micro_forward_batch_size_per_gpu`` above 0;
* ``train_batch_size`` divisible by the mini batch size;
* per GPU, ``mini * n_samples_per_prompt // dp`` above 0, divisible by
  ``micro_train_batch_size_per_gpu``, and dividing ``train_batch_size * n_samples_per_prompt // dp``
  (the policy's, and the critic's when ``trainer.critic.model.path`` is set);
* ``train_batch_size * n_samples_per_prompt`` at least the least common multiple of the policy's
  and (with a ref model) the ref's ``dp``.

The fix offered keeps ``n_samples_per_prompt`` and the micro batch sizes and moves the mini
batch sizes and ``train_batch_size`` to the nearest values that split evenly over every ``dp``;
it is checked by this same rule before it is shown.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from solver_placement._errors import PlacementConfigError, shown

#: Largest batch size read (a bound of this front end, so the arithmetic stays small).
MAX_BATCH_SIZE = 1 << 24
#: The keys the rule reads and their default (the same in SkyRL 0.3.1 and 0.4.0: ``ppo_base_config.yaml``
#: lines 52, 62, 94, 187-191, 231, and ``megatron_config/{policy,ref}.yaml``).
BATCH_DEFAULTS: dict[str, Any] = {
    "trainer.train_batch_size": 1024,
    "trainer.policy_mini_batch_size": 256,
    "trainer.critic_mini_batch_size": 256,
    "trainer.micro_train_batch_size_per_gpu": 1,
    "trainer.micro_forward_batch_size_per_gpu": 1,
    "generator.n_samples_per_prompt": 5,
    "trainer.policy.sequence_parallel_size": 1,
    "trainer.ref.sequence_parallel_size": 1,
    "trainer.critic.sequence_parallel_size": 1,
    **{f"trainer.{role}.megatron_config.{size}": 1 for role in ("policy", "ref") for size in ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size")},
}


@dataclass(frozen=True)
class Batches:
    """The batch sizes of one SkyRL config (``mini`` per model: ``policy``, ``critic``)."""

    train: int
    mini: Mapping[str, int]
    micro_train: int
    samples: int


def check_batch_sizes(values: Mapping[str, Any], use_ref: bool, critic: bool) -> None:
    """SkyRL's ``validate_batch_sizes`` on ``values`` (SkyRL's keys, defaults filled), refused in its words with a checked fix."""
    number = {key: _number(values[key], key) for key in BATCH_DEFAULTS}
    batches = Batches(
        number["trainer.train_batch_size"],
        {"policy": number["trainer.policy_mini_batch_size"], "critic": number["trainer.critic_mini_batch_size"]},
        number["trainer.micro_train_batch_size_per_gpu"],
        number["generator.n_samples_per_prompt"],
    )
    for key in ("trainer.policy_mini_batch_size", *(("trainer.critic_mini_batch_size",) if critic else ()), "trainer.micro_train_batch_size_per_gpu", "trainer.micro_forward_batch_size_per_gpu"):
        if number[key] <= 0:
            raise PlacementConfigError(f"{key}={number[key]}: SkyRL asserts '{key.split('.')[-1]} must be greater than 0' (utils.py:64-71); set it to at least 1")
    dp = {role: _data_parallel(values, number, role) for role in ("policy", "ref", "critic")}
    models = ("policy", "critic") if critic else ("policy",)
    problem = _broken(batches, dp, models, use_ref)
    if problem is None:
        return
    fix = _fix(batches, dp, models, use_ref)
    keys = {"train": "trainer.train_batch_size", "policy": "trainer.policy_mini_batch_size", "critic": "trainer.critic_mini_batch_size"}
    changes = [f"{keys[name]}={value}" for name, value in (("train", fix.train), *fix.mini.items()) if value != (batches.train if name == "train" else batches.mini[name])]
    advice = f"with {' '.join(changes)} the batches split evenly (checked by the same rule)" if changes else "no batch size fixes it"
    sizes = ", ".join(f"{role} {dp[role]}" for role in ("policy", *(("ref",) if use_ref else ()), *(("critic",) if critic else ())))
    raise PlacementConfigError(
        f"SkyRL refuses these batch sizes for data-parallel sizes {sizes} (validate_batch_sizes, utils.py:56-187): AssertionError: {problem}; {advice}"
    )


def _number(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not -MAX_BATCH_SIZE <= value <= MAX_BATCH_SIZE:
        raise PlacementConfigError(f"{key}={shown(value)}: SkyRL computes batch splits with it; give a whole number up to {MAX_BATCH_SIZE} (this front end's bound)")
    return value


def _data_parallel(values: Mapping[str, Any], number: Mapping[str, int], role: str) -> int:
    """The role's data-parallel size as ``validate_batch_sizes`` computes it."""
    world = int(values[f"trainer.placement.{role}_num_nodes"]) * int(values[f"trainer.placement.{role}_num_gpus_per_node"])
    if role != "critic" and values["trainer.strategy"] == "megatron":
        model = math.prod(number[f"trainer.{role}.megatron_config.{size}"] for size in ("pipeline_model_parallel_size", "context_parallel_size", "tensor_model_parallel_size"))
        if model <= 0 or world % model:
            raise PlacementConfigError(
                f"SkyRL asserts '{role}_world_size {world} should be divisible by (pp * cp * tp) {model}. This ensures that the data parallel "
                f"size is an integer.' (utils.py:82-90); make trainer.placement.{role}_num_nodes x {role}_num_gpus_per_node a multiple of "
                f"trainer.{role}.megatron_config's pipeline x context x tensor sizes"
            )
        return world // model
    parallel = number[f"trainer.{role}.sequence_parallel_size"]
    if parallel <= 0 or world // parallel == 0:
        raise PlacementConfigError(
            f"trainer.{role}.sequence_parallel_size={parallel}: SkyRL divides the batches by {role}_dp_size = {world} // {parallel}, "
            f"which is {world // parallel if parallel > 0 else 'undefined'} (ZeroDivisionError); give a size from 1 to the {role}'s {world} GPUs"
        )
    return world // parallel


def _broken(batches: Batches, dp: Mapping[str, int], models: tuple[str, ...], use_ref: bool) -> str | None:
    """The first of SkyRL's asserts these batch sizes fail, in its words (None: they pass)."""
    for model in models:
        mini, size = batches.mini[model], dp[model]
        if batches.train < mini:
            return f"assert train_batch_size >= {model}_mini_batch_size ({batches.train} < {mini})"
        if batches.train % mini:
            return f"train_batch_size {batches.train} should be divisible by {model}_mini_batch_size {mini}"
        per_gpu = mini * batches.samples // size
        if per_gpu <= 0:
            return f"Invalid {model}_mini_batch_size_per_gpu: {per_gpu}. mini_batch_size={mini}, n_samples_per_prompt={batches.samples}, dp_size={size}"
        if per_gpu % batches.micro_train:
            return f"normalized {model}_mini_batch_size_per_gpu {per_gpu} should be divisible by micro_train_batch_size_per_gpu {batches.micro_train}"
        train_per_gpu = batches.train * batches.samples // size
        if train_per_gpu % per_gpu:
            return (
                f"normalized {model}_train_batch_size_per_gpu (train_batch_size * n_samples_per_prompt // {model}_dp_size) {train_per_gpu} should be "
                f"divisible by {model}_mini_batch_size_per_gpu ({model}_mini_batch_size * n_samples_per_prompt // {model}_dp_size) {per_gpu}"
            )
    lcm = math.lcm(dp["policy"], dp["ref"]) if use_ref else dp["policy"]
    if batches.train * batches.samples < lcm:
        return (
            f"train_batch_size * n_samples_per_prompt ({batches.train * batches.samples}) should be larger than or equal to the least common "
            f"multiple of the data parallel sizes of the enabled models: lcm_dp_size={lcm}"
        )
    return None


def _fix(batches: Batches, dp: Mapping[str, int], models: tuple[str, ...], use_ref: bool) -> Batches:
    """The nearest mini and train batch sizes that split evenly: each mini a multiple of
    ``dp x micro / gcd(dp x micro, n_samples)`` (so the per-GPU mini batch is whole and a multiple
    of the micro batch), train a multiple of every mini, raised until it covers the ``dp`` lcm.
    With a critic, the minis are also tried on one common step, and the train size nearer the
    user's wins (two unrelated minis would make train their large lcm)."""
    steps = {model: dp[model] * batches.micro_train // math.gcd(dp[model] * batches.micro_train, batches.samples) for model in models}
    candidates = [_sized(batches, steps, dp, models, use_ref), _sized(batches, dict.fromkeys(models, math.lcm(*steps.values())), dp, models, use_ref)]
    fixed = min(candidates, key=lambda candidate: abs(candidate.train - batches.train))
    if _broken(fixed, dp, models, use_ref) is not None:  # every rule holds by construction; offer nothing if one does not
        return batches
    return fixed


def _sized(batches: Batches, steps: Mapping[str, int], dp: Mapping[str, int], models: tuple[str, ...], use_ref: bool) -> Batches:
    mini = {model: max(steps[model], round(size / steps[model]) * steps[model]) if model in models else size for model, size in batches.mini.items()}
    step = math.lcm(*(mini[model] for model in models))
    lcm = math.lcm(dp["policy"], dp["ref"]) if use_ref else dp["policy"]
    train = max(step, round(batches.train / step) * step, -(-lcm // (batches.samples * step)) * step)
    return replace(batches, train=train, mini=mini)
