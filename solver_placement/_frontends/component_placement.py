"""``cluster.component_placement`` as a front end: RLinf's rank strings and the declarative
components, the form every config that names no other framework's keys is read in.

The grammar itself is the core's (``_specification/grammar.py``): it is the placement spec's own
text, which every front end can produce; RLinf's classes on top of it live in ``rlinf/``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from solver_placement._job import Frontend
from solver_placement._specification.placement_spec import PlacementSpec


def _any_config(config: Mapping[str, Any]) -> bool:
    """The last front end asked: every config not claimed before is read as component_placement."""
    return True


#: The default front end (registered last).
COMPONENT_PLACEMENT = Frontend("component_placement", _any_config, PlacementSpec.from_component_placement)
