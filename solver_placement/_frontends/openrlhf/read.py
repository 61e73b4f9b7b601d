"""Read an OpenRLHF launch (its ``train_ppo_ray`` flags, a script running it) into the job it places.

After argparse (``arguments.py``) OpenRLHF's ``__main__`` block and ``train()`` change and check
the values before any placement group is asked for; this module does the same, in the same order,
for every value that decides placement, and refuses what OpenRLHF would refuse with its reason
(line numbers are ``openrlhf/cli/train_ppo_ray.py`` of 0.11.2 / 0.10.1.post2 / 0.7.0):

* ``--agent_func_path`` sets the remote reward to ``"agent"`` (637 / 547; not in 0.7.0);
* the critic exists only for the ``gae`` estimator; unnamed, it is the reward model's first path,
  or with a remote reward the actor's model (644-650 / 549-555 / 440-445), so ``gae`` with neither
  a reward model nor a remote reward crashes (``None.split``); the group estimators need more than
  one sample per prompt (656 / 557 / 448; it decides no placement, but refuses the job first);
* ``--ring_attn_size > 1`` and dynamic batching turn on ``--packing_samples``, which needs vLLM
  engines (686-705 / 585-604 / 468);
* the effective actor processes must not outnumber the sample batches (763 / 653), 0.7.0's
  ``_validate_args`` checks its sizes (25-50);
* in ``train()``: colocated groups must be the same size (41-46, 108-113), hybrid vLLM engines
  must fill the actor's GPUs (55-63), 0.7.0 reads ``--reward_pretrain`` for the reward group (147);
  the reference group exists when the KL coefficient is above 0 (0.7.0: not 0), the reward group
  when no remote reward is named (132; 0.10 and 0.11 start it even without a reward model).

Ray refuses an actor whose bundle index is outside its placement group (``ValueError`` in
``ray/util/placement_group.py``, ``check_placement_group_index``): a critic or reward group larger
than the actor's shared group under ``colocate_all`` is refused here with that reason.

The workers' environment decides what ``CUDA_VISIBLE_DEVICES`` they see: the script's variables,
``NAME=value`` words before the command and ``--runtime-env-json``'s ``env_vars`` are read for
``RAY_EXPERIMENTAL_NOSET_*_VISIBLE_DEVICES`` (any non-empty value counts, ``"0"`` too, as in
``ray_noset_visible_devices``, ``openrlhf/trainer/ray/utils.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from solver_placement._errors import InternalError, PlacementConfigError, shown
from solver_placement._frontends.openrlhf.arguments import parsed_flags
from solver_placement._frontends.openrlhf.job import Engines, Group, OpenRLHFJob
from solver_placement._frontends.openrlhf.releases import OLDEST, Release, release_named, releases_of
from solver_placement._limits import check
from solver_placement._prediction.launch_input import LaunchInput, script_arguments

#: The words that start OpenRLHF's PPO trainer (``python -m ...`` or the script's path).
MARKERS = ("openrlhf.cli.train_ppo_ray", "train_ppo_ray.py")
#: The environment variables OpenRLHF checks (``ray_noset_visible_devices``), any of which makes
#: Ray leave ``*_VISIBLE_DEVICES`` as the worker inherited it.
NOSET = (
    "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES", "RAY_EXPERIMENTAL_NOSET_ROCR_VISIBLE_DEVICES",
    "RAY_EXPERIMENTAL_NOSET_HIP_VISIBLE_DEVICES", "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES",
    "RAY_EXPERIMENTAL_NOSET_HABANA_VISIBLE_MODULES", "RAY_EXPERIMENTAL_NOSET_NEURON_RT_VISIBLE_CORES",
    "RAY_EXPERIMENTAL_NOSET_TPU_VISIBLE_CHIPS", "RAY_EXPERIMENTAL_NOSET_ONEAPI_DEVICE_SELECTOR",
)  # fmt: skip
_ASSIGNMENT = re.compile(r"^([A-Za-z_]\w*)=(.*)$", re.S)
_SIZES = ("num_nodes", "num_gpus_per_node")


def read_job(given: LaunchInput, release: str | None) -> OpenRLHFJob:
    """The job ``given`` launches, read with ``release``'s rules (None: the one its flags show)."""
    if given.config is not None:
        raise PlacementConfigError(
            f"{given.origin}: OpenRLHF takes command-line flags, not a YAML config; give its flags after -- or the script that runs it"
        )
    arguments = script_arguments(given, MARKERS)
    rules, parsed = _parsed(arguments, release, given.origin)
    values = _Values(rules, parsed, given.origin)
    environment = _environment(given, len(given.arguments) - len(arguments))
    return _job(rules, values, arguments, any(environment.get(name) for name in NOSET))


