"""The parts of Ray the launch uses, imported in one place, so a missing Ray is one clear error.

Ray is an optional extra of solver_placement: solving, verifying, plotting and dry-run launch
plans (``ray_launch.plan``) never import it. Every module that talks to Ray imports Ray's names
from here rather than from ``ray``, so using any Ray feature without Ray installed raises a
:class:`LaunchError` (a ``PlacementError``) naming the install command, worded once, instead of a
bare ``ModuleNotFoundError`` from somewhere inside the launch.
"""

from __future__ import annotations

from solver_placement._errors import LaunchError, missing_extra

try:
    import ray
    from ray._private.state import available_resources_per_node  # a DeveloperAPI, in every Ray from 2.49 on
    from ray.exceptions import GetTimeoutError, RayError
    from ray.util.placement_group import PlacementGroup, placement_group, remove_placement_group
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy
except ModuleNotFoundError as error:
    raise missing_extra(error, "ray", "Ray is not installed; launching on Ray and reading a Ray cluster need it", "ray", LaunchError) from None

__all__ = [
    "GetTimeoutError",
    "PlacementGroup",
    "PlacementGroupSchedulingStrategy",
    "RayError",
    "available_resources_per_node",
    "placement_group",
    "ray",
    "remove_placement_group",
]
