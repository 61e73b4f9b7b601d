"""NeMo-RL's YAML read as NeMo-RL reads it: ``defaults:`` inheritance, overrides, the placement keys.

``examples/run_grpo.py`` (lines 57-90 at 7ea279ab) takes ``--config FILE`` with argparse's
``parse_known_args`` and treats every other word as a Hydra override. ``load_config``
(``nemo_rl/utils/config.py`` lines 52-95) loads FILE with OmegaConf; a ``defaults`` key (one
path or a list, relative to the file's folder) names parent files, loaded the same way and merged
in order, then the file itself on top; a mapping marked ``_override_: true`` replaces the parent's
instead of merging into it. The overrides are applied after (``parse_hydra_overrides``).

What places workers (``grpo.setup``, ``nemo_rl/algorithms/grpo.py`` lines 759-1080):
``cluster.num_nodes``, ``cluster.gpus_per_node``, ``policy.generation.colocated.enabled`` and
``colocated.resources.{num_nodes,gpus_per_node}``, ``policy.generation.backend`` and its engine
size (vLLM ``tensor_parallel_size x pipeline_parallel_size``, ``vllm_generation.py`` lines
77-83; SGLang's ``sglang_server_config``, ``sglang.py``; Megatron generation's sizes,
``megatron.py``), the policy's tensor-parallel size, ``cluster.segment_size`` (NVLink segments,
``segments.py``), and the reward-model environment's resources when the data uses it
(``reward_model.py``). What is not modelled is refused by name: on-policy-distillation teachers
and the ``trtllm``/``dynamo`` generation backends.
"""

from __future__ import annotations

from pathlib import Path

from omegaconf import DictConfig, ListConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from solver_placement._config import existing_file
from solver_placement._errors import InternalError, PlacementConfigError, shown
from solver_placement._frontends.nemo_rl.config_values import optional_whole, required_value, whole
from solver_placement._frontends.nemo_rl.job import NemoRlJob
from solver_placement._frontends.nemo_rl.megatron import megatron_sizes
from solver_placement._frontends.nemo_rl.releases import release_named
from solver_placement._frontends.nemo_rl.reward_model import reward_model
from solver_placement._frontends.nemo_rl.sglang import sglang_servers
from solver_placement._limits import check
from solver_placement._limits.yaml_scan import check_text, load_checked, read_bounded
from solver_placement._overrides import apply_to
from solver_placement._prediction.launch_input import LaunchInput, script_arguments

#: NeMo-RL's entry scripts that take ``--config`` (``examples/run_*.py`` at 7ea279ab) for GRPO.
ENTRY_SCRIPTS = ("run_grpo.py", "run_grpo_math.py", "run_grpo_rm.py", "run_grpo_sliding_puzzle.py", "run_sft.py", "run_dpo.py", "run_rm.py")
#: Algorithms that train one policy on one cluster (``sft.py`` lines 186-201, ``dpo.py`` 242-257,
#: ``rm.py`` 221-236 at 7ea279ab: ``num_nodes`` groups of ``gpus_per_node`` bundles, one worker group a bundle).
TRAINING_ONLY = ("sft", "dpo", "rm")
#: Algorithms whose own ``setup`` builds clusters the library does not model (refused by name).
OTHER_ALGORITHMS = {
    "ppo": "ppo.py lines 535-710: a policy, a value model and vLLM",
    "distillation": "distillation.py lines 352-460: student, teacher and vLLM clusters",
}
#: Parent files one config may pull in through ``defaults`` (all levels together).
MAX_PARENTS = 32
#: Generation backends whose placement is modelled; the others are refused by name.
BACKENDS = ("vllm", "sglang", "megatron")
#: Keys that decide placement in ways not modelled: each is refused when set.
UNMODELLED = {
    "on_policy_distillation": "reserves nodes for on-policy-distillation teachers (grpo.py lines 781-809)",
}