def _parsed(arguments: tuple[str, ...], release: str | None, origin: str) -> tuple[Release, dict[str, Any]]:
    """The release's parser's values: the named release's, else those of the newest release of the
    flags' spelling that accepts them all (the error is the newest one's when none does)."""
    if release is not None:
        rules = release_named(release)
        return rules, parsed_flags(rules, arguments, origin)
    candidates = releases_of(arguments)
    refusal: PlacementConfigError | None = None
    for rules in candidates:
        try:
            return rules, parsed_flags(rules, arguments, origin)
        except PlacementConfigError as error:
            refusal = refusal or error
    if refusal is None:
        raise InternalError("OpenRLHF reader: no release's parser was tried")
    raise refusal


class _Values:
    """The parsed flags by placement key, and errors that name the flag as the release spells it."""

    def __init__(self, rules: Release, parsed: Mapping[str, Any], origin: str) -> None:
        self.rules, self.parsed, self.origin = rules, dict(parsed), origin

    def __getitem__(self, key: str) -> Any:
        """The value, or the release's behaviour without the flag (0.7.0 lacks some)."""
        return self.parsed.get(self.rules.dest(key), _ABSENT.get(key))

    def __setitem__(self, key: str, value: Any) -> None:
        self.parsed[self.rules.dest(key)] = value

    def flag(self, key: str) -> str:
        return self.rules.flag(key)

    def refuse(self, rule: str, fix: str) -> PlacementConfigError:
        return PlacementConfigError(f"{self.origin}: OpenRLHF {self.rules.version} refuses this job: {rule}; {fix}")


#: What a release without the flag does (0.7.0 has no async training, agents or VLM).
_ABSENT: dict[str, Any] = {"train.async_enable": False, "train.agent_func_path": None, "ds.tensor_parallel_size": 1,
                           "train.dynamic_batch_enable": False, "data.max_images_per_prompt": 0}  # fmt: skip


def _job(rules: Release, values: _Values, arguments: tuple[str, ...], noset: bool) -> OpenRLHFJob:
    _main_block(rules, values)
    _check_sizes(values)
    engines_flag = values["vllm.num_engines"]
    engines = Engines(engines_flag, values["vllm.tensor_parallel_size"]) if engines_flag is not None and engines_flag > 0 else None
    groups = [Group("actor", values["actor.num_nodes"], values["actor.num_gpus_per_node"])]
    kl = values["algo.kl.init_coef"]
    if (kl != 0) if rules.version == "0.7.0" else (kl > 0):
        groups.append(Group("ref", values["ref.num_nodes"], values["ref.num_gpus_per_node"]))
    if values["critic.model_name_or_path"]:
        groups.append(Group("critic", values["critic.num_nodes"], values["critic.num_gpus_per_node"]))
    if not values["reward.remote_url"]:
        groups.append(Group("reward", values["reward.num_nodes"], values["reward.num_gpus_per_node"], bool(values["reward.model_name_or_path"])))
    job = OpenRLHFJob(
        release=rules.version, rules=rules, groups=tuple(groups), engines=engines,
        colocate_actor_ref=bool(values["train.colocate_actor_ref"]), colocate_all=bool(values["train.colocate_all"]),
        colocate_critic_reward=bool(values["train.colocate_critic_reward"]), async_enable=bool(values["train.async_enable"]),
        noset_visible_devices=noset, arguments=arguments,
    )  # fmt: skip
    check("max_processes", sum(group.world_size for group in groups) + (engines.gpus if engines else 0), values.origin, "the ranks OpenRLHF starts")
    _check_train(job, values)
    return job


