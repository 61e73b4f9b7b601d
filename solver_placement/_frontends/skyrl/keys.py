"""A SkyRL launch read as SkyRL reads it: Hydra overrides over ``ppo_base_config.yaml``.

Two releases are read: ``skyrl-train`` 0.3.1 (the newest on PyPI, wheel sha256 981cd57d...) and
0.4.0 (tag ``skyrl_train-v0.4.0``, commit 332c7cbcc4f4fad20ca71d94c5bb33d84035da09, not on PyPI
as ``skyrl-train``). Their placement code is the same (``worker.py`` ``_initiate_actors``,
``trainer.py`` ``build_models``, ``ray_wrapped_inference_engine.py``, the ``validate_cfg`` rules:
compared line by line); their defaults differ (0.3.1: ``*_num_gpus_per_node`` 4 and
``inference_engine_tensor_parallel_size`` 4; 0.4.0: 1 and 1) and 0.4.0's ``generator`` has four
more keys. Line numbers below are 0.4.0's.

SkyRL's entry point is a Hydra app (``skyrl_train/entrypoints/main_base.py:424``,
``@hydra.main(config_name="ppo_base_config")``); users launch it as
``python -m skyrl_train.entrypoints.main_base key=value ...``. Hydra applies the overrides in
order (the last of a key wins); ``key=value`` for a key the config lacks is refused ("Could not
override"), ``+key=value`` for one it has too ("Could not append"). A YAML mapping given instead
is read as the composed config, with SkyRL's defaults under it.

Keys that decide placement, with their 0.4.0 defaults (``skyrl_train/config/ppo_base_config.yaml``
lines 13-21, 93-101, 68-69, 251-269 at that tag): ``trainer.placement.colocate_all`` (true),
``.colocate_policy_ref`` (true), ``.{policy,ref,critic}_num_nodes`` (1),
``.{policy,ref,critic}_num_gpus_per_node`` (1); ``trainer.algorithm.use_kl_loss`` (true),
``.use_kl_in_reward`` (false) -- the ref model exists when either is true (trainer.py:384);
``trainer.critic.model.path`` (null: no critic); ``trainer.strategy`` (fsdp2);
``generator.run_engines_locally`` (true), ``generator.num_inference_engines`` (1),
``generator.backend`` (vllm), ``generator.inference_engine_{tensor,pipeline,data,expert}_parallel_size`` (1).

SkyRL's batch-size rule (``validate_batch_sizes``, ``batch_sizes.py``) reads the batch sizes and
the data-parallel sizes: a policy whose GPUs do not split the batches evenly is refused.

Refused with SkyRL's own reason (``validate_cfg``, utils.py:214-370, 476-492, and the asserts
of ``build_models``, trainer.py:386-446): colocate-all with policy GPUs other than rollout GPUs
(or ref/critic GPUs other than policy GPUs); colocate-policy-ref with different shapes; SGLang
with data or expert parallelism; expert parallelism not equal to data x tensor; GAE without a
critic. Refused as not modelled: Hydra's ``--config-path`` / ``--config-name`` (another base
config), ``trainer.placement`` keys SkyRL 0.4.0 does not have (reward models are 0.5's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from solver_placement._config import did_you_mean
from solver_placement._errors import PlacementConfigError, cut, shown
from solver_placement._frontends.skyrl.batch_sizes import BATCH_DEFAULTS, check_batch_sizes
from solver_placement._frontends.skyrl.job import RELEASE, SkyrlJob, TrainingGroup
from solver_placement._overrides import parse_override
from solver_placement._prediction.launch_input import LaunchInput, script_arguments

#: The command a script runs SkyRL with (``python -m ...`` or ``uv run ... -m ...``).
MARKERS = ("skyrl_train.entrypoints.main_base", "main_base.py")
#: Largest node count and per-node GPU count read, and inference engines.
MAX_NODES = 4_096
MAX_GPUS_PER_NODE = 1_024
MAX_ENGINES = 65_536

#: The releases read, oldest first (see the module docstring).
RELEASES = ("0.3.1", RELEASE)
#: SkyRL 0.4.0's defaults of the keys read (see the module docstring).
DEFAULTS: dict[str, Any] = {
    "trainer.placement.colocate_all": True,
    "trainer.placement.colocate_policy_ref": True,
    "trainer.placement.policy_num_nodes": 1,
    "trainer.placement.policy_num_gpus_per_node": 1,
    "trainer.placement.critic_num_nodes": 1,
    "trainer.placement.critic_num_gpus_per_node": 1,
    "trainer.placement.ref_num_nodes": 1,
    "trainer.placement.ref_num_gpus_per_node": 1,
    "trainer.algorithm.use_kl_loss": True,
    "trainer.algorithm.use_kl_in_reward": False,
    "trainer.algorithm.advantage_estimator": "grpo",
    "trainer.critic.model.path": None,
    "trainer.strategy": "fsdp2",
    "generator.run_engines_locally": True,
    "generator.num_inference_engines": 1,
    "generator.backend": "vllm",
    "generator.inference_engine_tensor_parallel_size": 1,
    "generator.inference_engine_pipeline_parallel_size": 1,
    "generator.inference_engine_data_parallel_size": 1,
    "generator.inference_engine_expert_parallel_size": 1,
    **BATCH_DEFAULTS,  # batch sizes: SkyRL refuses a policy whose GPUs do not split them evenly (batch_sizes.py)
}

#: Every key of ``generator`` in ppo_base_config.yaml at skyrl_train-v0.4.0 (extracted from the file).
GENERATOR_KEYS = frozenset(
    (
        "append_eos_token_after_stop_str_in_multi_turn apply_overlong_filtering async_engine backend batched chat_template "
        "chat_template_kwargs enable_chunked_prefill enable_http_endpoint enable_prefix_caching enable_ray_prometheus_stats "
        "enforce_eager engine_init_kwargs eval_n_samples_per_prompt eval_sampling_params external_proxy_url "
        "external_server_urls fully_sharded_loras gpu_memory_utilization http_endpoint_host http_endpoint_port "
        "inference_engine_data_parallel_size inference_engine_expert_parallel_size inference_engine_pipeline_parallel_size "
        "inference_engine_tensor_parallel_size max_input_length max_num_batched_tokens max_num_seqs max_turns model_dtype "
        "model_name n_samples_per_prompt num_inference_engines override_existing_update_group remote_inference_engine_urls "
        "rope_scaling rope_theta run_engines_locally sampling_params served_model_name step_wise_trajectories "
        "use_conversation_multi_turn vllm_v1_disable_multiproc weight_sync_backend weight_transfer_threshold_cuda_ipc_GB "
        "zero_reward_on_non_stop"
    ).split()
)
#: SkyRL 0.3.1's defaults where they differ from 0.4.0's (its ppo_base_config.yaml lines 14-22, 239).
DEFAULTS_0_3_1: dict[str, Any] = {
    **DEFAULTS,
    **{f"trainer.placement.{role}_num_gpus_per_node": 4 for role in ("policy", "ref", "critic")},
    "generator.inference_engine_tensor_parallel_size": 4,
}
#: The ``generator`` keys 0.4.0 added over 0.3.1.
NEW_IN_0_4_0 = frozenset({"external_proxy_url", "external_server_urls", "enable_ray_prometheus_stats", "served_model_name"})
#: Every key of ``trainer.placement`` (the same in both releases).
PLACEMENT_KEYS = frozenset(key.rsplit(".", 1)[1] for key in DEFAULTS if key.startswith("trainer.placement."))


def _checked(release: str) -> dict[str, frozenset[str]]:
    """The sections whose keys are checked against the release's own (a typo there changes placement silently)."""
    generator = GENERATOR_KEYS if release == RELEASE else GENERATOR_KEYS - NEW_IN_0_4_0
    return {"trainer.placement": PLACEMENT_KEYS, "generator": generator}

