"""Solving a spec: build the CP-SAT model, run it deterministically, read out assignments.

Model, solve and read-out are three separate steps. The search is deterministic: a fixed seed
and CP-SAT's interleaved search, whose result does not depend on the number of workers. Every
CP-SAT run of one call (decomposition, exact model, polish, explanation) shares one
:class:`Budget` of ``time_limit_s``. An infeasible spec is explained by ``explain.py``: the
statements CP-SAT names as conflicting make up the error message.

Each call logs (``logging``, this module's logger, silent unless configured) the spec's size,
which path answered and why the ones before it did not, and the exact model's statistics.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ortools.sat.python import cp_model

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import InternalError, PlacementConfigError, PlacementError, SolverTimeoutError, Statement, VerificationError
from solver_placement._records import Placement
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.bounds.objective import objective_lower_bound
from solver_placement._solver.build import build_model, fixed_conflicts
from solver_placement._solver.counting import counting_conflicts
from solver_placement._solver.counts import count_path
from solver_placement._solver.counts.narrowing import narrow, should_aggregate, solve_per_node
from solver_placement._solver.counts.node_level import node_level_conflicts
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.exact import check_build_fits, solve_polished, spec_options
from solver_placement._solver.explain import explain_spec, infeasible_error
from solver_placement._solver.first_fit import first_fit
from solver_placement._solver.options import Budget, SolverOptions, Status
from solver_placement._solver.rules.objective import DEFAULT_WEIGHTS, SECTION_KEY, objective_weights
from solver_placement._solver.solution import Solution
from solver_placement._specification.candidates import expand_all
from solver_placement._specification.placement_spec import PlacementSpec, SpecSource, spec_of
from solver_placement._verify import verify

PreviousPlacements = Solution | Mapping[str, Sequence[Placement]]

log = logging.getLogger(__name__)


#: The part of what is left of the time limit the count model may take: when it cannot answer
#: in that, the flat model still gets the rest.
COUNT_SHARE = 0.5
#: How far below an integer CP-SAT's float bound may sit and still prove that integer.
BOUND_TOLERANCE = 1e-6
#: A first-fit placement within this fraction of the counting bound is the answer when the
#: count model declines: the flat model rarely improves it within a person's wait, and the
#: answer says its gap.
ACCEPTED_GAP = 0.01


@dataclass
class _Call:
    """One call of :func:`solve`: its inputs, its one budget and where the time went."""

    spec: PlacementSpec
    options: SolverOptions
    budget: Budget
    weights: dict[str, int]  # every term's weight, defaults included
    weighs_contiguity: bool  # the user weighed contiguity: it is a term, not only a tie-break
    clock: dict[str, float] = field(default_factory=lambda: {"count": 0.0, "construct": 0.0, "build": 0.0, "solve": 0.0})
    notes: list[str] = field(default_factory=list)
    first_fit_verified: bool | None = None  # None: not checked yet

    @contextmanager
    def timed(self, key: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.clock[key] += time.perf_counter() - started


def solve(
    source: SpecSource,
    *,
    cluster: Cluster | None = None,
    time_limit_s: float | None = None,
    num_workers: int | None = None,
    seed: int | None = None,
    objective: Mapping[str, int] | None = None,
    previous: PreviousPlacements | None = None,
) -> Solution:
    """Place every component of ``source`` (a spec, a job, a YAML path, a dict or a DictConfig).

    Keyword arguments override the config's ``cluster.solver`` section; ``objective`` weighs
    the terms of the objective (see ``rules/objective.py``); ``previous`` (an earlier solution
    or its placements) makes the ``changes`` term count the processes that move. Raises a
    :class:`PlacementError` subclass on bad input, :class:`InfeasiblePlacementError` naming the
    conflicting statements, or :class:`SolverTimeoutError`.
    """
    started = time.perf_counter()
    spec = spec_of(source, cluster)
    options = spec_options(spec, time_limit_s=time_limit_s, num_workers=num_workers, seed=seed)
    asked = objective_weights(spec.solver_options.get(SECTION_KEY, {}), objective)
    call = _Call(spec, options, options.start(at=started), {**DEFAULT_WEIGHTS, **asked}, weighs_contiguity="contiguity" in asked)
    _log_size(spec, options)
    try:
        solution = _solved(call, previous, started)
    except PlacementError as error:
        log.info("no placement after %.3f s: %s", time.perf_counter() - started, type(error).__name__)
        raise
    log.info(
        "placed by %s: %s, objective %s, bound %s, in %.3f s",
        solution.method, solution.status, solution.objective, solution.bound, time.perf_counter() - started,
    )  # fmt: skip
    return solution


def _log_size(spec: PlacementSpec, options: SolverOptions) -> None:
    """The spec's size, the first thing someone debugging a slow or refused solve asks for."""
    if not log.isEnabledFor(logging.INFO):
        return
    requests = spec.requests.values()
    free = [request for request in requests if not request.determined]
    log.info(
        "solving %d component(s), %d process(es), %d declarative with %d candidate pairs, on %d node(s) with %d hardware items "
        "(time limit %g s, %d worker(s))",
        len(spec.components), sum(request.num_processes for request in requests), len(free), sum(request.candidate_pairs for request in free),
        spec.cluster.num_nodes, spec.cluster.num_hardware, options.time_limit_s, options.num_workers,
    )  # fmt: skip
    for request in requests:
        log.debug(
            "%s: %d process(es), %s, %d candidate pairs",
            request.name, request.num_processes, "rank strings" if request.determined else "declarative", request.candidate_pairs,
        )  # fmt: skip