def _main_block(rules: Release, values: _Values) -> None:
    """The ``__main__`` block's changes and checks of placement values, in its order."""
    if values["train.agent_func_path"]:
        values["reward.remote_url"] = "agent"
    if values["algo.advantage.estimator"] != "gae":
        values["critic.model_name_or_path"] = None
    elif values["critic.model_name_or_path"] is None:
        if values["reward.remote_url"]:
            values["critic.model_name_or_path"] = values["actor.model_name_or_path"]
        elif values["reward.model_name_or_path"] is None:
            raise values.refuse(
                f"with {values.flag('algo.advantage.estimator')} gae (the default) and no {values.flag('critic.model_name_or_path')}, "
                f"it takes the critic from {values.flag('reward.model_name_or_path')}, which is not given, and crashes "
                "(AttributeError: 'NoneType' object has no attribute 'split')",
                f"give {values.flag('reward.model_name_or_path')} or {values.flag('critic.model_name_or_path')}, a remote reward "
                f"({values.flag('reward.remote_url')}), or another estimator ({values.flag('algo.advantage.estimator')} reinforce_baseline)",
            )
        else:
            values["critic.model_name_or_path"] = str(values["reward.model_name_or_path"]).split(",")[0]
    grouped = ("rloo", "reinforce_baseline", "group_norm", *(("dr_grpo",) if rules.dotted else ()))
    estimator = values["algo.advantage.estimator"]
    if estimator in grouped and values["rollout.n_samples_per_prompt"] <= 1:
        raise values.refuse(
            f"{estimator} requires n_samples_per_prompt > 1 (its assertion: the group baseline of one sample is the sample), "
            f"and {values.flag('rollout.n_samples_per_prompt')} is {values['rollout.n_samples_per_prompt']}",
            f"give {values.flag('rollout.n_samples_per_prompt')} 2 or more",
        )
    if values["data.max_images_per_prompt"] > 0 and values["critic.model_name_or_path"] is not None:
        raise values.refuse(
            f"{values.flag('data.max_images_per_prompt')} {values['data.max_images_per_prompt']} (VLM training) does not support a critic model",
            f"use {values.flag('algo.advantage.estimator')} other than gae (reinforce_baseline, rloo, group_norm)",
        )
    if rules is not OLDEST and (values["ds.ring_attn_size"] > 1 or values["train.dynamic_batch_enable"]):
        values["ds.packing_samples"] = True
    if values["ds.packing_samples"]:
        _needs_engines(
            values, f"{values.flag('ds.packing_samples')} (on by itself with {values.flag('ds.ring_attn_size')} above 1 or dynamic batching)"
        )
    if rules is not OLDEST:
        actor = values["actor.num_nodes"] * values["actor.num_gpus_per_node"]
        batches = values["rollout.n_samples_per_prompt"] * values["rollout.batch_size"] // max(values["rollout.micro_batch_size"], 1)
        effective = actor // max(values["ds.ring_attn_size"], 1) // max(values["ds.tensor_parallel_size"], 1)
        if batches < effective:
            raise values.refuse(
                f"the number of sample batches ({batches}) must be greater than or equal to the effective number of actor processes "
                f"({effective}) (its assertion)",
                f"raise {values.flag('rollout.batch_size')} or lower {values.flag('rollout.micro_batch_size')}",
            )
    else:
        _validate_0_7(values)