#: Hydra's command-line flags that swap the base config, which this front end does not compose.
_CONFIG_FLAGS = ("--config-path", "--config-name", "--config-dir", "-cp", "-cn", "-cd")
_STRATEGIES = ("fsdp", "fsdp2", "megatron")
#: A script's own arguments passed on (``$@``): a script read from a file is run with none.
_SCRIPT_ARGUMENTS = ("$@", "${@}", "$*")


def read_skyrl(given: LaunchInput, release: str | None) -> SkyrlJob:
    """The job ``given`` states (see the module docstring)."""
    if release not in (None, *RELEASES):
        raise PlacementConfigError(f"SkyRL release {shown(release)} is not read; this front end reads skyrl-train {' and '.join(RELEASES)} (give release=None for {RELEASE})")
    release = release or RELEASE
    values = dict(DEFAULTS if release == RELEASE else DEFAULTS_0_3_1)
    arguments: tuple[str, ...] = ()
    if given.config is not None:
        _from_config(given.config, values, release)
        arguments = given.arguments  # overrides over the YAML (a fix or an improvement appends them)
    else:
        arguments = tuple(word for word in script_arguments(given, MARKERS) if word not in _SCRIPT_ARGUMENTS)
    for word in arguments:
        _apply(word, values, release)
    return replace(_job(values, arguments), release=release)


def _from_config(config: Mapping[str, Any], values: dict[str, Any], release: str) -> None:
    for key in DEFAULTS:
        node: Any = config
        for part in key.split("."):
            node = node.get(part, _ABSENT) if isinstance(node, Mapping) else _ABSENT
        if node is not _ABSENT:
            values[key] = node
    for section, known in _checked(release).items():
        node = config
        for part in section.split("."):
            node = node.get(part, {}) if isinstance(node, Mapping) else {}
        if isinstance(node, Mapping):
            for name in node:
                _known(section, str(name), known, f"{section}.{name}", release)


