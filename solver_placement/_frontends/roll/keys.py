"""ROLL's config read as ROLL reads it: the worker sections that place processes, with ROLL's defaults.

ROLL's start scripts compose the YAML with Hydra (``examples/start_rlvr_pipeline.py``:
``initialize(config_path)``, ``compose(config_name)``, Hydra's 1.1 defaults as no version base
is given), then build the pipeline config with ``dacite.from_dict`` (not strict: keys a dataclass
lacks are dropped without a word). The launch input is the YAML (a file, composed by
``_compose`` when it has a ``defaults:`` list, or a mapping), or the start script's command line
(``--config_path DIR --config_name NAME``, read with argparse as the script reads it); words
after those are overrides in Hydra's forms (``actor_infer.device_mapping=list(range(0,4))``),
applied with ``apply_overrides``: that is how fixes and the solver's layout are stated.

What decides placement, per worker section (``WorkerConfig``, ``roll/configs/worker_config.py``
at 8eb27cc2): ``device_mapping`` (a Python expression string, ``device_mapping.py``; none: CPU
workers), ``num_gpus_per_worker`` (default 1; forced to 1 unless the strategy is ``hf_infer``,
``vllm`` or ``sglang``, set to ``tensor_parallel_size x pipeline_parallel_size`` for vLLM,
lines 278-292), ``world_size`` (recomputed as ``len(device_mapping) // num_gpus_per_worker``,
line 316; read only for CPU workers), ``strategy_args.strategy_name`` (default ``fsdp2_train``)
and, for Megatron, ``strategy_config.tensor_model_parallel_size``. Top level: ``num_gpus_per_node``
(default 8) and ``num_nodes`` (default 1; recomputed from the mappings). A worker's
``system_envs`` are set after ROLL's own device variables (``cluster.py`` line 142), so one that
sets ``CUDA_VISIBLE_DEVICES`` or Ray's ``NOSET`` switch places the worker by itself: it is refused,
as is a misspelt placement key, which dacite would drop silently.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from solver_placement._config import load_config
from solver_placement._errors import PlacementConfigError, cut, shown
from solver_placement._frontends.roll.device_mapping import device_mapping
from solver_placement._frontends.roll.job import RollJob, RollWorker
from solver_placement._frontends.roll.releases import DEFAULT_STRATEGY, STRATEGIES, release_named
from solver_placement._limits import check
from solver_placement._overrides import apply_overrides
from solver_placement._prediction.launch_input import LaunchInput, script_arguments

#: ROLL's entry scripts (``examples/start_*.py`` at 8eb27cc2); a launch script's command runs one.
START_SCRIPTS = (
    "start_rlvr_pipeline.py", "start_agentic_pipeline.py", "start_agentic_rollout_pipeline.py", "start_distill_pipeline.py",
    "start_distill_vl_pipeline.py", "start_dpo_pipeline.py", "start_onpolicy_distill_pipeline.py",
    "start_rlvr_rollout_pipeline.py", "start_rlvr_vl_pipeline.py", "start_sft_pipeline.py",
)  # fmt: skip
#: Keys of a worker section that make it one (any of them): ``WorkerConfig`` fields placement reads.
PLACEMENT_KEYS = ("device_mapping", "num_gpus_per_worker", "world_size", "strategy_args")
#: Sections holding several worker sections by name: RLVR's ``rewards`` and a multi-teacher ``teacher``.
NESTED_SECTIONS = ("rewards", "teacher")
#: Strategies that keep ``num_gpus_per_worker`` as given (``worker_config.py`` line 278 at 8eb27cc2).
MULTI_GPU_STRATEGIES = ("hf_infer", "vllm", "sglang")
#: Environment variables that, set in ``system_envs``, take device choice away from ROLL.
DEVICE_VARIABLES = ("CUDA_VISIBLE_DEVICES", "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES")


def read_roll(given: LaunchInput, release: str | None) -> RollJob:
    """The ROLL job ``given`` states, read with ``release``'s rules (None: the newest)."""
    chosen = release_named(release)
    config = _config(given)
    gpus_per_node = _count(config.get("num_gpus_per_node", 8), "num_gpus_per_node", 0)
    num_nodes = _count(config.get("num_nodes", 1), "num_nodes", 1)
    _check_variables(config.get("system_envs"), "system_envs")
    sections = worker_sections(config)
    check("max_components", len(sections), given.origin, "the worker sections (rewards and teachers counted apart)")
    workers = tuple(_worker(role, section, counts, chosen) for role, section, counts in sections)
    check("max_processes", sum(worker.world_size for worker in workers), given.origin, "the workers of all sections")
    return RollJob(chosen, workers, gpus_per_node, num_nodes, "num_gpus_per_node" in config)


