"""A slime job as slime's code sees it once its flags are parsed and its defaults derived.

``read_job`` applies what ``slime_validate_args`` (``slime/utils/arguments.py:1767``), SGLang's
``validate_args`` (``slime/backends/sglang_utils/arguments.py:147``) and Megatron's world-size
rule do to the placement flags after parsing, so the layout rules (``layout.py``) see the values
slime's placement code sees: e.g. ``--rollout-num-gpus`` taken from the actor's GPUs under
``--colocate``, or the actor resized to the rollout under ``--debug-rollout-only``. Inputs slime
refuses are refused with slime's reason; inputs that decide placement in ways the library does
not model (external engines, an SGLang deployment YAML) are named in an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import PlacementConfigError
from solver_placement._frontends.slime.flags import read_flags
from solver_placement._frontends.slime.known_flags import SLIME_COMMIT
from solver_placement._limits import check
from solver_placement._prediction.launch_input import LaunchInput, script_arguments

#: The words after which slime's flags start in a launch script (``python3 train.py ...``).
ENTRY_SCRIPTS = ("train.py", "train_async.py")
#: The release name of the rules read (slime publishes no releases: a commit).
RELEASE = SLIME_COMMIT[:8]
#: ``num_gpus_per_actor`` of train ranks (``slime/ray/placement_group.py:155``).
TRAIN_GPU_SHARE = 0.4
#: ``num_gpus`` of an SGLang engine actor (``slime/ray/rollout.py:129``).
ROLLOUT_GPU_SHARE = 0.2
#: ``--debug-rollout-only`` resizes the actor to at most this many GPUs per node (``arguments.py:1928``).
DEBUG_ROLLOUT_GPUS_PER_NODE = 8


@dataclass(frozen=True)
class SlimeJob:
    """The placement of a slime job, in slime's words, after its defaults are derived."""

    release: str
    arguments: tuple[str, ...]
    actor_num_nodes: int
    actor_num_gpus_per_node: int
    #: ``--rollout-num-gpus`` after derivation (0: no local engines).
    rollout_num_gpus: int
    rollout_num_gpus_per_engine: int
    #: ``--num-gpus-per-node``: what slime assumes a node holds (it never measures it).
    num_gpus_per_node: int
    colocate: bool
    debug_rollout_only: bool
    debug_train_only: bool
    prefill_num_servers: int | None
    #: ``--advantage-estimator ppo`` starts a critic on the actor's GPUs (unless ``--num-rollout 0``).
    use_critic: bool
    #: Megatron's tensor-parallel size: consecutive train ranks form one group.
    tensor_parallel_size: int
    notes: tuple[str, ...] = ()

    @property
    def actor_gpus(self) -> int:
        return self.actor_num_nodes * self.actor_num_gpus_per_node

    def placement_group(self) -> tuple[int, int]:
        """``(GPUs slime's placement group asks, index of the first rollout bundle)``
        (``_get_placement_group_layout``, ``placement_group.py:103-117``): the actor's GPUs plus
        the rollout's, or the larger of the two under ``--colocate``."""
        actor = self.actor_gpus
        if self.debug_train_only:
            return actor, 0
        if self.debug_rollout_only:
            return self.rollout_num_gpus, 0
        if self.colocate:
            return max(actor, self.rollout_num_gpus), 0
        return actor + self.rollout_num_gpus, actor

    def stated_cluster(self) -> Cluster:
        """Nodes of ``--num-gpus-per-node`` GPUs, as many as the placement group needs."""
        per_node = max(1, self.num_gpus_per_node)
        return Cluster(num_nodes=max(1, -(-self.placement_group()[0] // per_node)), num_gpus_per_node=per_node)


def read_job(given: LaunchInput, release: str | None) -> SlimeJob:
    """The job a slime command line (or the script that runs ``train.py``) states."""
    if release not in (None, RELEASE, SLIME_COMMIT):
        raise PlacementConfigError(f"slime release {release!r}: the library reads slime's rules at commit {RELEASE} only; leave the release out")
    if given.config is not None:
        raise PlacementConfigError(f"{given.origin}: slime takes its placement from train.py's command line, not a YAML config; give the launch script or the arguments")
    arguments = script_arguments(given, ENTRY_SCRIPTS)
    job = job_from_arguments(arguments)
    entry = next((word for word in given.arguments if any(word == name or word.endswith("/" + name) for name in ENTRY_SCRIPTS)), None)
    if entry is not None and entry.endswith("train_async.py") and job.colocate:  # train_async.py:11
        raise PlacementConfigError(f"{given.origin}: train_async.py with --colocate: slime refuses it (Colocation is not supported for async training); drop --colocate or run train.py")
    return job


def job_from_arguments(arguments: Sequence[str]) -> SlimeJob:
    """The job ``arguments`` (train.py's flags) state, derived as slime derives them."""
    values = read_flags(arguments)
    notes = [f"{word} is set in a file the script sources and is not read here; its flags keep slime's defaults" for word in dict.fromkeys(arguments) if word.startswith("${") and word.endswith("[@]}")]
    _refuse_unmodelled(values)
    if values["load_debug_rollout_data"] is not None:  # arguments.py:1902: load_debug_rollout_data implies debug_train_only
        values["debug_train_only"] = True
    if values["debug_rollout_only"] and values["debug_train_only"]:  # arguments.py:1933
        raise PlacementConfigError("--debug-rollout-only and --debug-train-only: slime refuses both at once (debug_rollout_only and debug_train_only cannot be set at the same time); keep one")
    actor_nodes, actor_per_node = values["actor_num_nodes"], values["actor_num_gpus_per_node"]
    rollout, colocate = values["rollout_num_gpus"], values["colocate"]
    if values["debug_rollout_only"]:  # arguments.py:1919-1930
        if colocate and rollout is None:
            rollout = actor_nodes * actor_per_node
        elif rollout is None:
            raise PlacementConfigError("--debug-rollout-only without --rollout-num-gpus: slime fails (min(8, None)) when it resizes the actor to the rollout; give --rollout-num-gpus")
        elif rollout == 0:
            actor_nodes = actor_per_node = 0
        else:
            actor_per_node = min(DEBUG_ROLLOUT_GPUS_PER_NODE, rollout)
            actor_nodes = rollout // actor_per_node
        colocate = False
    elif colocate and rollout is None:  # arguments.py:1952: the rollout takes the actor's GPUs
        rollout = actor_nodes * actor_per_node
    if rollout is None:
        if not values["debug_train_only"]:
            raise PlacementConfigError("--rollout-num-gpus is not given and --colocate is off: slime adds None to the actor's GPUs and fails (placement_group.py:117); give --rollout-num-gpus or --colocate")
        rollout = 0
    check("max_items_per_node", values["num_gpus_per_node"], "--num-gpus-per-node", "the GPUs slime assumes per node")
    for flag, dest in (("--rollout-num-gpus-per-engine", "rollout_num_gpus_per_engine"), ("--tensor-model-parallel-size", "tensor_model_parallel_size")):
        check("max_processes", values[dest], flag, "the GPUs of one engine or group")
    engine = values["rollout_num_gpus_per_engine"]
    if engine == 0 or values["num_gpus_per_node"] == 0:
        raise PlacementConfigError("--rollout-num-gpus-per-engine and --num-gpus-per-node must be at least 1: slime divides by them (rollout.py:1034)")
    if not values["debug_train_only"]:
        _check_sglang(values, engine, rollout)
    if not values["debug_rollout_only"]:
        _check_megatron(values, actor_nodes * actor_per_node)
    check("max_processes", actor_nodes * actor_per_node + rollout, "slime's flags", "the GPUs the placement group asks")
    return SlimeJob(
        release=RELEASE,
        arguments=tuple(arguments),
        actor_num_nodes=actor_nodes,
        actor_num_gpus_per_node=actor_per_node,
        rollout_num_gpus=rollout,
        rollout_num_gpus_per_engine=engine,
        num_gpus_per_node=values["num_gpus_per_node"],
        colocate=colocate,
        debug_rollout_only=values["debug_rollout_only"],
        debug_train_only=values["debug_train_only"],
        prefill_num_servers=values["prefill_num_servers"],
        use_critic=values["advantage_estimator"] == "ppo" and values["num_rollout"] != 0,  # arguments.py:1909, placement_group.py:190
        tensor_parallel_size=values["tensor_model_parallel_size"],
        notes=tuple(notes) + _megatron_config_note(values),
    )


def _refuse_unmodelled(values: dict[str, object]) -> None:
    if values["rollout_external_engine_addrs"] is not None:
        raise PlacementConfigError(
            "--rollout-external-engine-addrs: slime then asks each external engine how many GPUs it has and places "
            "no local engines; the library does not model external engines: predict without the flag"
        )
    if values["sglang_config"] is not None:
        raise PlacementConfigError(
            "--sglang-config: slime then lays the engines out from that YAML's server groups, which the library "
            "does not read; predict with --rollout-num-gpus and --rollout-num-gpus-per-engine (and --prefill-num-servers) instead"
        )


def _check_sglang(values: dict[str, object], engine: int, rollout: int) -> None:
    """SGLang's rules slime applies (``sglang_utils/arguments.py:175``, ``sglang_config.py:188``)."""
    pipeline = int(values["sglang_pp_size"])  # type: ignore[call-overload]
    if pipeline == 0 or engine % pipeline:
        raise PlacementConfigError(f"--sglang-pp-size {pipeline}: rollout_num_gpus_per_engine ({engine}) must be divisible by sglang_pipeline_parallel_size ({pipeline}) (slime's check); give a divisor of {engine}")
    prefill = values["prefill_num_servers"]
    if isinstance(prefill, int) and rollout > 0 and rollout - prefill * engine <= 0:  # rollout.py:1139-1143
        raise PlacementConfigError(f"--prefill-num-servers {prefill}: No decode GPUs: total {rollout}, prefill {prefill * engine} (slime's check, sglang_config.py:188); give fewer prefill servers or more --rollout-num-gpus")


def _check_megatron(values: dict[str, object], world: int) -> None:
    """Megatron's rules: at least one train rank, and the train world size divides into tensor x
    pipeline x context groups."""
    if world == 0:
        raise PlacementConfigError("--actor-num-nodes x --actor-num-gpus-per-node is 0: Megatron needs at least one train rank (a world size of 0 divides into no data-parallel group); give both at least 1")
    sizes = [int(values[key]) for key in ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size")]  # type: ignore[call-overload]
    model = sizes[0] * sizes[1] * sizes[2]
    if model == 0 or world % model:
        raise PlacementConfigError(
            f"--tensor-model-parallel-size {sizes[0]} x --pipeline-model-parallel-size {sizes[1]} x --context-parallel-size {sizes[2]} = {model}: "
            f"Megatron refuses a world size ({world} = --actor-num-nodes x --actor-num-gpus-per-node) it does not divide; give sizes whose product divides {world}"
        )


def _megatron_config_note(values: dict[str, object]) -> tuple[str, ...]:
    if values["megatron_config_path"] is None:
        return ()
    return ("--megatron-config-path: its per-role parallel sizes are not read (GPU counts always follow the command line, arguments.py:1654); train ranks are grouped by the command line's --tensor-model-parallel-size",)