_ABSENT = object()


def _apply(word: str, values: dict[str, Any], release: str) -> None:
    """One command-line word, as Hydra applies it to SkyRL's config (only read keys are kept).
    Messages quote the word cut (``said``): it may be a megabyte long."""
    said = cut(word, 200)
    if word.split("=", 1)[0] in _CONFIG_FLAGS:
        raise PlacementConfigError(
            f"{said}: Hydra then composes another base config than SkyRL's ppo_base_config, which this front end does not read; "
            "pass the composed config as a YAML file (the app prints it with --cfg job) or the overrides alone"
        )
    if word.startswith("-"):
        raise PlacementConfigError(f"{said}: Hydra's parser refuses it (unrecognized arguments); SkyRL takes key=value overrides")
    key = word.lstrip("+~").split("=", 1)[0]
    adds = word.startswith("+")  # Hydra adds a new key so; SkyRL never reads one it lacks
    for section, known in _checked(release).items():
        if key.startswith(section + ".") and not adds:
            _known(section, key[len(section) + 1 :].split(".", 1)[0], known, key, release)
    if key not in DEFAULTS:
        return
    if "$" in word:
        raise PlacementConfigError(f"{said}: a shell variable the script does not set, in a key SkyRL places by; give its value (set it in the script before the command)")
    raw = word.split("=", 1)[1].strip() if "=" in word else ""
    if isinstance(DEFAULTS[key], bool) and "=" in word and raw.lower() not in ("true", "false"):
        raise PlacementConfigError(
            f"{said}: Hydra reads {shown(raw)} as a string, which SkyRL's `if` takes as true whatever it says; write {key}=true or {key}=false"
        )
    override = parse_override(word, "SkyRL's config")
    if override.form == "+":
        raise PlacementConfigError(
            f"{said}: Hydra refuses it: Could not append to config. An item is already at '{key}' (SkyRL's config has it; write {key}=VALUE)"
        )
    if not override.has_value:
        raise PlacementConfigError(f"{said}: deletes {key}, which SkyRL reads for its placement (it would fail with a missing key); set it instead")
    values[key] = override.value


def _known(section: str, name: str, known: frozenset[str], key: str, release: str) -> None:
    if name not in known:
        raise PlacementConfigError(
            f"{cut(key, 200)}: Hydra refuses it: Could not override '{cut(key, 200)}'. Key '{cut(name, 120)}' is not in struct (SkyRL {release}'s {section} has no such key)"
            f"{did_you_mean(name, sorted(known), 'keys')}"
        )


def _job(values: dict[str, Any], arguments: tuple[str, ...]) -> SkyrlJob:
    flag = {key: _bool(values[key], key) for key in DEFAULTS if isinstance(DEFAULTS[key], bool)}
    count = {key: _count(values[key], key, MAX_GPUS_PER_NODE if key.endswith("per_node") else MAX_NODES) for key in DEFAULTS if "num_" in key and key.startswith("trainer.")}
    sizes = {name: _count(values[f"generator.inference_engine_{name}_parallel_size"], f"generator.inference_engine_{name}_parallel_size", MAX_GPUS_PER_NODE) for name in ("tensor", "pipeline", "data", "expert")}
    engines = _count(values["generator.num_inference_engines"], "generator.num_inference_engines", MAX_ENGINES)
    strategy, backend = values["trainer.strategy"], values["generator.backend"]
    if strategy not in _STRATEGIES:
        raise PlacementConfigError(f"trainer.strategy={shown(strategy)}: SkyRL raises ValueError('Unknown strategy type: {strategy}') (main_base.py:384-389); use one of {', '.join(_STRATEGIES)}")
    _parallel_rules(backend, sizes)
    placement = "trainer.placement."
    use_ref = flag["trainer.algorithm.use_kl_loss"] or flag["trainer.algorithm.use_kl_in_reward"]
    if flag["trainer.algorithm.use_kl_loss"] and flag["trainer.algorithm.use_kl_in_reward"]:
        raise PlacementConfigError(
            "trainer.algorithm.use_kl_loss and use_kl_in_reward are both true: SkyRL asserts 'use_kl_in_reward and use_kl_loss should be mutually exclusive' (utils.py:229); set one to false"
        )
    critic_path = values["trainer.critic.model.path"]
    if values["trainer.algorithm.advantage_estimator"] == "gae" and not critic_path:
        raise PlacementConfigError(
            "trainer.algorithm.advantage_estimator=gae without trainer.critic.model.path: SkyRL asserts '`trainer.critic.model.path` should be provided for PPO training' (utils.py:224-227); set the critic's model path"
        )
    check_batch_sizes(values, use_ref, bool(critic_path))
    groups = [TrainingGroup(role, count[f"{placement}{role}_num_nodes"], count[f"{placement}{role}_num_gpus_per_node"]) for role in ("policy", "ref", "critic")]
    kept = tuple(group for group in groups if group.role == "policy" or (group.role == "ref" and use_ref) or (group.role == "critic" and critic_path))
    job = SkyrlJob(
        flag[f"{placement}colocate_all"], flag[f"{placement}colocate_policy_ref"], kept, engines,
        sizes["tensor"], sizes["pipeline"], sizes["data"], flag["generator.run_engines_locally"], arguments,
    )  # fmt: skip
    _placement_rules(job)
    return job


