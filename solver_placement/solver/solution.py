"""The solver's answer: a compact process x hardware assignment per component."""

from __future__ import annotations

from dataclasses import dataclass, field

from solver_placement.cluster.cluster import Cluster
from solver_placement.config import did_you_mean
from solver_placement.errors import PlacementConfigError, shown
from solver_placement.records import Placement, build_placements
from solver_placement.solver.assignment import Assignment
from solver_placement.spec.candidates import ComponentRequest
from solver_placement.spec.placement_spec import PlacementSpec


@dataclass(frozen=True)
class Solution:
    """Assignments of every component, plus how the solve went."""

    spec: PlacementSpec
    requests: dict[str, ComponentRequest]
    assignments: dict[str, Assignment]
    status: str
    objective: float | None
    timings: dict[str, float] = field(default_factory=dict)
    _records: dict[tuple[str, bool], list[Placement]] = field(default_factory=dict, repr=False, compare=False)

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
        key = (self._known(component), bool(isolate_accelerator))
        if key not in self._records:
            self._records[key] = self._build_records(*key)
        return list(self._records[key])

    def placements_by_component(self, isolate_accelerator: bool = True) -> dict[str, list[Placement]]:
        return {name: self.placements(name, isolate_accelerator) for name in self.components}

    def _build_records(self, component: str, isolate: bool) -> list[Placement]:
        spec = self.spec.components[component]
        request = self.requests[spec.shares_rule_with or component]
        assignment = self.assignments[component]
        return build_placements(
            component, assignment.indptr, assignment.hardware, assignment.ranks, request.resources, self.cluster, isolate
        )

    def _known(self, component: str) -> str:
        if component not in self.spec.components:
            raise PlacementConfigError(f"unknown component {shown(component)}{did_you_mean(component, self.components, 'components')}")
        return component