def _solved(call: _Call, previous: PreviousPlacements | None, started: float) -> Solution:
    """:func:`solve`'s answer: counting first, then the count model, first fit and the search."""
    spec = call.spec
    call.budget.check("resolving the spec")
    conflicts = counting_conflicts(spec, call.budget)
    if conflicts:  # impossible by counting: no model is built
        log.info("the counting bounds prove the spec infeasible (%d statement(s)): no model is built", len(conflicts))
        raise infeasible_error(conflicts)
    log.debug("the counting bounds find no conflict")
    held_before = _previous_hardware(spec, previous)
    timings = {"parse": time.perf_counter() - started}
    fixed = fixed_conflicts(spec, call.budget)
    if fixed:  # rank strings that break their own rules: no path can place them
        log.info("the rank-string components break their own rules (%d statement(s))", len(fixed))
        raise infeasible_error(fixed)
    counted = None if held_before else _counted(call, timings)  # exact by construction, its own share of the time
    if counted is not None and counted.status == "OPTIMAL":
        return counted
    constructed = _constructed(call, held_before)  # milliseconds: the hint, and the answer of last resort
    bound = None if held_before or call.weighs_contiguity else objective_lower_bound(spec, call.weights)
    if counted is None:
        for gap in (0.0, ACCEPTED_GAP):  # meets the counting bound: proven best; within the accepted gap: no search
            if (close := _within(call, constructed, bound, gap)) is not None:
                log.info("first fit's placement %s the counting bound %d: no search", f"is within {gap:.0%} of" if gap else "meets", bound)
                return _answer(call, close, timings, bound, against_bound=True)
    try:
        found = counted or _searched(call, held_before, constructed, timings)
    except SolverTimeoutError as timeout:
        log.info("the search ran out of time; first fit's placement is the answer if there is one")
        return _kept(call, None, constructed, timings, timeout, bound)
    return _kept(call, found, constructed, timings)


def _kept(
    call: _Call,
    found: Solution | None,
    constructed: _Constructed | None,
    timings: dict[str, float],
    timeout: SolverTimeoutError | None = None,
    bound: int | None = None,
) -> Solution:
    """The better of the search's answer and first fit's (never worse than first fit); first
    fit's only once the independent verifier accepts it. Raises ``timeout`` when neither exists.
    ``bound`` is the counting bound on the weighted terms, when first fit is measured against it."""
    if constructed is not None and (found is None or (found.objective or 0) > _comparable(found, constructed)) and _verified(call, constructed):
        if found is not None:
            log.info("first fit's placement (objective %d) is better than the search's (%s): kept", _comparable(found, constructed), found.objective)
        return _answer(call, constructed, timings, bound if found is None else found.bound, against_bound=bound is not None)
    if found is None:
        raise timeout or InternalError("no answer and no timeout")
    return found


def _within(call: _Call, constructed: _Constructed | None, bound: int | None, gap: float) -> _Constructed | None:
    """First fit's placement when it is within ``gap`` of the counting bound and verified."""
    if constructed is None or bound is None or constructed.primary > (1 + gap) * bound:
        return None
    return constructed if _verified(call, constructed) else None


def _verified(call: _Call, constructed: _Constructed) -> bool:
    """Whether the independent verifier accepts first fit's placement (checked once per call)."""
    if call.first_fit_verified is None:
        try:
            verify(call.spec, _by_component(call.spec, constructed.assignments, "FEASIBLE", objective=None).placements_by_component())
            call.first_fit_verified = True
        except VerificationError:
            log.info("first fit's placement breaks a rule the construction does not model: not used")
            call.notes.append("first fit (its placement breaks a rule the construction does not model)")
            call.first_fit_verified = False
    return call.first_fit_verified


def _comparable(found: Solution, constructed: _Constructed) -> int:
    """First fit's value on the found answer's scale (the count path leaves contiguity out)."""
    return constructed.primary if found.method == "counts" else constructed.value


