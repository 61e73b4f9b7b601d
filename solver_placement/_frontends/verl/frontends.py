"""verl's two inputs as front ends: its own trainer config, and a ``resource_pools:`` section
stated in verl's words. Both translate into the spec of the worker groups verl's driver starts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from solver_placement._frontends.verl.resource_pools import SECTION, pool_spec_from_config
from solver_placement._frontends.verl.versions import VERL_TRAINER, is_verl_trainer_config
from solver_placement._job import Frontend, Job
from solver_placement._specification.placement_spec import PlacementSpec


def _pools_spec(job: Job) -> PlacementSpec:
    """The spec of the job's pools (the role of each component is not needed to solve)."""
    return pool_spec_from_config(job)[0]


def _states_pools(config: Mapping[str, Any]) -> bool:
    """A config with a top-level ``resource_pools:`` section."""
    return SECTION in config


#: verl's own trainer config, read as verl's driver reads it (``versions``).
TRAINER = Frontend(VERL_TRAINER, is_verl_trainer_config, _pools_spec, whole_config=True, places_pools=True)
#: A ``resource_pools:`` section: verl's ``resource_pool_spec`` and ``mapping`` over a ``cluster:``.
RESOURCE_POOLS = Frontend(SECTION, _states_pools, _pools_spec, places_pools=True)
