"""A spec of rank strings alone, answered on the count path: nothing is left to choose.

Every item of every component is written in its rank string, so the spec has exactly one
placement, and it has no objective (every term is over declarative components,
``rules/objective.py``): the answer is ``OPTIMAL`` with no objective or bound, as the flat model's
pure feasibility model reports it. Whether it is a placement at all is the only question, and
everything being known, the independent verifier answers it exactly.
When it does not hold, the count path declines, and the exact model, built in milliseconds with
nothing to choose, names the statements the rank strings break, as it did before the count path
answered these specs (the counting bounds refuse some even earlier).
"""

from __future__ import annotations

from collections.abc import Mapping

from solver_placement._errors import VerificationError
from solver_placement._records import placement_records
from solver_placement._solver.answer import Answer, Declined, PathName, by_component
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.options import SolveStatus
from solver_placement._solver.solution import Method
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec
from solver_placement._verify import verify

#: The count path's reason when the rank strings break a rule among themselves.
BROKEN = "rank strings alone that break a rule of the spec (the exact model names which)"


def rank_strings_alone(spec: PlacementSpec, requests: Mapping[str, ComponentRequest]) -> Answer | Declined:
    """The one placement of ``requests`` (every one determined), or why not: it breaks a rule."""
    cluster = spec.cluster
    placed = by_component(spec, {name: Assignment(r.indptr, r.cand_hw, r.cand_rank, cluster.num_hardware) for name, r in requests.items()})
    records = {}  # the records a solution would give, without making one (the answer loop makes it once)
    for name, assignment in placed.items():
        component = spec.components[name]
        resources = requests[component.rule_owner].resources
        records[name] = placement_records(name, assignment.indptr, assignment.hardware, assignment.ranks, resources, cluster, environment=component.environment)
    try:
        verify(spec, records)
    except VerificationError:
        return Declined(PathName.COUNTS, BROKEN)
    model = ("every component placed by its rank string: nothing to choose, the strings checked as written",)
    return Answer(PathName.COUNTS, Method.COUNTS, placed, SolveStatus.OPTIMAL, None, verified_for=spec if requests is spec.requests else None, model=model)


__all__ = ["BROKEN", "rank_strings_alone"]
