"""The CP-SAT model under construction: ``x[process, candidate]`` and what every rule reads.

One boolean per (process, candidate) pair of the CSR candidate tables (see
:class:`ComponentRequest`), created first and in one batch per request, so a request's literals
are a contiguous slice of the solver's solution vector and the read-out is array slicing.

The context also holds what rules share by *construction*, not by agreement: the per-item
literal tables (``takers``/``used``, built once and cached), the statement guards of explanation
mode and the conflicts that are certain without search. What a rule hands to another rule
(objective terms, stride starts) is returned by its builder instead (see ``rules/rule.py``).

Rank-based components have exactly the candidates the grammar gives them, so their hardware use
is known while building ("determined"); constraints between two determined components reduce to
set arithmetic and cost no variables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from ortools.sat.python import cp_model

from solver_placement.cluster.cluster import Cluster
from solver_placement.solver.assignment import Assignment
from solver_placement.spec.candidates import ComponentRequest
from solver_placement.spec.placement_spec import PlacementSpec

Literal = cp_model.IntVar
#: Per process, the physical ids it held before (the ``changes`` objective term's input).
PreviousHardware = Mapping[str, Sequence[Sequence[int]]]


@dataclass
class ModelContext:
    """The model, its ``x`` literals and the inputs every rule reads.

    Build it with :meth:`create`; ``weights`` and ``previous`` are what the objective is asked
    to weigh (see ``rules/objective.py``).
    """

    spec: PlacementSpec
    requests: dict[str, ComponentRequest]
    explain: bool
    weights: Mapping[str, int]
    previous: PreviousHardware
    model: cp_model.CpModel = field(default_factory=cp_model.CpModel)
    first_var: dict[str, int] = field(default_factory=dict)
    x: dict[str, list[Literal]] = field(default_factory=dict)
    statements: dict[str, Literal] = field(default_factory=dict)
    conflicts: list[str] = field(default_factory=list)
    _used: dict[tuple[str, int], Literal] = field(default_factory=dict)
    _takers: dict[str, dict[int, list[Literal]]] = field(default_factory=dict)

    @classmethod
    def create(
        cls,
        spec: PlacementSpec,
        requests: dict[str, ComponentRequest],
        explain: bool,
        weights: Mapping[str, int],
        previous: PreviousHardware,
    ) -> ModelContext:
        """A model holding one boolean per (process, candidate) pair and nothing else yet."""
        ctx = cls(spec, requests, explain, weights, previous)
        for request in requests.values():
            ctx.first_var[request.name] = len(ctx.model.proto.variables)
            ctx.x[request.name] = [ctx.model.new_bool_var("") for _ in range(request.cand_hw.size)]
        return ctx

    @property
    def cluster(self) -> Cluster:
        return self.spec.cluster

    def guard(self, statement: str) -> list[Literal]:
        """Enforcement literals for a statement's constraints (none unless explaining)."""
        if not self.explain:
            return []
        if statement not in self.statements:
            self.statements[statement] = self.model.new_bool_var(f"holds: {statement}")
        return [self.statements[statement]]

    def conflict(self, statement: str) -> None:
        """Record a statement that is violated whatever the solver does."""
        self.conflicts.append(statement)

    def owner(self, name: str) -> ComponentRequest:
        """The request that places ``name`` (components on one key share the first one's)."""
        spec = self.spec.components[name]
        return self.requests[spec.shares_rule_with or name]

    def copies(self, request: ComponentRequest) -> int:
        """How many components place processes by this request (itself plus shared-rule names)."""
        return 1 + sum(1 for c in self.spec.components.values() if c.shares_rule_with == request.name)

    def used_set(self, request: ComponentRequest) -> frozenset[int]:
        """Physical ids a determined request certainly uses."""
        return frozenset(self.takers(request))

    def takers(self, request: ComponentRequest) -> dict[int, list[Literal]]:
        """Per physical id, the literals of the (process, candidate) pairs that would take it."""
        if request.name not in self._takers:
            order = np.argsort(request.cand_hw, kind="stable")
            hw_sorted = request.cand_hw[order]
            bounds = np.flatnonzero(np.r_[True, hw_sorted[1:] != hw_sorted[:-1], True])
            x = self.x[request.name]
            self._takers[request.name] = {
                int(hw_sorted[lo]): [x[i] for i in order[lo:hi]] for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)
            }
        return self._takers[request.name]

    def used(self, request: ComponentRequest, hw: int) -> Literal | int:
        """1/0 for determined requests, else a literal true iff some process takes ``hw``."""
        if request.determined:
            return int(hw in self.used_set(request))
        key = (request.name, hw)
        if key not in self._used:
            takers = self.takers(request).get(hw, [])
            literal = self.model.new_bool_var(f"{request.name} uses hw{hw}")
            if takers:
                self.model.add_max_equality(literal, takers)
            else:
                self.model.add(literal == 0)
            self._used[key] = literal
        return self._used[key]

    def assignments(self, solution_values: Sequence[int]) -> dict[str, Assignment]:
        """Per component (shared-rule names included), the items taken in a solver solution."""
        values = np.asarray(solution_values, dtype=bool)
        taken_by: dict[str, Assignment] = {}
        for name, request in self.requests.items():
            first = self.first_var[name]
            taken = values[first:first + request.cand_hw.size]
            counts = np.add.reduceat(taken, request.indptr[:-1]) if taken.size else np.zeros(0, dtype=np.int64)
            taken_by[name] = Assignment(
                indptr=np.concatenate(([0], np.cumsum(counts))),
                hardware=request.cand_hw[taken],
                ranks=request.cand_rank[taken],
                num_hardware=self.cluster.num_hardware,
            )
        return {
            spec.name: taken_by[owner]
            for spec in self.spec.components.values()
            if (owner := spec.shares_rule_with or spec.name) in taken_by
        }
