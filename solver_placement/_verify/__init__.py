"""Independent verifier: checks placements against every rule of their spec.

Written without the CP-SAT model (``solver``) and without the resolved candidates
(``spec.candidates``): each check re-derives its rule from the spec's own text (segments,
declarative fields, constraints) and the cluster tables, in plain Python, so a bug in the model
or in the resolution cannot hide itself. At scale the checks first test a component's records as
numpy columns (``columns.py``), which can only accept; anything they do not accept is checked
record by record, which words the violations. The checks and the config keys each one owns are
listed in ``registry.CHECKS``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from solver_placement._errors import VerificationError
from solver_placement._records import Placement, collector_paused
from solver_placement._verify.placed import read_placements
from solver_placement._verify.registry import CHECKS, Check

if TYPE_CHECKING:  # a type only: the verifier reads a spec's components and cluster, never the candidates it resolves
    from solver_placement._specification.placement_spec import PlacementSpec

__all__ = ["CHECKS", "Check", "verify"]


def verify(spec: PlacementSpec, placements: Mapping[str, Sequence[Placement]]) -> None:
    """Raise :class:`VerificationError` listing every violated rule of every check; return None
    if all hold. ``placements`` maps component names to their records in rank order."""
    with collector_paused():  # a list per process is read back: no collection walks them meanwhile
        placed = read_placements(spec, placements)
        violations = [violation for check in CHECKS for violation in check.check(placed)]
    if violations:
        raise VerificationError(violations)