def _parallel_rules(backend: Any, sizes: Mapping[str, int]) -> None:
    """``validate_generator_cfg``'s parallel checks (utils.py:476-492)."""
    if backend not in ("vllm", "sglang"):
        raise PlacementConfigError(f"generator.backend={shown(backend)}: SkyRL raises ValueError for an unsupported backend (ray_wrapped_inference_engine.py:137); use vllm or sglang")
    if backend == "sglang" and (sizes["data"] > 1 or sizes["expert"] > 1):
        raise PlacementConfigError(
            "generator.backend=sglang with inference_engine_data_parallel_size or expert_parallel_size above 1: SkyRL asserts "
            "'Inference data (expert) parallelism is not yet supported for SGLang backend' (utils.py:481-483); set them to 1 or use vllm"
        )
    if sizes["expert"] > 1 and sizes["data"] * sizes["tensor"] != sizes["expert"]:
        raise PlacementConfigError(
            f"generator.inference_engine_expert_parallel_size={sizes['expert']}: SkyRL asserts that data parallel size * tensor parallel size "
            f"must equal expert parallel size (utils.py:484-489), here {sizes['data']} x {sizes['tensor']}; set it to {sizes['data'] * sizes['tensor']}"
        )


def _placement_rules(job: SkyrlJob) -> None:
    """The placement asserts of ``validate_cfg`` (utils.py:351-369) and ``build_models`` (trainer.py:386-446)."""
    policy = job.groups[0]
    if job.colocate_all:
        if policy.world_size != job.num_engines * job.engine_gpus:
            raise PlacementConfigError(
                f"trainer.placement.colocate_all=true: SkyRL asserts num_policy_gpus ({policy.world_size}) and num_rollout_gpus "
                f"({job.num_engines * job.engine_gpus}) must be the same when colocating all models (utils.py:352-356); "
                f"make policy_num_nodes x policy_num_gpus_per_node equal num_inference_engines x tensor x pipeline x data parallel sizes"
            )
        for group in job.groups[1:]:
            if group.world_size != policy.world_size:
                raise PlacementConfigError(
                    f"trainer.placement.colocate_all=true: SkyRL asserts num_policy_gpus and num_{group.role}_gpus must be the same when colocating "
                    f"policy and {group.role} model (trainer.py:412-432): {policy.world_size} and {group.world_size}; "
                    f"set {group.role}_num_nodes={policy.num_nodes} {group.role}_num_gpus_per_node={policy.num_gpus_per_node}"
                )
    ref = job.group("ref")
    if not job.colocate_all and job.colocate_policy_ref and ref is not None and (ref.num_nodes, ref.num_gpus_per_node) != (policy.num_nodes, policy.num_gpus_per_node):
        raise PlacementConfigError(
            f"trainer.placement.colocate_policy_ref=true: SkyRL asserts policy_num_nodes ({policy.num_nodes}) and ref_num_nodes ({ref.num_nodes}), "
            f"and the GPUs per node ({policy.num_gpus_per_node}, {ref.num_gpus_per_node}), must be the same when colocating policy and ref (utils.py:358-369); "
            f"set trainer.placement.ref_num_nodes={policy.num_nodes} trainer.placement.ref_num_gpus_per_node={policy.num_gpus_per_node}"
        )


def _bool(value: Any, key: str) -> bool:
    if not isinstance(value, bool):
        raise PlacementConfigError(f"{key}={shown(value)}: SkyRL tests it as a switch; give true or false")
    return value


def _count(value: Any, key: str, limit: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
        raise PlacementConfigError(f"{key}={shown(value)}: SkyRL multiplies it into a GPU count; give a whole number from 1 to {limit} (this front end's bound)")
    return value


def overrides_of(pairs: Sequence[tuple[str, Any]]) -> list[str]:
    """``key=value`` words for SkyRL's command line (booleans as Hydra writes them)."""
    return [f"{key}={str(value).lower() if isinstance(value, bool) else value}" for key, value in pairs]