def _needs_engines(values: _Values, why: str) -> None:
    engines = values["vllm.num_engines"]
    if engines is None:
        raise values.refuse(
            f"{why} compares {values.flag('vllm.num_engines')} with 0, which is not given (TypeError)", f"give {values.flag('vllm.num_engines')}"
        )
    if engines <= 0:
        raise values.refuse(
            f"{why} is only supported with vLLM (its assertion), and {values.flag('vllm.num_engines')} is {engines}",
            f"give {values.flag('vllm.num_engines')} 1 or more",
        )


def _validate_0_7(values: _Values) -> None:
    """0.7.0's ``_validate_args`` (``cli/train_ppo_ray.py`` lines 25-50), run first in ``train()``."""
    actor = values["actor.num_nodes"] * values["actor.num_gpus_per_node"]
    batch = values["rollout.batch_size"]
    if actor and batch % actor:
        raise values.refuse(
            f"rollout_bach_size must be divisible by actor_world_size, got {batch} and {actor} (its assertion)",
            f"make {values.flag('rollout.batch_size')} a multiple of {actor}",
        )
    if values["ds.zero_stage"] == 3:
        _needs_engines(values, f"{values.flag('ds.zero_stage')} 3 (ZeRO-3 is only supported when vLLM enabled)")
    engines = values["vllm.num_engines"]
    if engines is None:
        raise values.refuse(
            f"_validate_args compares {values.flag('vllm.num_engines')} with 0, which is not given (TypeError)",
            f"give {values.flag('vllm.num_engines')} (0 for no vLLM)",
        )
    if engines > 0 and actor % engines and engines % actor:
        raise values.refuse(
            f"actor_world_size must be divisible by vllm_num_engines, got {actor} and {engines} (its assertion)",
            f"give {values.flag('vllm.num_engines')} a divisor or multiple of {actor}",
        )
    if values["critic.model_name_or_path"]:
        critic = values["critic.num_nodes"] * values["critic.num_gpus_per_node"]
        if critic <= 0 or actor % critic:
            raise values.refuse(
                f"actor_world_size must be divisible by critic_world_size, got {actor} and {critic} (its assertion)",
                f"give the critic a divisor of {actor} GPUs",
            )


def _check_sizes(values: _Values) -> None:
    """Counts below 1 are refused before any placement (OpenRLHF would start a lone rank 0 with no
    placement group, or no engine at all, instead of what the flag says)."""
    for role in ("actor", "ref", "critic", "reward"):
        for size in _SIZES:
            if values[f"{role}.{size}"] < 1:
                raise PlacementConfigError(
                    f"{values.origin}: {values.flag(f'{role}.{size}')} is {values[f'{role}.{size}']}, below 1: OpenRLHF would still start "
                    f"rank 0 of {role} on a whole GPU; give 1 or more"
                )
    if values["vllm.tensor_parallel_size"] < 1:
        raise PlacementConfigError(
            f"{values.origin}: {values.flag('vllm.tensor_parallel_size')} is {values['vllm.tensor_parallel_size']}, below 1: an engine needs a GPU; give 1 or more"
        )