def read_nemo_rl(given: LaunchInput, release: str | None) -> NemoRlJob:
    """The GRPO job ``given`` states (a YAML file, a mapping, or ``run_grpo.py``'s arguments)."""
    chosen = release_named(release)
    config, file, overrides = _config(given)
    algorithm = _algorithm(config)
    if algorithm in TRAINING_ONLY:
        return _training_job(config, chosen, algorithm, file, overrides, given)
    for key, why in UNMODELLED.items():
        if OmegaConf.select(config, key, default=None) is not None:
            raise PlacementConfigError(f"NeMo-RL: {key} is set: it {why}, which the library does not model; remove it to predict the rest")
    num_nodes = whole(config, "cluster.num_nodes", 1)
    gpus_per_node = whole(config, "cluster.gpus_per_node", 1)
    colocated = required_value(config, "policy.generation.colocated.enabled")
    if not isinstance(colocated, bool):
        raise PlacementConfigError(f"NeMo-RL: policy.generation.colocated.enabled is {shown(colocated)}: NeMo-RL needs true or false")
    backend = required_value(config, "policy.generation.backend")
    if backend not in BACKENDS:
        raise PlacementConfigError(
            f"NeMo-RL: policy.generation.backend={shown(backend)}: the library models the placement of the {', '.join(BACKENDS)} backend only; "
            "predict with policy.generation.backend=vllm to see the policy's layout"
        )
    span, sglang = None, None
    if backend == "megatron":  # no engine: generation runs Megatron policy workers (megatron.py)
        span, engine = megatron_sizes(config, colocated)
    elif backend == "sglang":  # engine actors told a base GPU (sglang.py)
        sglang = sglang_servers(config, colocated)
        engine = sglang.gpus_per_engine
    else:
        engine = whole(config, "policy.generation.vllm_cfg.tensor_parallel_size", 1) * whole(
            config, "policy.generation.vllm_cfg.pipeline_parallel_size", 1
        )
    inference_nodes = optional_whole(config, "policy.generation.colocated.resources.num_nodes")
    inference_gpus = optional_whole(config, "policy.generation.colocated.resources.gpus_per_node")
    segment_size = optional_whole(config, "cluster.segment_size")
    if segment_size is not None and segment_size < 1:
        raise PlacementConfigError(
            f"NeMo-RL: cluster.segment_size={segment_size}: it must be a whole number of at least 1, or null (no NVLink pinning)"
        )
    check("max_processes", num_nodes * gpus_per_node, given.origin, "cluster.num_nodes x cluster.gpus_per_node")
    return NemoRlJob(
        chosen, num_nodes, gpus_per_node, colocated, backend, engine, _train_tensor_parallel(config), inference_nodes, inference_gpus,
        segment_size=segment_size, megatron_span=span, sglang=sglang, reward_model=reward_model(config), config_file=file,
        overrides=tuple(overrides),
    )  # fmt: skip


def _algorithm(config: DictConfig) -> str:
    """The algorithm a config is for, by its top-level section (``grpo`` unless it has ``sft``, ``dpo`` or ``rm`` and no ``grpo``)."""
    if "grpo" in config:
        return "grpo"
    for name, why in OTHER_ALGORITHMS.items():
        if name in config:
            raise PlacementConfigError(
                f"NeMo-RL: a {name} config (its top-level '{name}' section): its setup builds its own clusters ({why}), which the library does not model"
            )
    found = [name for name in TRAINING_ONLY if name in config]
    return found[0] if len(found) == 1 else "grpo"


def _training_job(config: DictConfig, release: str, algorithm: str, file: str | None, overrides: list[str], given: LaunchInput) -> NemoRlJob:
    """An SFT, DPO or reward-model job: the cluster's size, its segments and the policy's tensor size."""
    num_nodes = whole(config, "cluster.num_nodes", 1)
    gpus_per_node = whole(config, "cluster.gpus_per_node", 1)
    segment_size = optional_whole(config, "cluster.segment_size")
    if segment_size is not None and segment_size < 1:
        raise PlacementConfigError(
            f"NeMo-RL: cluster.segment_size={segment_size}: it must be a whole number of at least 1, or null (no NVLink pinning)"
        )
    check("max_processes", num_nodes * gpus_per_node, given.origin, "cluster.num_nodes x cluster.gpus_per_node")
    return NemoRlJob(
        release, num_nodes, gpus_per_node, True, "", 1, _train_tensor_parallel(config), None, None,
        segment_size=segment_size, algorithm=algorithm, config_file=file, overrides=tuple(overrides),
    )  # fmt: skip


def _train_tensor_parallel(config: DictConfig) -> int:
    """The policy's tensor-parallel size: Megatron's when ``megatron_cfg.enabled``, else DTensor's."""
    if OmegaConf.select(config, "policy.megatron_cfg.enabled", default=False) is True:
        return whole(config, "policy.megatron_cfg.tensor_model_parallel_size", 1, default=1)
    return whole(config, "policy.dtensor_cfg.tensor_parallel_size", 1, default=1)


