"""What the installed Ray offers beyond the floor of our range (2.49), found by looking at its
API rather than at its version number (a backport or a nightly build says the truth this way).

Every Ray from 2.49 on has node labels, ``label_selector`` and per-bundle
``bundle_label_selector``, which the plan always uses. Only ``placement_group``'s
``topology_strategy`` (Ray 2.57 on, alpha) is missing from part of the range: without it a
required topology domain is held by label selectors alone (``domains``).
"""

from __future__ import annotations

import inspect
from functools import cache

from solver_placement._errors import LaunchError


@cache
def has_topology_strategy() -> bool:
    """Whether ``ray.util.placement_group`` takes ``topology_strategy`` (False without Ray, so a
    dry run on a machine without Ray shows the plan every Ray of the range can reserve)."""
    try:
        from solver_placement._ray_api import placement_group
    except LaunchError:
        return False
    return "topology_strategy" in inspect.signature(placement_group).parameters
