"""Which RLinf placement class a job config asks for, picked the way RLinf's entry scripts pick it.

RLinf has no config key naming the class: each entry script hard-codes one, and
``runner.task_type`` says which script a config is written for (``rlinf/config.py`` validates
by it). The scripts map task types to classes as follows:

=========================================  ===================================================
``runner.task_type``                        class (entry scripts)
=========================================  ===================================================
``reasoning``, ``coding_online_rl``         ``ModelParallelComponentPlacement`` (``main_grpo.py``,
                                            coding RL; coding RL must be disaggregated)
``reasoning`` with extra ``rollout_*``      ``MultiAgentModelParallelComponentPlacement``
engines in ``component_placement``          (WideSeek-R1 ``train.py``)
``reasoning_eval``                          ``ModelParallelEvalComponentPlacement`` (Search-R1
                                            ``eval.py``), or the multi-agent eval class with
                                            extra ``rollout_*`` engines (WideSeek-R1 ``eval.py``)
``embodied``, ``embodied_eval``, ``sft``,   ``HybridComponentPlacement`` (embodied training and
``offline``                                 eval, SFT, offline RL)
=========================================  ===================================================

Extra ``rollout_*`` components are what the multi-agent classes exist for (engines sharing the
actor's GPUs); for configs both classes accept the two give the same layout. A config without
``runner.task_type`` is placed as written (:class:`ComponentPlacement`), unless it sets rollout
engine sizes: then the class decides whether a rollout process holds one GPU or a whole engine,
and guessing could silently start engines on too few GPUs, so the config is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from solver_placement._config import ConfigSource, positive_int
from solver_placement._constants import ACCELERATOR
from solver_placement._errors import PlacementConfigError
from solver_placement._frontends.rlinf.component_placement import ComponentPlacement, HybridComponentPlacement
from solver_placement._frontends.rlinf.eval_placement import ModelParallelEvalComponentPlacement
from solver_placement._frontends.rlinf.model_parallel import ModelParallelComponentPlacement
from solver_placement._frontends.rlinf.multi_agent import MultiAgentModelParallelComponentPlacement, MultiAgentModelParallelEvalComponentPlacement
from solver_placement._job import Job, load_job

HYBRID_TASKS = ("embodied", "embodied_eval", "sft", "offline")
TRAINING_TASKS = ("reasoning", "coding_online_rl")
EVAL_TASKS = ("reasoning_eval",)
#: Every ``runner.task_type`` RLinf supports (``rlinf.config.SUPPORTED_TASK_TYPE``).
TASK_TYPES = (*TRAINING_TASKS, *EVAL_TASKS, *HYBRID_TASKS)
#: Rollout settings that make a rollout process an engine of several GPUs.
ENGINE_SIZE_KEYS = ("tensor_parallel_size", "pipeline_parallel_size")


def placement_for_config(config: ConfigSource | Job, cluster: Any = None, *, solver_options: Mapping[str, Any] | None = None) -> ComponentPlacement:
    """The placement RLinf's entry script for ``config`` would build, solved.

    ``config`` is a YAML path, a ``DictConfig``, a mapping holding the whole job config, or a
    :class:`~solver_placement._job.Job`; ``cluster`` is optional (ours or RLinf's; built from
    ``config.cluster`` when omitted); ``solver_options`` go over ``cluster.solver``. Raises
    :class:`PlacementConfigError` naming what is ambiguous or unsupported.
    """
    job = load_job(config)
    placement = placement_class(job)(job, cluster, solver_options=solver_options)
    if job.task_type == "coding_online_rl" and isinstance(placement, ModelParallelComponentPlacement) and not placement.is_disaggregated:
        mode = placement.placement_mode.name if placement.placement_mode else "none"
        raise PlacementConfigError(
            f"runner.task_type coding_online_rl: the online coding task must use disaggregated placement mode "
            f"(actor, rollout and inference on disjoint GPUs), but component_placement gives {mode} mode"
        )
    if job.task_type in HYBRID_TASKS:
        _check_hybrid_engine_sizes(job.config, placement, job.task_type)
    return placement


def placement_class(job: Job) -> type[ComponentPlacement]:
    """The class for a job (see the module docstring for the rules)."""
    task = job.task_type
    if task is None:
        stated = _engine_sizes(job.config)
        if stated:
            raise PlacementConfigError(
                f"the config sets {stated} but no runner.task_type, so it is unknown whether RLinf lays the rollout "
                "out as engines of that many GPUs (reasoning jobs) or places component_placement as written (one process "
                f"per listed GPU); set runner.task_type to one of {', '.join(TASK_TYPES)}"
            )
        return ComponentPlacement
    if task in HYBRID_TASKS:
        return HybridComponentPlacement
    multi_agent = bool(_extra_engines(job.section))
    if task == "reasoning" and multi_agent:
        return MultiAgentModelParallelComponentPlacement
    if task in TRAINING_TASKS:
        return ModelParallelComponentPlacement
    if task in EVAL_TASKS:
        return MultiAgentModelParallelEvalComponentPlacement if multi_agent else ModelParallelEvalComponentPlacement
    raise PlacementConfigError(f"runner.task_type {task!r} is not one of RLinf's task types ({', '.join(TASK_TYPES)})")


def _engine_sizes(config: Mapping[str, Any]) -> str:
    """``rollout.tensor_parallel_size: 2``-style text for every rollout engine size above 1."""
    rollout = config.get("rollout")
    if not isinstance(rollout, Mapping):
        return ""
    sizes = {key: positive_int(rollout[key], f"rollout.{key}") for key in ENGINE_SIZE_KEYS if key in rollout}
    return ", ".join(f"rollout.{key}: {size}" for key, size in sizes.items() if size > 1)


def _extra_engines(section: Mapping[str, Any]) -> list[str]:
    """Components named ``rollout_*`` in ``cluster.component_placement``: engines beside the rollout."""
    entries = section.get("component_placement")
    if not isinstance(entries, Mapping):
        return []
    names = (name.strip() for key in entries for name in str(key).split(","))
    return [name for name in names if name.startswith("rollout_")]


def _check_hybrid_engine_sizes(config: Mapping[str, Any], placement: ComponentPlacement, task: str) -> None:
    """HYBRID places the rollout as written; refuse processes that do not hold a whole engine."""
    rollout = config.get("rollout")
    if "rollout" not in placement.components or not isinstance(rollout, Mapping):
        return
    engine = 1
    for key in ENGINE_SIZE_KEYS:
        engine *= positive_int(rollout.get(key, 1), f"rollout.{key}")
    held = {len(p.local_hardware_ranks) for p in placement.get_placements("rollout") if p.hardware_type == ACCELERATOR}
    if engine > 1 and held - {engine}:
        raise PlacementConfigError(
            f"rollout: runner.task_type {task} places component_placement as written (HybridComponentPlacement), which "
            f"gives rollout processes of {', '.join(map(str, sorted(held)))} GPU(s), but rollout.tensor_parallel_size x "
            f"pipeline_parallel_size = {engine} GPUs per engine; write the rollout placement with {engine} GPUs per "
            f"process (e.g. \"0-{2 * engine - 1}:0-1\") or drop the sizes"
        )
