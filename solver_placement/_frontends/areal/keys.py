"""AReaL's launch input read as AReaL 1.0.4 reads it: the command line, the YAML, the defaults.

The command line (``areal/api/cli_args.py:3020-3042``, ``parse_cli_args``): a first word ending
in ``.py`` (the training script) is skipped; argparse reads ``--config FILE`` (required; argparse
accepts ``--config=FILE`` and the prefixes ``--c``... of it, and the last occurrence wins); every
other word is a Hydra override of that file (``key=value`` replaces a key the file has, ``+key``
adds, ``++key`` sets, ``~key`` deletes; ``_overrides.py`` applies them as Hydra does). With
``python -m areal.infra.launcher.local`` in front, the SPMD local launcher reads the same
arguments (``areal/infra/launcher/local.py:265-268``). Without ``--config`` (which AReaL itself
refuses) the overrides are read over AReaL's defaults, so a bare
``allocation_mode=sglang:d4t2+fsdp:d8`` can be predicted; the prediction notes it.

Keys that decide placement, with AReaL's defaults (``cli_args.py`` dataclasses at v1.0.4):
``scheduler.type`` (None), ``allocation_mode`` (""), ``cluster.n_nodes`` (32),
``cluster.n_gpus_per_node`` (8); per engine (``actor``, ``critic``, ``ref``, ``rollout``):
``backend`` (required), ``scheduling_spec`` (one spec asking 0 GPUs), ``scheduling_strategy``
(``{type: separation, target: null, fork: true}``); ``actor.kl_ctl`` (0.1: a ``ref`` section is
only used when it is above 0, ``rl_trainer.py:179``); ``rollout.agent.mode`` ("inline": "online"
starts no eval rollout, ``rl_trainer.py:313``). Keys that place workers through code this front
end does not model are refused by name: ``scheduler.type`` ``ray`` and ``slurm``, the Ray and
Slurm launchers, ``teacher``, and the v2 controllers (``_version: v2``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from solver_placement._config_copy import Unresolved, to_plain
from solver_placement._errors import PlacementConfigError, shown
from solver_placement._frontends.areal.grammar import AllocationModeError, parse_allocation_mode, parse_single_allocation
from solver_placement._frontends.areal.job import EVAL_ROLLOUT, LOCAL_LAUNCHER, SINGLE_CONTROLLER, ArealJob, RoleRequest
from solver_placement._overrides import apply_overrides
from solver_placement._prediction.launch_input import LaunchInput

#: The launchers AReaL 1.0.4 ships (``areal/infra/launcher/``); only the local one is modelled.
LAUNCHERS = ("areal.infra.launcher.local", "areal.infra.launcher.ray", "areal.infra.launcher.slurm")
#: Largest ``cluster.n_nodes`` and ``cluster.n_gpus_per_node`` read, and GPUs one worker may ask.
MAX_NODES = 4_096
MAX_GPUS_PER_NODE = 1_024
#: Largest worker count of one role read (``replicas``: a world size or a rollout dp size).
MAX_REPLICAS = 65_536
#: AReaL's defaults for the keys read (``cli_args.py`` at v1.0.4).
DEFAULT_N_NODES = 32
DEFAULT_N_GPUS_PER_NODE = 8
DEFAULT_KL_CTL = 0.1
#: The command of AReaL's default scheduling spec (``cli_args.py:1191-1194``).
DEFAULT_COMMAND = "python -m areal.infra.rpc.rpc_server"
#: The training roles in the order ``PPOTrainer.__init__`` initialises them (rl_trainer.py:288-292).
TRAINING_ROLES = ("actor", "critic", "ref")
_CONFIG_FLAG = re.compile(r"^--c(o(n(f(i(g)?)?)?)?)?(=.*)?$", re.S)


def read_areal(given: LaunchInput, release: str | None) -> ArealJob:
    """The job ``given`` states (see the module docstring)."""
    if release not in (None, "1.0.4"):
        raise PlacementConfigError(f"AReaL release {shown(release)} is not read; this front end reads AReaL 1.0.4 (give release=None or '1.0.4')")
    notes: list[str] = []
    if given.config is not None:
        config, launcher = dict(given.config), None
    else:
        config, launcher = _from_arguments(given.arguments, notes)
    return _job(config, launcher, (given.arguments if given.config is None else (), None if given.path is None else str(given.path)), notes)


def _from_arguments(arguments: Sequence[str], notes: list[str]) -> tuple[dict[str, Any], str | None]:
    """The command line after the training script (or the launcher module), read as
    ``parse_cli_args`` reads it: ``--config FILE`` and Hydra overrides."""
    script = next((index for index, word in enumerate(arguments) if word.endswith(".py") and "=" not in word), None)
    launcher_at = next((index for index, word in enumerate(arguments) if word in LAUNCHERS), None)
    launcher = None if launcher_at is None else arguments[launcher_at]
    start = script if script is not None else launcher_at
    words = list(arguments[start + 1 :] if start is not None else arguments)
    config_file = None
    overrides = []
    index = 0
    while index < len(words):
        word = words[index]
        match = _CONFIG_FLAG.match(word)
        if match and match.group(6) is not None:
            config_file = word.split("=", 1)[1]
        elif match:
            if index + 1 >= len(words):
                raise PlacementConfigError("AReaL's command line: argument --config: expected one argument (give --config FILE)")
            config_file = words[index + 1]
            index += 1
        elif word.startswith("-"):
            raise PlacementConfigError(
                f"AReaL's command line: {word!r} is neither --config FILE nor a Hydra override key=value (AReaL passes it to Hydra, which cannot parse it)"
            )
        else:
            overrides.append(word)
        index += 1
    if config_file is None:
        notes.append("no --config given (AReaL's command line requires one): the overrides were read over AReaL 1.0.4's defaults")
        return to_plain(apply_overrides({}, [_forced(word) for word in overrides]), ""), launcher
    return to_plain(apply_overrides(config_file, overrides), ""), launcher


def _forced(override: str) -> str:
    """An override over an empty config: every key is new, so ``key=v`` sets it as ``++key=v``."""
    return override if override.startswith(("+", "~")) else f"++{override}"


def _job(config: dict[str, Any], launcher: str | None, source: tuple[tuple[str, ...], str | None], notes: list[str]) -> ArealJob:
    if launcher is not None and launcher != LOCAL_LAUNCHER:
        raise PlacementConfigError(
            f"AReaL's launcher {launcher} is not modelled by this front end (only {LOCAL_LAUNCHER} and scheduler.type=local are); run the job with scheduler.type=local to predict it"
        )
    cluster = _section(config, "cluster")
    n_nodes = _count(cluster.get("n_nodes", DEFAULT_N_NODES), "cluster.n_nodes", MAX_NODES)
    n_gpus = _count(cluster.get("n_gpus_per_node", DEFAULT_N_GPUS_PER_NODE), "cluster.n_gpus_per_node", MAX_GPUS_PER_NODE, allow_zero=True)
    scheduler = _section(config, "scheduler").get("type")
    allocation_mode = config.get("allocation_mode", "")
    if launcher is None and scheduler is None and allocation_mode:
        launcher = LOCAL_LAUNCHER
        notes.append(
            "scheduler.type is null and allocation_mode is set: read as AReaL's SPMD local launcher (python -m areal.infra.launcher.local) reads it"
        )
    if launcher == LOCAL_LAUNCHER:
        roles = _launcher_roles(allocation_mode)
        return ArealJob(LOCAL_LAUNCHER, roles, n_nodes, n_gpus, *source, str(allocation_mode), tuple(notes))
    if scheduler != "local":
        if scheduler in ("ray", "slurm"):
            raise PlacementConfigError(
                f"scheduler.type={scheduler}: AReaL's {scheduler} scheduler is not modelled by this front end (only scheduler.type=local and the local launcher are)"
            )
        raise PlacementConfigError(
            f"scheduler.type={shown(scheduler)}: AReaL raises NotImplementedError('Unknown scheduler type: {scheduler}') (rl_trainer.py:915-923); set scheduler.type=local (or ray, slurm)"
        )
    return ArealJob(SINGLE_CONTROLLER, _controller_roles(config), n_nodes, n_gpus, *source, "", tuple(notes))


def _controller_roles(config: dict[str, Any]) -> tuple[RoleRequest, ...]:
    """The roles ``PPOTrainer`` creates, in its order: actor, critic, ref (training workers,
    ``TrainController.initialize``: ``world_size`` workers), then rollout (``RolloutController``:
    ``dp`` workers of ``tp*pp`` GPUs) and eval-rollout (forked on the rollout's workers)."""
    for unmodelled in ("teacher",):
        if config.get(unmodelled) is not None:
            raise PlacementConfigError(
                f"{unmodelled}: AReaL's teacher models are placed by code this front end does not model; remove the {unmodelled} section to predict the rest"
            )
    roles: list[RoleRequest] = []
    actor = _section(config, "actor")
    has_rollout = config.get("rollout") is not None
    for role in TRAINING_ROLES:
        section = config.get(role)
        if section is None and role != "actor":
            continue
        if role == "ref" and has_rollout and _number(actor.get("kl_ctl", DEFAULT_KL_CTL), "actor.kl_ctl") <= 0:
            continue
        roles.append(_training(role, _section(config, role), roles))
    if has_rollout:
        rollout = _rollout(_section(config, "rollout"), roles)
        roles.append(rollout)
        agent = _section(_section(config, "rollout"), "agent", "rollout.")
        if agent.get("mode", "inline") != "online":
            roles.append(RoleRequest(EVAL_ROLLOUT, rollout.allocation, rollout.replicas, (0,) * rollout.replicas, "rollout", rollout.engine_size))
    return tuple(roles)


def _training(role: str, section: dict[str, Any], earlier: list[RoleRequest]) -> RoleRequest:
    _refuse_v2(role, section)
    allocation = parse_single_allocation(_required(section, "backend", role), role)
    replicas = _count(allocation.parallel_world_size, f"{role}.backend world size", MAX_REPLICAS)
    specs = _specs(section, role)
    if len(specs) not in (1, replicas):
        raise PlacementConfigError(
            f"{role}.scheduling_spec: AReaL's local scheduler refuses {len(specs)} specs for {replicas} workers: schedulings length ({len(specs)}) must be 1 or equal to replicas ({replicas}) (local.py:257-281)"
        )
    gpus = tuple(_spec_gpus(specs[0 if len(specs) == 1 else index], role, index if len(specs) > 1 else 0) for index in range(replicas))
    target = _colocation(section, role, earlier, replicas)
    if target is None:
        _commands(specs, role)
    return RoleRequest(role, allocation, replicas, gpus, target, None, *_told(specs, replicas))


def _rollout(section: dict[str, Any], earlier: list[RoleRequest]) -> RoleRequest:
    """``RolloutController.initialize`` (rollout_controller.py:161-199): ``dp`` workers, each
    asking ``tp*pp`` GPUs when the first ``scheduling_spec`` asks any GPU, else none."""
    _refuse_v2("rollout", section)
    allocation = parse_single_allocation(_required(section, "backend", "rollout"), "rollout")
    if not allocation.is_inference:
        raise PlacementConfigError(
            f"rollout.backend={allocation.backend}: AReaL raises 'Invalid backend: {allocation.backend}, expected sglang or vllm' (rl_trainer.py:1060-1063)"
        )
    replicas = _count(allocation.data, "rollout.backend data-parallel size", MAX_REPLICAS)
    specs = _specs(section, "rollout")
    asks = _spec_gpus(specs[0], "rollout", 0)
    gpus = (allocation.instance_size if asks > 0 else 0,) * replicas
    target = _colocation(section, "rollout", earlier, replicas)
    if target is None:
        _commands(specs[:1], "rollout")
    return RoleRequest("rollout", allocation, replicas, gpus, target, allocation.instance_size, *_told(specs[:1], replicas))


def _colocation(section: dict[str, Any], role: str, earlier: list[RoleRequest], replicas: int) -> str | None:
    """The target of ``scheduling_strategy: {type: colocation}``, checked as ``LocalScheduler.create_workers``
    checks it (local.py:682-710): the target exists already and has as many workers."""
    strategy = _section(section, "scheduling_strategy", f"{role}.")
    kind = strategy.get("type", "separation")
    if kind == "separation":
        return None
    if kind != "colocation":
        raise PlacementConfigError(f"{role}.scheduling_strategy.type={shown(kind)}: AReaL accepts separation or colocation")
    target = strategy.get("target")
    if not target:
        raise PlacementConfigError(
            f"{role}.scheduling_strategy: AReaL's local scheduler refuses colocation without a target ('Colocation strategy requires target role to be specified'); set {role}.scheduling_strategy.target"
        )
    found = next((request for request in earlier if request.role == target), None)
    if found is None:
        raise PlacementConfigError(
            f"{role}.scheduling_strategy.target={target}: AReaL's local scheduler raises \"Cannot colocate with role '{target}' - role not found\": {target} is not created before {role} (the order is actor, critic, ref, rollout)"
        )
    if found.replicas != replicas:
        raise PlacementConfigError(
            f"{role}.scheduling_strategy.target={target}: AReaL's local scheduler refuses it: colocated role must have same replica count as target ({replicas} != {found.replicas}); give {role}.backend as many workers as {target}.backend"
        )
    return str(target)


def _launcher_roles(allocation_mode: Any) -> tuple[RoleRequest, ...]:
    """What ``local_main`` (launcher/local.py:270-410) starts from ``allocation_mode``: one
    LLM-server process of ``dp*tp*pp`` GPUs (role ``rollout``), then one ``torchrun`` trainer of
    the training part's world size (role ``actor``); a colocation ``|`` is not honoured."""
    if not allocation_mode:
        raise PlacementConfigError("allocation_mode: AReaL's local launcher needs an allocation string (e.g. allocation_mode=sglang:d4+fsdp:d4)")
    try:
        parts = parse_allocation_mode(str(allocation_mode))
    except AllocationModeError as error:
        raise AllocationModeError(f"allocation_mode: {error}") from None
    inference = [part for part in parts if part.is_inference]
    training = [part for part in parts if not part.is_inference]
    if len(inference) > 1:
        raise PlacementConfigError(
            f"allocation_mode={allocation_mode}: AReaL's launcher raises \"Ambiguous 'gen_backend' property: found {len(inference)} inference allocations\"; give it one inference part"
        )
    if len(parts) not in (1, 2):
        raise PlacementConfigError(
            f"allocation_mode={allocation_mode}: AReaL's launcher raises 'Can only infer allocation type from 1 or 2 allocations.'; give it one inference and one training part"
        )
    if len(parts) == 2 and not (len(inference) == 1 and len(training) == 1):
        raise PlacementConfigError(
            f"allocation_mode={allocation_mode}: AReaL's launcher raises 'Ambiguous allocation type: expected one inference and one training allocation.'"
        )
    roles = []
    if inference:
        gen = inference[0]
        roles.append(RoleRequest("rollout", gen, gen.data, (gen.instance_size,) * gen.data, None, gen.instance_size))
    if training:
        train = training[0]
        roles.append(RoleRequest("actor", train, train.parallel_world_size, (1,) * train.parallel_world_size))
    return tuple(roles)


def _refuse_v2(role: str, section: dict[str, Any]) -> None:
    if section.get("_version", "v1") == "v2":
        raise PlacementConfigError(
            f"{role}._version=v2: AReaL's v2 controllers are placed by code this front end does not model; use _version: v1 to predict"
        )


def _specs(section: dict[str, Any], role: str) -> list[dict[str, Any]]:
    specs = section.get("scheduling_spec")
    if specs is None:
        return [{"cmd": DEFAULT_COMMAND}]  # AReaL's default: one SchedulingSpec asking gpu=0
    if not isinstance(specs, (list, tuple)) or not all(isinstance(spec, Mapping) for spec in specs):
        raise PlacementConfigError(f"{role}.scheduling_spec={shown(specs)}: AReaL reads a list of SchedulingSpec mappings")
    if len(specs) not in (1, 2):
        raise PlacementConfigError(
            f"{role}.scheduling_spec: AReaL raises 'scheduling_spec must contain 1 or 2 SchedulingSpec, got {len(specs)}' (cli_args.py:1246-1251)"
        )
    return [dict(spec) for spec in specs]


def _commands(specs: list[dict[str, Any]], role: str) -> None:
    """Every spec a started worker uses names its command (local.py:763-769); AReaL's default
    spec does (``python -m areal.infra.rpc.rpc_server``), a spec written without ``cmd`` does not."""
    for index, spec in enumerate(specs):
        if not spec.get("cmd"):
            raise PlacementConfigError(
                f"{role}.scheduling_spec.{index}.cmd: AReaL's local scheduler refuses a worker whose spec has no command ('SchedulingSpec.cmd is required but not set'); "
                f"set {role}.scheduling_spec.{index}.cmd='{DEFAULT_COMMAND}'"
            )


def _spec_gpus(spec: dict[str, Any], role: str, index: int) -> int:
    return _count(spec.get("gpu", 0), f"{role}.scheduling_spec.{index}.gpu", MAX_GPUS_PER_NODE, allow_zero=True)


def _told(specs: list[dict[str, Any]], replicas: int) -> tuple[tuple[str | None, ...], tuple[int, ...]]:
    """Per worker, the ``CUDA_VISIBLE_DEVICES`` its spec's ``env_vars`` set (worker ``i`` uses
    spec ``i`` when there is one per worker, else the first), and the specs that set it."""
    told = []
    for spec in specs:
        env = spec.get("env_vars") or {}
        told.append(str(env["CUDA_VISIBLE_DEVICES"]) if isinstance(env, Mapping) and "CUDA_VISIBLE_DEVICES" in env else None)
    per_worker = tuple(told[index] if len(told) == replicas else told[0] for index in range(replicas))
    return (per_worker if any(value is not None for value in per_worker) else ()), tuple(
        index for index, value in enumerate(told) if value is not None
    )


def _section(config: Mapping[str, Any], key: str, prefix: str = "") -> dict[str, Any]:
    value = config.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise PlacementConfigError(f"{prefix}{key}={shown(value)}: AReaL reads a mapping here")
    return dict(value)


def _required(section: dict[str, Any], key: str, role: str) -> str:
    value = section.get(key)
    if value is None or isinstance(value, Unresolved) or value == "???":
        raise PlacementConfigError(
            f"{role}.{key}: AReaL raises 'Missing mandatory value: {role}.{key}'; give it, e.g. {role}.{key}={'sglang:d4' if role == 'rollout' else 'fsdp:d4'}"
        )
    return str(value)


def _count(value: Any, key: str, limit: int, allow_zero: bool = False) -> int:
    low = 0 if allow_zero else 1
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= limit:
        raise PlacementConfigError(f"{key}={shown(value)}: AReaL reads a whole number here; this front end reads {low} to {limit}")
    return value


def _number(value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PlacementConfigError(f"{key}={shown(value)}: AReaL reads a number here")
    return float(value)
