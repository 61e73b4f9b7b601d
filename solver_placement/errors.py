"""The one error family of solver_placement.

Every user-facing failure is a :class:`PlacementError` (a ``ValueError``), so callers can catch a
single type. Subclasses tell *which stage* refused the input; the message always names the
component, the offending text (segment, key or label) and the rule that was broken, in the
user's own words.
"""

from __future__ import annotations

from collections.abc import Sequence


class PlacementError(ValueError):
    """Base class of every error raised on bad input or an impossible placement."""


class PlacementSyntaxError(PlacementError):
    """A rank expression or placement string does not follow the grammar."""


class PlacementConfigError(PlacementError):
    """A configuration value is well formed but not acceptable (unknown label, bad type, ...)."""


class InfeasiblePlacementError(PlacementError):
    """The solver proved that no placement satisfies the spec.

    ``conflicts`` holds the user statements (component, source text, rule) that cannot all hold
    together; the message lists them.
    """

    def __init__(self, message: str, conflicts: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.conflicts: tuple[str, ...] = tuple(conflicts)


class SolverTimeoutError(PlacementError):
    """The solver hit its time limit before finding a placement or proving there is none."""


class VerificationError(PlacementError):
    """A placement violates a rule of its spec (raised by :func:`solver_placement.verify`)."""

    def __init__(self, violations: Sequence[str]) -> None:
        self.violations: tuple[str, ...] = tuple(violations)
        shown = "\n  - ".join(self.violations[:20])
        more = f"\n  ... and {len(self.violations) - 20} more" if len(self.violations) > 20 else ""
        super().__init__(f"{len(self.violations)} placement rule(s) violated:\n  - {shown}{more}")
