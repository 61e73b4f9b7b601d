"""Placing a model as RLinf would: the placement class its ``runner.task_type`` asks for, else as written.

RLinf has no key naming the placement class; its entry scripts pick it by task type (see
:mod:`solver_placement.rlinf.task_placement`). Placing such a config as written would, for a
reasoning job with ``rollout.tensor_parallel_size: 2``, start one-GPU rollouts where RLinf starts
two-GPU engines, silently. So every command that places a model goes through :func:`place`:
a config without a task type and without engine sizes is solved as written, one with a task
type gets its class, and one that is ambiguous is refused by ``placement_class``. A config
with a ``resource_pools:`` section (verl's pools and role mapping) is compiled into its spec by
:mod:`solver_placement.spec.pools` and solved as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from solver_placement.config import require_mapping
from solver_placement.errors import PlacementConfigError
from solver_placement.rlinf.component_placement import ComponentPlacement
from solver_placement.rlinf.model_parallel import ModelParallelComponentPlacement
from solver_placement.rlinf.task_placement import placement_class, placement_for_config
from solver_placement.solver.solution import Solution
from solver_placement.solver.solve import solve
from solver_placement.spec.pools import PoolGroup, has_pools, pool_spec_from_config


@dataclass(frozen=True)
class Placed:
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


def place(config: dict[str, Any], time_limit: float | None, model_parallel: bool) -> Placed:
    """Solve ``config`` with the class RLinf would use (``--model-parallel`` forces the reasoning class).

    ``time_limit`` overrides ``cluster.solver.time_limit_s`` for every solve the placement runs.
    """
    if has_pools(config):
        if model_parallel:
            raise PlacementConfigError("--model-parallel reads cluster.component_placement; this config states resource_pools: instead")
        spec, pools = pool_spec_from_config(config)
        return Placed(solve(spec, time_limit_s=time_limit), None, pools)
    chosen = ModelParallelComponentPlacement if model_parallel else placement_class(config)
    if chosen is ComponentPlacement:
        return Placed(solve(config, time_limit_s=time_limit), None)
    limited = _with_time_limit(config, time_limit)
    placement = chosen(limited) if model_parallel else placement_for_config(limited)
    return Placed(placement.solution, placement)


def _with_time_limit(config: dict[str, Any], time_limit: float | None) -> dict[str, Any]:
    """The config with ``cluster.solver.time_limit_s`` set: the placement classes solve from the
    config alone, so the command line's limit has to be written into it."""
    if time_limit is None:
        return config
    limited = dict(config)
    if "cluster" in limited and "num_nodes" not in limited:  # a job config, not a bare cluster section
        limited["cluster"] = section = require_mapping(limited["cluster"], "cluster")
    else:
        section = limited
    section["solver"] = {**require_mapping(section.get("solver", {}), "cluster.solver"), "time_limit_s": time_limit}
    return limited
