"""The solver's answer: a compact process x hardware assignment per component."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum

from solver_placement._cluster.cluster import Cluster
from solver_placement._config import did_you_mean
from solver_placement._errors import PlacementConfigError, shown
from solver_placement._records import Placement, PlacementRecords, placement_records
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.options import SolveStatus
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec


class Method(StrEnum):
    """What produced a solution's assignments: a string enum, so it compares, prints and
    serialises as the text it always was (``Method.FIRST_FIT == "first fit"``)."""

    COUNTS = "counts"  # the count model
    FIRST_FIT = "first fit"  # the construction
    SEARCH = "search"  # the flat CP-SAT model


@dataclass(frozen=True)
class Solution:
    """Assignments of every component, plus how the solve went.

    ``status`` is ``OPTIMAL`` when the objective is proven best, ``FEASIBLE`` otherwise;
    ``bound`` is the best lower bound on the objective the search proved (None when it proved
    none), so :attr:`gap` says how far a ``FEASIBLE`` answer may be from the best.
    ``method`` names what produced the assignments: ``counts`` (the count model, whose
    objective is the ``nodes`` and ``balance`` terms, ``contiguity`` ordering equal answers),
    ``search`` (the flat CP-SAT model) or ``first fit`` (the
    construction, kept when the search found nothing better in time). ``notes`` say how the answer
    was reached: why a path before it was not taken (the rule that sent a spec from the count
    model to the flat one), then, last, the path that answered and how it proved its answer (for
    the count model, which of its exact models counted it and why that one).
    """

    spec: PlacementSpec
    requests: dict[str, ComponentRequest]
    assignments: dict[str, Assignment]
    status: SolveStatus
    objective: float | None
    timings: dict[str, float] = field(default_factory=dict)
    bound: float | None = None
    method: Method = Method.SEARCH
    notes: tuple[str, ...] = ()
    #: Records kept once per (component, isolate), never passed in: a ``dataclasses.replace``
    #: copy with other assignments starts with none, so it cannot hand out the old ones.
    _records: dict[tuple[str, bool], PlacementRecords] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Status and method as their enums even when a caller passes their text (``"FEASIBLE"``),
        so every solution reads the same way whoever built it."""
        object.__setattr__(self, "status", SolveStatus(self.status))
        object.__setattr__(self, "method", Method(self.method))

    @property
    def gap(self) -> float | None:
        """``(objective - bound) / objective``: 0 when proven optimal, None when either is unknown."""
        if self.status == SolveStatus.OPTIMAL:
            return 0.0
        if self.objective is None or self.bound is None:
            return None
        return max(0.0, self.objective - self.bound) / max(abs(self.objective), 1.0)

    @property
    def components(self) -> list[str]:
        return self.spec.names

    @property
    def cluster(self) -> Cluster:
        return self.spec.cluster

    def assignment(self, component: str) -> Assignment:
        return self.assignments[self._known(component)]

    def placements(self, component: str, isolate_accelerator: bool = True) -> list[Placement]:
        """RLinf-style placement records of one component, ordered by rank.

        Built once per component and ``isolate_accelerator`` value: every later call (every
        ``get_placement`` of a strategy served by this solution) gets the same frozen records in a
        new list, so a caller that sorts or extends its list cannot change what others are given.
        """
        return list(self.placement_records(isolate_accelerator, [self._known(component)])[component])

    def placements_by_component(self, isolate_accelerator: bool = True) -> dict[str, list[Placement]]:
        return {name: self.placements(name, isolate_accelerator) for name in self.components}

    def placement_records(self, isolate_accelerator: bool = True, components: list[str] | None = None) -> dict[str, PlacementRecords]:
        """The records of ``components`` (default: all) as :class:`PlacementRecords`, made when
        first read: what the answer loop verifies, which reads their columns without making them
        where it can, and what :meth:`placements` hands out afterwards (the same objects)."""
        found = {}
        for name in self.components if components is None else components:
            key = (name, bool(isolate_accelerator))
            if key not in self._records:
                self._records[key] = self._records_of(*key)
            found[name] = self._records[key]
        return found

    def restated(self, status: SolveStatus, objective: float | None, bound: float | None, timings: dict[str, float], notes: tuple[str, ...]) -> Solution:
        """The same assignments as another answer (``status``, ``objective``, ``bound``, ``timings``,
        ``notes``), keeping the records already made: they follow from the assignments alone, so
        a placement verified before it was chosen is not made again (first fit's, ``loop.py``)."""
        copy = replace(self, status=status, objective=objective, bound=bound, timings=timings, notes=notes)
        copy._records.update(self._records)
        return copy

    def tensor_parallel_size(self, component: str) -> int:
        """The component's tensor-parallel group size as its spec states it (what a figure brackets)."""
        return self.spec.components[self._known(component)].constraints.tensor_parallel_size

    def _records_of(self, component: str, isolate: bool) -> PlacementRecords:
        spec = self.spec.components[component]
        request = self.requests[spec.rule_owner]
        assignment = self.assignments[component]
        return placement_records(
            component, assignment.indptr, assignment.hardware, assignment.ranks, request.resources, self.cluster, isolate, spec.environment
        )

    def _known(self, component: str) -> str:
        if component not in self.spec.components:
            raise PlacementConfigError(f"unknown component {shown(component)}{did_you_mean(component, self.components, 'components')}")
        return component