def worker_sections(config: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any], bool]]:
    """Each worker section, in the config's order: its role (its key, dotted under ``rewards`` and
    a multi-teacher ``teacher``), its mapping, and whether ``num_nodes`` counts its devices."""
    found = []
    for key, value in config.items():
        if not isinstance(value, Mapping):
            continue
        if _is_worker(value):
            found.append((str(key), value, True))
        elif key in NESTED_SECTIONS:
            found += [(f"{key}.{name}", inner, key != "rewards") for name, inner in value.items() if isinstance(inner, Mapping) and _is_worker(inner)]
    return found


def _is_worker(section: Mapping[str, Any]) -> bool:
    return any(key in section for key in PLACEMENT_KEYS)


def _config(given: LaunchInput) -> dict[str, Any]:
    """The config: the YAML given (its ``defaults:`` composed when loaded), or the one the start
    script's ``--config_path``/``--config_name`` name; then the overrides among the words."""
    if given.config is not None:
        base: Any = given.config
        overrides = list(given.arguments)
    else:
        base, overrides = _from_command_line(given)
    bad = [word for word in overrides if word.startswith("-") or ("=" not in word and not word.startswith("~"))]
    if bad:
        raise PlacementConfigError(
            f"{given.origin}: ROLL's start scripts take --config_path and --config_name only (argparse: unrecognized arguments: "
            f"{cut(' '.join(bad), 120)}); overrides are written key=value (Hydra's forms)"
        )
    return load_config(apply_overrides(base, overrides) if overrides else base)


def _from_command_line(given: LaunchInput) -> tuple[Path, list[str]]:
    """The config file and the override words of ``python examples/start_*.py --config_path DIR
    --config_name NAME [key=value ...]``: the flags parsed by argparse as the start script
    defines them (defaults ``config`` and ``sppo_config``; prefixes and ``--flag=value`` work),
    the folder relative to the script's own folder, as Hydra's ``initialize`` takes it."""
    words = list(script_arguments(given, START_SCRIPTS))
    parser = argparse.ArgumentParser(prog="start_pipeline.py", add_help=False, exit_on_error=False)
    parser.add_argument("--config_path", default="config")
    parser.add_argument("--config_name", default="sppo_config")
    try:
        parsed, rest = parser.parse_known_args(words)
    except argparse.ArgumentError as error:
        raise PlacementConfigError(f"{given.origin}: ROLL's start script would stop: {cut(str(error), 300)}") from None
    script = next((word for word in given.arguments if any(word.endswith(name) for name in START_SCRIPTS)), None)
    if "$" in parsed.config_path or "$" in parsed.config_name:
        raise PlacementConfigError(
            f"{given.origin}: --config_path {shown(parsed.config_path)} --config_name {shown(parsed.config_name)} need a shell variable "
            "this script computes; give the YAML file itself (--input path/to/config.yaml)"
        )
    base = Path(script).parent if script is not None else Path()
    try:  # the names are the user's text: one longer than the system takes is an OSError, not a missing file
        if given.path is not None and script is not None and not base.is_absolute() and not (base / parsed.config_path).is_dir():
            base = given.path.parent / base
        file = base / parsed.config_path / f"{parsed.config_name.removesuffix('.yaml')}.yaml"
        found = file.is_file()
    except OSError as error:
        raise PlacementConfigError(
            f"{given.origin}: --config_path {shown(parsed.config_path)} --config_name {shown(parsed.config_name)} name no file the system can open ({error.strerror})"
        ) from None
    if not found:
        raise PlacementConfigError(
            f"{given.origin}: ROLL's Hydra would find no config {shown(parsed.config_name)} in {shown(str(file.parent))} (looked for {shown(str(file))})"
        )
    return file, rest