def _counted(call: _Call, timings: dict[str, float]) -> Solution | None:
    """The count path's answer; None when it declines (its reason goes in the call's notes,
    which every later answer carries). Its layouts are exact by construction; the tests check
    them with the independent verifier, which costs more than the path itself at scale."""
    spec = call.spec
    if call.weighs_contiguity:
        log.info("the count model declined: contiguity is weighed as asked, not only as a tie-break")
        call.notes.append("the count model (declined: contiguity is weighed as asked, not only as a tie-break)")
        return None
    share = Budget(time.perf_counter() + COUNT_SHARE * call.budget.remaining(), call.budget.limit_s)
    with call.timed("count"):
        try:
            answer = count_path(spec, spec.requests, call.weights, call.options, share)
        except SolverTimeoutError:
            answer = f"its share of the time limit ({COUNT_SHARE:.0%}) ran out"
    if isinstance(answer, str):
        log.info("the count model declined: %s", answer)
        call.notes.append(f"the count model (declined: {answer})")
        return None
    log.debug("the count model answered: %s, objective %d, bound %d", answer.status, answer.value, answer.bound)
    return _by_component(
        spec, answer.assignments, answer.status, objective=answer.value, timings={**timings, **call.clock}, bound=answer.bound, method="counts"
    )


@dataclass(frozen=True)
class _Constructed:
    """The first-fit placement (not yet verified) with its objective value (``primary``:
    without the ``contiguity`` term, as the count model weighs answers)."""

    assignments: dict[str, Assignment]  # by rule-owning request
    value: int
    primary: int


def _constructed(call: _Call, held_before: dict[str, list[list[int]]]) -> _Constructed | None:
    """The first-fit placement of the spec, if it builds: the search's hint, and the answer when
    it is better than the search's (verified then, see :func:`_kept`)."""
    spec = call.spec
    with call.timed("construct"):
        primary = {**call.weights, "contiguity": 0}

        def values(built: dict[str, Assignment]) -> tuple[int, int]:
            """(without contiguity, with it): the weighted terms first, contiguity breaks ties."""
            return objective_value(spec, spec.requests, built, primary, held_before), objective_value(spec, spec.requests, built, call.weights, held_before)

        try:
            built = first_fit(spec, spec.requests, call.budget, values)
        except SolverTimeoutError:
            log.info("first fit ran out of time")
            built = None
        if built is None:
            log.info("first fit built no placement (the construction cannot state the spec, or no order left every component room)")
            return None
        without, value = values(built)
        log.debug("first fit placed every component: objective %d (%d without contiguity)", value, without)
        return _Constructed(built, value, without)


def _by_component(spec: PlacementSpec, by_request: dict[str, Assignment], status: str, **details: Any) -> Solution:
    """A solution naming every component (shared-rule names reuse their key's first request)."""
    assignments = {c.name: by_request[c.rule_owner] for c in spec.components.values()}
    return Solution(spec, spec.requests, assignments, status, **details)


def _answer(call: _Call, constructed: _Constructed, timings: dict[str, float], bound: float | None = None, against_bound: bool = False) -> Solution:
    """The first-fit placement as the answer: proven optimal only when it meets the bound. Against
    the counting bound (``against_bound``) it is measured without contiguity, a tie-break there."""
    value = constructed.primary if against_bound else constructed.value
    status = "OPTIMAL" if bound is not None and value <= bound else "FEASIBLE"
    return _by_component(
        call.spec, constructed.assignments, status, objective=value, timings={**timings, **call.clock}, bound=bound,
        method="first fit", notes=tuple(call.notes),
    )


def _searched(call: _Call, held_before: dict[str, list[list[int]]], constructed: _Constructed | None, timings: dict[str, float]) -> Solution:
    """The search's answer: the node-level decomposition at scale, else the exact flat model."""
    spec = call.spec
    tried = [*call.notes, *([] if constructed is not None else ["first fit (no placement)"])]
    if not held_before and should_aggregate(spec, spec.requests):
        tried.append("the node-level decomposition (no layout found)")
        log.info("solving by node-level decomposition")
        decomposed = _decomposed(call)
        if decomposed is None:
            log.info("the node-level decomposition found no layout: the exact model decides")
        else:
            # optimal per stage, not proven optimal for the whole spec
            value = objective_value(spec, spec.requests, decomposed, call.weights, held_before)
            log.info("the node-level decomposition placed every component: objective %d", value)
            return Solution(spec, spec.requests, decomposed, "FEASIBLE", value, {**timings, **call.clock}, notes=tuple(call.notes))
    return _exact(call, held_before, tried, timings, constructed)