def _check_train(job: OpenRLHFJob, values: _Values) -> None:
    """``train()``'s own checks (0.11.2 lines 41-63 and 108-113), and Ray's refusal of a bundle
    index outside the actor's shared group."""
    actor, ref, critic, reward = job.groups[0], job.group("ref"), job.group("critic"), job.group("reward")
    if (
        (job.colocate_actor_ref or job.colocate_all)
        and ref is not None
        and (ref.num_nodes, ref.num_gpus_per_node) != (actor.num_nodes, actor.num_gpus_per_node)
    ):
        raise values.refuse(
            "num_nodes and num_gpus_per_node must be the same when colocate actor and ref model (its assertion)", _same(values, "ref", actor)
        )
    if job.hybrid_engines and job.engines is not None and job.engines.gpus != actor.world_size:
        raise values.refuse(
            f"actor_num_nodes * actor_num_gpus_per_node must be equal to vllm_num_engines * vllm_tensor_parallel_size, got {actor.world_size} "
            f"and {job.engines.gpus} (its assertion, with {values.flag('train.colocate_all')})",
            f"give {values.flag('vllm.num_engines')} {max(actor.world_size // job.engines.tensor_parallel_size, 1)}"
            + (
                ""
                if actor.world_size % job.engines.tensor_parallel_size == 0
                else f" and a {values.flag('vllm.tensor_parallel_size')} that divides {actor.world_size}"
            ),
        )
    if (
        critic is not None
        and job.colocate_critic_reward
        and reward is not None
        and (critic.num_nodes, critic.num_gpus_per_node) != (reward.num_nodes, reward.num_gpus_per_node)
    ):
        raise values.refuse(
            "num_nodes and num_gpus_per_node must be the same when colocate critic and reward model (its assertion)", _same(values, "reward", critic)
        )
    if values.rules.version == "0.7.0" and reward is not None:
        if not values["reward.model_name_or_path"]:
            raise values.refuse(
                f"without {values.flag('reward.remote_url')} it reads {values.flag('reward.model_name_or_path')}, which is not given, and crashes "
                "(AttributeError: 'NoneType' object has no attribute 'split')",
                f"give {values.flag('reward.model_name_or_path')} or {values.flag('reward.remote_url')}",
            )
        if "," in str(values["reward.model_name_or_path"]):
            raise values.refuse(
                f"{values.flag('reward.model_name_or_path')} {shown(values['reward.model_name_or_path'])}: Only one reward model is supported (its assertion)",
                "give one path",
            )
    shared = [ref] if job.colocate_actor_ref or job.colocate_all else []
    if job.colocate_all:
        shared += [critic] if job.colocate_critic_reward else [critic, reward]
    if shared:
        for group in shared:
            if group is not None and group.world_size > actor.world_size:
                raise values.refuse(
                    f"in the actor's shared placement group the {group.role} ranks take bundles 0 to {group.world_size - 1} of the actor's placement group "
                    f"of {actor.world_size}, and Ray raises ValueError: placement group bundle index {actor.world_size} is invalid",
                    f"give the {group.role} at most {actor.world_size} GPUs ({values.flag(f'{group.role}.num_gpus_per_node')})",
                )


def _same(values: _Values, role: str, like: Group) -> str:
    return f"give {values.flag(f'{role}.num_nodes')} {like.num_nodes} {values.flag(f'{role}.num_gpus_per_node')} {like.num_gpus_per_node}"


def _environment(given: LaunchInput, command_at: int) -> dict[str, str]:
    """The workers' environment the input states: the script's variables, then ``NAME=value``
    words and ``--runtime-env-json`` before the command (Ray passes its ``env_vars`` to every worker)."""
    environment = dict(given.variables)
    words = given.arguments[: max(command_at - 1, 0)]
    for index, word in enumerate(words):
        match = _ASSIGNMENT.match(word)
        if match and not word.startswith("-"):
            environment[match.group(1)] = match.group(2)
        if word.startswith("--runtime-env-json"):
            text = word.split("=", 1)[1] if "=" in word else (words[index + 1] if index + 1 < len(words) else "")
            environment.update(_runtime_env_vars(text, given.origin))
    return environment


def _runtime_env_vars(text: str, origin: str) -> dict[str, str]:
    try:
        document = json.loads(text)
    except ValueError as error:
        raise PlacementConfigError(f"{origin}: --runtime-env-json is not JSON ({error}): {shown(text)}; Ray would refuse it too") from None
    env_vars = document.get("env_vars", {}) if isinstance(document, dict) else {}
    return {str(key): str(value) for key, value in env_vars.items()} if isinstance(env_vars, dict) else {}