def _config(given: LaunchInput) -> tuple[DictConfig, str | None, list[str]]:
    """The config with its parents merged and the overrides applied, the file it came from, the overrides."""
    words = list(script_arguments(given, ENTRY_SCRIPTS)) if given.arguments else []
    file: str | None = str(given.path) if given.path is not None else None
    overrides = []
    index = 0
    while index < len(words):
        word = words[index]
        flag, given_value = word.split("=", 1) if word.startswith("--") and "=" in word else (word, None)
        if _is_config_flag(flag) and given_value is None and index + 1 < len(words):
            file, index = words[index + 1], index + 2
            continue
        if _is_config_flag(flag) and given_value is not None:
            file = given_value
        else:
            overrides.append(word)  # parse_known_args leaves every other word to Hydra's override parser
        index += 1
    if file is not None:
        config = _inherited(Path(file), [0])
    elif given.config is not None:
        config = OmegaConf.create(dict(given.config))
        if "defaults" in config:
            raise PlacementConfigError("NeMo-RL: a config with defaults: must be given as its file, so its parents are found next to it")
    else:
        raise PlacementConfigError("NeMo-RL: no config: give the YAML file, or run_grpo.py's arguments with --config FILE")
    try:
        apply_to(config, overrides, file or "the config", file or "the config")
    except OmegaConfBaseException as error:
        raise PlacementConfigError(f"NeMo-RL: an override does not apply: {error}") from None
    return config, file, overrides


def _is_config_flag(word: str) -> bool:
    """``--config`` or a prefix argparse takes for it (``allow_abbrev``: ``run_grpo.py``'s parser has
    no other long option, so ``--c`` up to ``--confi`` all mean ``--config``)."""
    return len(word) >= 3 and "--config".startswith(word)


def _inherited(path: Path, loaded: list[int]) -> DictConfig:
    """``load_config_with_inheritance`` (``nemo_rl/utils/config.py`` lines 52-95): parents first, in order."""
    loaded[0] += 1
    if loaded[0] > MAX_PARENTS:
        raise PlacementConfigError(f"NeMo-RL: {path}: more than {MAX_PARENTS} files through defaults: (a cycle?)")
    try:  # says what the path is instead (a folder, a name too long for the system), never an OSError
        existing_file(path)
    except PlacementConfigError as error:
        raise PlacementConfigError(f"NeMo-RL: {error}") from None
    # measured before it is built (nesting, values, aliases counted as copies): OmegaConf.load of a
    # flow list 100,000 deep raised RecursionError, of nested aliases ran out of memory
    text = read_bounded(path, str(path))
    check_text(text, str(path))
    config = load_checked(text)
    if not isinstance(config, DictConfig):
        raise PlacementConfigError(f"NeMo-RL: {path}: Config must be a Dictionary Config (List Config not supported)")
    if "defaults" not in config:
        return config
    defaults = config.pop("defaults")
    parents = (
        [str(defaults)]
        if isinstance(defaults, (str, Path))
        else [str(item) for item in defaults]
        if isinstance(defaults, ListConfig)
        else [str(defaults)]
    )
    if loaded[0] + len(parents) > MAX_PARENTS:  # refused before any is read: each may list as many again
        raise PlacementConfigError(f"NeMo-RL: {path}: more than {MAX_PARENTS} files through defaults: (a cycle?)")
    base = OmegaConf.create({})
    for parent in parents:
        parent_path = Path(parent) if parent.startswith("/") else path.parent / parent
        base = _merged(base, _inherited(parent_path, loaded))
    return _merged(base, config)


def _merged(base: DictConfig, child: DictConfig) -> DictConfig:
    """``merge_with_override`` (``nemo_rl/utils/config.py`` lines 31-49): a child mapping with
    ``_override_: true`` replaces the parent's; ``???`` values in the child do not hide the parent's."""
    for key in list(child.keys()):
        if OmegaConf.is_missing(child, key):
            continue
        value = child[key]
        if isinstance(value, DictConfig) and value.get("_override_", False):
            value.pop("_override_")
            if key in base:
                base.pop(key)
    merged = OmegaConf.merge(base, child)
    if not isinstance(merged, DictConfig):
        raise InternalError("merging two mapping configs gave a list config")
    return merged
