"""The exact flat model alone (one boolean per process and item), the independent formulation
the count model is held against: ``solve`` answers by counts wherever it can, with any weights,
so a test that needs the flat model's own optimum builds and solves it here, and a test of the
paths after the count model (the loop, first fit, the exact model) keeps the count model out."""

from __future__ import annotations

import importlib
import math
from collections.abc import Mapping

import pytest
from hypothesis import event, note
from ortools.sat.python import cp_model

from solver_placement import Cluster, InfeasiblePlacementError, PlacementSpec, Solution, solve
from solver_placement._solver.answer import Answer, Declined, PathName, by_component
from solver_placement._solver.build import build_model
from solver_placement._solver.counting import counting_conflicts
from solver_placement._solver.counts import count_path
from solver_placement._solver.exact import solve_polished
from solver_placement._solver.options import SolverOptions
from solver_placement._solver.solution import Method
from solver_placement._solver_settings import DEFAULT_WEIGHTS
from solver_placement._specification.candidates import ComponentRequest, expand_all

#: The terms both models prove: ``contiguity`` is only the count model's tie-break at its
#: default weight, so property tests compare the rest.
PRIMARY = {**DEFAULT_WEIGHTS, "contiguity": 0}

#: Wall seconds the reference may take to prove its optimum. The specs are tiny and a quiet
#: machine proves them in well under a second, but CI's two cores shared with other work can
#: stretch that tenfold, and a reference cut short compares nothing (CP-SAT ends as soon as it
#: proves, so a generous limit costs nothing where the proof comes fast).
REFERENCE_LIMIT_S = 60.0


def flat_solution(
    spec: PlacementSpec, objective: Mapping[str, int] | None = None, previous: Mapping[str, list[list[int]]] | None = None, unproven_after_s: float | None = None
) -> Solution:
    """The flat model's proven optimum for ``spec`` with ``objective`` over the default weights
    (and the hardware each process held before, for ``changes``); with ``unproven_after_s``, its
    best answer and bound after that many seconds, proven or not (for a spec the flat model
    takes a minute to prove, where its bound and answer bracketing ours is the check)."""
    weights = {**DEFAULT_WEIGHTS, **(objective or {})}
    ctx = build_model(spec, expand_all(spec.requests), weights=weights, previous=previous or {})
    options = SolverOptions(time_limit_s=unproven_after_s or REFERENCE_LIMIT_S)
    solver, status = solve_polished(ctx, options, options.start())
    name = solver.status_name(status)
    assert name == "OPTIMAL" or (unproven_after_s and name == "FEASIBLE"), f"the flat model proved no optimum in {options.time_limit_s:g} s: {name}"
    assignments = by_component(spec, ctx.assignments(solver.response_proto.solution))
    value, bound = round(solver.objective_value), math.ceil(solver.best_objective_bound - 1e-6)
    return Solution(spec, spec.requests, assignments, name, value, {}, bound=bound, method=Method.SEARCH)


def flat_optimum(spec: PlacementSpec, requests: Mapping[str, ComponentRequest] | None = None, weights: Mapping[str, int] = PRIMARY) -> int | None:
    """The flat model's proven optimum of ``requests`` (the spec's own unless given) under
    ``weights``, or None when no placement exists: the model's statements contradict before any
    search, CP-SAT proves it infeasible, or, for the spec's own requests, the counting bounds
    refute it (as in ``solve``, which never builds the flat model of a spec counting refutes: a
    pigeonhole the flat model may not prove within any limit)."""
    own = requests is None or all(request is spec.requests.get(name) for name, request in requests.items())
    if own and counting_conflicts(spec, SolverOptions(REFERENCE_LIMIT_S).start()):
        return None
    ctx = build_model(spec, expand_all(dict(spec.requests if requests is None else requests)), weights=dict(weights))
    if ctx.conflicts:
        return None
    solver, status = solve_polished(ctx, SolverOptions(REFERENCE_LIMIT_S, 1, 0), SolverOptions(REFERENCE_LIMIT_S).start())
    if status == cp_model.INFEASIBLE:
        return None
    assert status == cp_model.OPTIMAL, f"the flat model proved no optimum in {REFERENCE_LIMIT_S:g} s: {solver.status_name(status)}"
    return round(solver.objective_value)


def count_answer(spec: PlacementSpec, requests: Mapping[str, ComponentRequest] | None = None, weights: Mapping[str, int] = PRIMARY) -> Answer | Declined:
    """The count path alone on ``spec`` (its own requests unless ``requests``; one worker, 10 s):
    the answer a property test holds against the flat optimum, or the reason it declined."""
    return count_path(spec, dict(spec.requests if requests is None else requests), weights, SolverOptions(10.0, 1, 0), SolverOptions(10.0).start())


def counted_case(cluster: Cluster, placement: dict) -> tuple[PlacementSpec, Answer | Declined] | None:
    """A property test's drawn case, noted: its spec and the count path's answer (a decline's
    reason noted too), or None when building the spec already refuses it."""
    note(f"{cluster.gpus_per_node.tolist()} {cluster.node_labels} {placement}")
    spec = built_or_refused(cluster, placement)
    if spec is None:
        return None
    answer = count_answer(spec)
    if isinstance(answer, Declined):
        note(answer.reason)
    return spec, answer


def counts_kept_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """``solve``'s count path declines every spec for the rest of the test, so the paths after it
    answer (first fit, the exact model)."""
    paths = importlib.import_module("solver_placement._solver.solve")
    monkeypatch.setattr(paths, "_count_answer", lambda call: Declined(PathName.COUNTS, "kept out by the test"))


def built_or_refused(cluster: Cluster, placement: dict) -> PlacementSpec | None:
    """A property test's spec, or None (a hypothesis event) when building it already refuses it
    as infeasible: the counting bounds answer such a draw before any path runs."""
    try:
        return PlacementSpec.build(cluster, placement)
    except InfeasiblePlacementError:
        event("refused when built")
        return None


def solved_or_refused(cluster: Cluster, placement: dict, objective: Mapping[str, int]) -> tuple[PlacementSpec, Solution] | None:
    """A property test's spec and ``solve``'s answer, or None (a hypothesis event) when either
    refuses it as infeasible."""
    spec = built_or_refused(cluster, placement)
    if spec is None:
        return None
    try:
        return spec, solve(spec, time_limit_s=10, objective=objective)
    except InfeasiblePlacementError:
        event("refused by solve")
        return None