def _decomposed(call: _Call) -> dict[str, Assignment] | None:
    """Assignments of every component by the node-level decomposition, None if it fails."""
    spec = call.spec
    with call.timed("solve"):
        narrowed = narrow(spec, spec.requests, call.weights, call.options, call.budget)
        if narrowed == cp_model.INFEASIBLE:  # proved at node level when stage 1 relaxes the spec
            conflicts = node_level_conflicts(spec, spec.requests, call.budget)
            if conflicts:
                raise infeasible_error(conflicts)
        found = solve_per_node(spec, narrowed, call.weights, call.options, call.budget) if isinstance(narrowed, dict) else None
    if found is None:
        return None
    return {c.name: found[c.rule_owner] for c in spec.components.values()}


def _exact(
    call: _Call, held_before: dict[str, list[list[int]]], tried: list[str], timings: dict[str, float], constructed: _Constructed | None
) -> Solution:
    """The exact flat model decides: a solution, or the conflicts, or a timeout. The first-fit
    placement, when there is one, is its starting point (a CP-SAT hint)."""
    spec = call.spec
    check_build_fits(spec.requests, call.budget)
    with call.timed("build"):
        ctx = build_model(spec, expand_all(spec.requests), weights=call.weights, previous=held_before, check=call.budget.check)
    call.budget.check("building the model")
    log.info(
        "the exact model: %d variables, %d constraints, built in %.3f s",
        len(ctx.model.proto.variables), len(ctx.model.proto.constraints), call.clock["build"],
    )  # fmt: skip
    if ctx.conflicts:
        raise infeasible_error(ctx.conflicts)
    if constructed is not None:
        ctx.hint(constructed.assignments)
    with call.timed("solve"):
        solver, status = solve_polished(ctx, call.options, call.budget)
    solved = ctx.model.has_objective() and status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    log.info(
        "the exact model: %s, objective %s, bound %s, %.3f s wall, %d branches, %d conflicts",
        solver.status_name(status), *((solver.objective_value, solver.best_objective_bound) if solved else (None, None)),
        solver.wall_time, solver.num_branches, solver.num_conflicts,
    )  # fmt: skip
    if status == cp_model.INFEASIBLE:
        conflicts = explain_spec(spec, call.options, call.budget)  # [] when the budget runs out first
        raise infeasible_error(conflicts or [Statement("the spec as a whole (the time limit left no time to name the conflicting statements)")])
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        pairs = sum(request.cand_hw.size for request in ctx.requests.values())
        raise _not_solved(status, call.options, [*tried, f"the exact model ({pairs} process x item candidates, {len(ctx.model.proto.variables)} variables)"])
    assignments = ctx.assignments(solver.response_proto.solution)
    # every weight is an integer: CP-SAT's float values (30066.000000000004) are read as integers,
    # so an answer that ties first fit's compares equal to it; a bound rounds up within tolerance
    value = round(solver.objective_value) if ctx.model.has_objective() else None
    bound = math.ceil(solver.best_objective_bound - BOUND_TOLERANCE) if ctx.model.has_objective() else None
    return Solution(
        spec, spec.requests, assignments, solver.status_name(status), value, {**timings, **call.clock}, bound=bound, notes=tuple(call.notes)
    )


def _previous_hardware(spec: PlacementSpec, previous: PreviousPlacements | None) -> dict[str, list[list[int]]]:
    """Physical ids each process held before, per component, on this spec's cluster."""
    if previous is None:
        return {}
    records = previous.placements_by_component() if isinstance(previous, Solution) else previous
    held = {}
    for name, placements in records.items():
        if name in spec.components:
            held[name] = [
                [spec.cluster.physical_id(p.cluster_node_rank, p.hardware_type, local) for local in (p.local_hardware_ranks or [0])]
                for p in placements
                if _exists(spec, p)
            ]
    return held


def _exists(spec: PlacementSpec, p: Placement) -> bool:
    """False for records on hardware the cluster no longer has (e.g. a lost node)."""
    try:
        for local in p.local_hardware_ranks or [0]:
            spec.cluster.physical_id(p.cluster_node_rank, p.hardware_type, local)
    except PlacementConfigError:
        return False
    return True


def _not_solved(status: Status, options: SolverOptions, tried: Sequence[str]) -> Exception:
    """A timeout names what was tried and how to give the solver more room; any other status
    left at this point is the library's fault."""
    if status == cp_model.UNKNOWN:
        return SolverTimeoutError(
            f"the solver found no placement within time_limit_s={options.time_limit_s} s and could not prove "
            f"there is none (tried: {'; '.join(tried)}); raise cluster.solver.time_limit_s or narrow the declarative components"
        )
    return InternalError(f"the solver stopped with status {status}")
