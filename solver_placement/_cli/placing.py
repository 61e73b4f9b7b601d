"""Placing a model as RLinf would: the placement class its ``runner.task_type`` asks for, else as written.

RLinf has no key naming the placement class; its entry scripts pick it by task type (see
:mod:`solver_placement._frontends.rlinf.task_placement`). Placing such a config as written would, for a
reasoning job with ``rollout.tensor_parallel_size: 2``, start one-GPU rollouts where RLinf starts
two-GPU engines, silently. So every command that places a model goes through :func:`place`:
a config without a task type and without engine sizes is solved as written, one with a task
type gets its class, and one that is ambiguous is refused by ``placement_class``. A config
with a ``resource_pools:`` section (verl's pools and role mapping) is compiled into its spec by
:mod:`solver_placement._frontends.verl.resource_pools` and solved as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from solver_placement._errors import PlacementConfigError
from solver_placement._frontends.rlinf.component_placement import ComponentPlacement
from solver_placement._frontends.rlinf.model_parallel import ModelParallelComponentPlacement
from solver_placement._frontends.rlinf.task_placement import placement_class, placement_for_config
from solver_placement._frontends.verl.resource_pools import PoolGroup, pool_spec_from_config
from solver_placement._job import Job
from solver_placement._solver.solution import Solution
from solver_placement._solver.solve import solve


@dataclass(frozen=True)
class SolvedJob:
    """A solved model and, when an RLinf placement class placed it, that placement (it knows the
    mode and the weight-sync pairing the figures and summaries show); ``pools`` maps each
    component of a ``resource_pools:`` or verl config to its pool and roles (empty otherwise),
    so figures draw pools as pools."""

    solution: Solution
    placement: ComponentPlacement | None
    pools: Mapping[str, PoolGroup] = field(default_factory=dict)

    @property
    def source(self) -> Solution | ComponentPlacement:
        """What to draw: the placement when there is one, so weight-sync figures see its pairing."""
        return self.placement if self.placement is not None else self.solution

    @property
    def class_name(self) -> str | None:
        return type(self.placement).__name__ if self.placement is not None else None

    @property
    def mode(self) -> str | None:
        """RLinf's placement mode in lower case (``collocated``, ...), None when placed as written."""
        mode = self.placement.placement_mode if self.placement is not None else None
        return mode.name.lower() if mode is not None else None


def place(job: Job, time_limit: float | None, model_parallel: bool) -> SolvedJob:
    """Solve ``job`` with the class RLinf would use (``--model-parallel`` forces the reasoning class).

    ``time_limit`` overrides ``cluster.solver.time_limit_s`` for every solve the placement runs.
    """
    if job.frontend.places_pools:
        if model_parallel:
            raise PlacementConfigError("--model-parallel reads cluster.component_placement; this config states resource_pools: instead")
        spec, pools = pool_spec_from_config(job)
        return SolvedJob(solve(spec, time_limit_s=time_limit), None, pools)
    chosen = ModelParallelComponentPlacement if model_parallel else placement_class(job)
    if chosen is ComponentPlacement:
        return SolvedJob(solve(job, time_limit_s=time_limit), None)
    limit = {} if time_limit is None else {"time_limit_s": time_limit}
    placement = chosen(job, solver_options=limit) if model_parallel else placement_for_config(job, solver_options=limit)
    return SolvedJob(placement.solution, placement)


def placed_as_written(job: Job, model_parallel: bool) -> bool:
    """Whether :func:`place` solves ``job``'s component_placement as written (no RLinf class
    rewrites it, and it is not resource pools)."""
    return not model_parallel and not job.frontend.places_pools and placement_class(job) is ComponentPlacement