def _worker(role: str, section: Mapping[str, Any], counts_for_nodes: bool, release: str) -> RollWorker:
    """One section as ``WorkerConfig.__post_init__`` leaves it (lines 274-318 at 8eb27cc2)."""
    _check_spelling(role, section)
    _check_variables(section.get("system_envs"), f"{role}.system_envs")
    strategy, config = _strategy(role, section.get("strategy_args"), release)
    per_worker = _count(section.get("num_gpus_per_worker", 1), f"{role}.num_gpus_per_worker", 0)
    if strategy not in MULTI_GPU_STRATEGIES:
        per_worker = 1
    elif strategy == "vllm":
        per_worker = _count(config.get("tensor_parallel_size", 1), f"{role}.strategy_args.strategy_config.tensor_parallel_size", 1) * _count(
            config.get("pipeline_parallel_size", 1), f"{role}.strategy_args.strategy_config.pipeline_parallel_size", 1
        )
    devices = device_mapping(section.get("device_mapping"), f"{role}.device_mapping")
    tensor_parallel = (
        _count(config.get("tensor_model_parallel_size", 1), f"{role}.strategy_args.strategy_config.tensor_model_parallel_size", 1)
        if strategy.startswith("megatron")
        else 1
    )
    if devices is None:
        world = section.get("world_size")
        if world is None:
            raise PlacementConfigError(
                f"{role}: a worker section without device_mapping runs world_size CPU workers, and world_size is not set (ROLL would fail on range(None)); set {role}.world_size or a device_mapping"
            )
        return RollWorker(role, None, 0, _count(world, f"{role}.world_size", 0), strategy, tensor_parallel, counts_for_nodes)
    if per_worker == 0:
        raise PlacementConfigError(
            f"{role}.num_gpus_per_worker is 0 with strategy {strategy}: ROLL divides by it (ZeroDivisionError); give the GPUs one {strategy} worker holds"
        )
    if len(devices) % per_worker:
        raise PlacementConfigError(
            f"{role}: ROLL refuses it: len(device_mapping)={len(devices)} must be divisible by num_gpus_per_worker={per_worker} "
            f"({_per_worker_source(strategy)}); give {role}.device_mapping a multiple of {per_worker} devices"
        )
    return RollWorker(role, devices, per_worker, len(devices) // per_worker, strategy, tensor_parallel, counts_for_nodes)


def _per_worker_source(strategy: str) -> str:
    if strategy == "vllm":
        return "vLLM: tensor_parallel_size x pipeline_parallel_size"
    return "as given" if strategy in MULTI_GPU_STRATEGIES else f"forced to 1 for {strategy}"


def _strategy(role: str, value: Any, release: str) -> tuple[str, Mapping[str, Any]]:
    """``strategy_args``: its ``strategy_name`` (the release's default when absent) and ``strategy_config``."""
    if value is None:
        return DEFAULT_STRATEGY[release], {}
    if not isinstance(value, Mapping):
        raise PlacementConfigError(f"{role}.strategy_args must be a mapping with strategy_name, not {shown(value)}")
    name = value.get("strategy_name", DEFAULT_STRATEGY[release])
    known = STRATEGIES[release]
    if name not in known:
        close = difflib.get_close_matches(str(name), known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; its strategies: {', '.join(known)}"
        raise PlacementConfigError(
            f"{role}.strategy_args.strategy_name: ROLL {release} has no strategy {shown(name)} (dacite refuses a value outside the Literal){hint}"
        )
    config = value.get("strategy_config") or {}
    if not isinstance(config, Mapping):
        raise PlacementConfigError(f"{role}.strategy_args.strategy_config must be a mapping, not {shown(config)}")
    return str(name), config


def _check_spelling(role: str, section: Mapping[str, Any]) -> None:
    """A key one letter from a placement key: dacite drops it and ROLL uses the default instead."""
    for key in section:
        if key in PLACEMENT_KEYS or not isinstance(key, str):
            continue
        close = difflib.get_close_matches(key, PLACEMENT_KEYS, n=1, cutoff=0.85)
        if close:
            raise PlacementConfigError(
                f"{role}.{key}: ROLL's WorkerConfig has no key {key!r} and drops it without a word (dacite, not strict), "
                f"so the worker would be placed by the default of {close[0]!r}; did you mean {close[0]!r}?"
            )


def _check_variables(envs: Any, where: str) -> None:
    if isinstance(envs, Mapping):
        named = [name for name in DEVICE_VARIABLES if name in envs]
        if named:
            raise PlacementConfigError(
                f"{where}.{named[0]}: set in system_envs it replaces the devices ROLL computes for each worker "
                f"(roll/distributed/executor/cluster.py line 142), which the library does not model; remove it and place workers with device_mapping"
            )


def _count(value: Any, key: str, least: int) -> int:
    """An integer key (dacite refuses other types for an ``int`` field), at least ``least``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise PlacementConfigError(f"{key} must be an integer, not {shown(value)} (ROLL's dataclass field is an int)")
    if value < least:
        raise PlacementConfigError(f"{key} must be at least {least}, not {value}")
    check("max_hardware_items", value, key, "the value")
    return value
