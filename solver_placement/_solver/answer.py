"""What each path of the solver returns: an answer, or the reason it declined, in one shape.

The count model, first fit and the flat exact model are tried one
after another by ``loop.py``; each hands back an :class:`Answer` (assignments of every component
and what it proves) or a :class:`Declined` naming the path and why, so the loop compares,
verifies and reports them all the same way. Infeasibility and timeouts stay errors: they end the
call (a timeout only after the loop has kept what it already has).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

from solver_placement._errors import InternalError
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.options import SolveStatus
from solver_placement._solver.solution import Method
from solver_placement._specification.placement_spec import PlacementSpec


class PathName(StrEnum):
    """The solver's paths, in the words the notes, logs and errors use for them."""

    COUNTS = "the count model"
    FIRST_FIT = "first fit"
    EXACT = "the exact model"


@dataclass(frozen=True)
class Answer:
    """One path's placement: assignments by component name and what the path proves of them.

    ``objective`` is on the path's own scale (the count model's leaves ``contiguity`` out, as
    its tie-break); ``primary`` is the objective without ``contiguity`` when the path knows it
    (the count model's and first fit's), which is how first fit is held against the counting
    bound and against the count model. ``bound`` is None when the path proves none.
    ``verified_for`` is the spec whose rules the independent verifier already found these
    assignments to keep, when the path had to ask it (rank strings alone: whether they hold is
    the path's only question), so the loop does not ask again for that same spec.
    ``model`` says which of the path's exact models answered and why it was that one, outermost
    step first (a restriction tried first, a view per kind of hardware, then the model solved):
    the loop puts it in the solution's notes, so a user reads how the answer was proven.
    """

    path: PathName
    method: Method
    assignments: dict[str, Assignment]
    status: SolveStatus
    objective: int | None
    bound: int | None = None
    primary: int | None = None
    verified_for: PlacementSpec | None = None
    model: tuple[str, ...] = ()

    def known(self, field: str) -> int:
        """``objective``, ``bound`` or ``primary``, where the path always knows it (the count
        model's values and bound, first fit's values): None there is a bug of the path."""
        value = getattr(self, field)
        if value is None:
            raise InternalError(f"{self.path}'s answer has no {field}")
        return int(value)


@dataclass(frozen=True)
class Declined:
    """A path that gives no answer, and why, in words a note or a log line can carry; ``bound``
    is a lower bound on the objective it proved before it stopped (on the scale of its answers),
    which the loop holds other answers against: a relaxation it solved, say."""

    path: PathName
    reason: str
    bound: int | None = None


def through(answer: Answer, step: str) -> Answer:
    """``answer`` with ``step`` (a way its path took to reach the model that answered, and why)
    before the steps it already names."""
    return replace(answer, model=(step, *answer.model))


def by_component(spec: PlacementSpec, by_request: Mapping[str, Assignment]) -> dict[str, Assignment]:
    """Assignments of every component from those of the rule-owning requests (a shared-rule
    name reuses its key's first request), the form every :class:`Answer` holds."""
    return {c.name: by_request[c.rule_owner] for c in spec.components.values()}
