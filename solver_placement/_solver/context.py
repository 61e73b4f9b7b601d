"""The CP-SAT model under construction: ``x[process, candidate]`` and what every rule reads.

A declarative request gets one boolean per (process, candidate) pair of the CSR candidate tables
(see :class:`ComponentRequest`), created first and in one batch per request. A rank-based
request's candidates are exactly what its processes take, so outside explanations all its pairs
share one boolean, the request's *layout* literal, which the amount rule sets: 100,000 processes
cost one variable and no Python work per pair, and CP-SAT still decides the model they are part
of. Explanations need every segment's statement on its own pairs, so ``explain=True`` gives
rank-based requests their own booleans too. ``var_index`` maps every pair to its variable, so
the read-out is one gather from the solver's solution vector.

The context also holds what rules share by *construction*, not by agreement: the per-item
literal tables (``takers``/``used``, built once and cached), the statement guards of explanation
mode and the conflicts that are certain without search. What a rule hands to another rule
(objective terms, stride starts) is returned by its builder instead (see ``rules/rule.py``).

Rank-based components have exactly the candidates the grammar gives them, so their hardware use
is known while building ("determined"); constraints between two determined components reduce to
set arithmetic and cost no variables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import Statement
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.lean_model import LeanCpModel
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec

Literal = cp_model.IntVar
T = TypeVar("T")

#: (Process, candidate) pairs a per-pair loop handles between two budget checks: a pair costs
#: about 1 us to handle and a check 0.2 us, so checks cost under 1% and come every ~1 ms.
PAIRS_PER_CHECK = 1024
#: Variables created between two budget checks (one variable costs ~2 us).
VARIABLES_PER_CHECK = 50_000


def _never_stop(stage: str) -> None:
    """The default ``check``: building without a budget never stops early."""


#: Per process, the physical ids it held before (the ``changes`` objective term's input).
PreviousHardware = Mapping[str, Sequence[Sequence[int]]]


@dataclass
class ModelContext:
    """The model, its ``x`` literals and the inputs every rule reads.

    Build it with :meth:`create`; ``weights`` and ``previous`` are what the objective is asked
    to weigh (see ``rules/objective.py``); ``check(stage)`` raises when the call's time is up
    (by default it never does), and rules run every loop that grows with the spec through
    :meth:`paced`, which calls it.
    """

    spec: PlacementSpec
    requests: dict[str, ComponentRequest]
    explain: bool
    weights: Mapping[str, int]
    previous: PreviousHardware
    model: cp_model.CpModel = field(default_factory=LeanCpModel)
    var_index: dict[str, np.ndarray] = field(default_factory=dict)
    x: dict[str, list[Literal]] = field(default_factory=dict)
    layouts: dict[str, Literal] = field(default_factory=dict)
    check: Callable[[str], None] = field(default=_never_stop, repr=False)
    statements: dict[Statement, Literal] = field(default_factory=dict)
    conflicts: list[Statement] = field(default_factory=list)
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
        check: Callable[[str], None] = _never_stop,
    ) -> ModelContext:
        """A model holding the ``x`` literals of every request and nothing else yet; ``check``
        is called between batches of variables (and kept for the rules)."""
        ctx = cls(spec, requests, explain, weights, previous, check=check)
        for request in requests.values():
            pairs = int(request.cand_hw.size)
            first = len(ctx.model.proto.variables)
            if request.determined and not explain:
                layout = ctx.model.new_bool_var(f"{request.name} takes the hardware its ranks give")
                ctx.layouts[request.name] = layout
                ctx.x[request.name] = [layout] * pairs
                ctx.var_index[request.name] = np.full(pairs, first, dtype=np.int64)
            else:
                ctx.x[request.name] = ctx._new_literals(pairs, f"building the model (creating {request.name}'s variables)")
                ctx.var_index[request.name] = np.arange(first, first + pairs, dtype=np.int64)
        return ctx

    def _new_literals(self, count: int, stage: str) -> list[Literal]:
        """``count`` fresh booleans, created in batches with a budget check before each."""
        literals: list[Literal] = []
        for start in range(0, count, VARIABLES_PER_CHECK):
            self.check(stage)
            literals.extend(self.model.new_bool_var("") for _ in range(min(VARIABLES_PER_CHECK, count - start)))
        return literals

    def paced(self, items: Iterable[T], stage: str, every: int = 1) -> Iterator[T]:
        """``items``, with a budget check before every ``every``-th of them.

        Every loop of a rule that grows with the spec iterates through this, so no stretch of
        building between two checks grows with the spec and the time limit holds while
        building, not only while searching. Loops over processes, items or groups check at
        every step (a step handles up to thousands of pairs at 512 nodes, ~30 ms); loops over
        single pairs pass ``every=PAIRS_PER_CHECK``.
        """
        for position, item in enumerate(items):
            if position % every == 0:
                self.check(f"building the model ({stage})")
            yield item

    @property
    def cluster(self) -> Cluster:
        return self.spec.cluster

    def guard(self, statement: Statement) -> list[Literal]:
        """Enforcement literals for a statement's constraints (none unless explaining)."""
        if not self.explain:
            return []
        if statement not in self.statements:
            self.statements[statement] = self.model.new_bool_var(f"holds: {statement.text}")
        return [self.statements[statement]]

    def conflict(self, statement: Statement) -> None:
        """Record a statement that is violated whatever the solver does."""
        self.conflicts.append(statement)

    def owner(self, name: str) -> ComponentRequest:
        """The request that places ``name`` (components on one key share the first one's)."""
        return self.requests[self.spec.owner_of(name)]

    def copies(self, request: ComponentRequest) -> int:
        """How many components place processes by this request (itself plus shared-rule names)."""
        return 1 + sum(1 for c in self.spec.components.values() if c.shares_rule_with == request.name)

    def used_set(self, request: ComponentRequest) -> frozenset[int]:
        """Physical ids a determined request certainly uses (``distinct``: numpy's hash-based
        ``unique`` took 0.5 s on a re-plan's 264,000 pinned items)."""
        return frozenset(request.window_items.tolist())

    def takers(self, request: ComponentRequest) -> dict[int, list[Literal]]:
        """Per physical id, the literals of the (process, candidate) pairs that would take it."""
        if request.name not in self._takers:
            order = np.argsort(request.cand_hw, kind="stable")
            hw_sorted = request.cand_hw[order]
            bounds = np.flatnonzero(np.r_[True, hw_sorted[1:] != hw_sorted[:-1], True]) if hw_sorted.size else np.zeros(1, dtype=np.int64)
            x = self.x[request.name]
            spans = zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)
            self._takers[request.name] = {
                int(hw_sorted[lo]): [x[i] for i in order[lo:hi].tolist()] for lo, hi in self.paced(spans, f"{request.name}'s items")
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

    def hint(self, assignments: Mapping[str, Assignment]) -> None:
        """Offer ``assignments`` (by request) to CP-SAT as a first solution: every ``x`` literal
        of a free request hinted 1 where its process holds that item, else 0. CP-SAT completes
        the auxiliary variables itself; a hint steers the search but never restricts it."""
        hints = self.model.proto.solution_hint
        width = self.cluster.num_hardware
        for name, request in self.requests.items():
            if request.determined or name not in assignments:
                continue
            held = assignments[name]
            holder = np.repeat(np.arange(held.num_processes), np.diff(held.indptr))
            taken = np.isin(request.cand_process * width + request.cand_hw, holder * width + held.hardware)
            hints.vars.extend(self.var_index[name].tolist())
            hints.values.extend(taken.astype(np.int64).tolist())

    def assignments(self, solution_values: Sequence[int]) -> dict[str, Assignment]:
        """Per component (shared-rule names included), the items taken in a solver solution."""
        values = np.asarray(solution_values, dtype=bool)
        taken_by: dict[str, Assignment] = {}
        for name, request in self.requests.items():
            taken = values[self.var_index[name]]
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
            if (owner := spec.rule_owner) in taken_by
        }
