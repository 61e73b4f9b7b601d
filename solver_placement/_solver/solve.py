"""Solving a spec: the answer loop over the solver's paths, and the counting bounds' refusal.

The paths live here (the count model, first fit, the flat exact model), each returning an
answer or the reason it declined (``answer.py``); ``loop.py`` tries them in order, keeps the best
and verifies every answer. The search is deterministic: a fixed seed and CP-SAT's interleaved
search, whose result does not depend on the number of workers. Every CP-SAT run of one call
(count model, exact model, polish, explanation) shares one :class:`Budget` of ``time_limit_s``. An infeasible spec is explained by
``explain.py``: the statements CP-SAT names as conflicting make up the error message.

Each call logs (``logging``, this module's logger, silent unless configured; the loop and the
paths log under the same name) the spec's size, which path answered and why the ones before it
did not, and the exact model's statistics.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence

from ortools.sat.python import cp_model

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import InternalError, PlacementError, SolverTimeoutError, Statement, counted
from solver_placement._job import load_job
from solver_placement._limits.reading import reading_within
from solver_placement._solver.answer import Answer, Declined, PathName, by_component
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.build import build_model, fixed_conflicts
from solver_placement._solver.call import SolveCall
from solver_placement._solver.counting import counting_conflicts
from solver_placement._solver.counts import count_path
from solver_placement._solver.counts.replan import count_replan
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.exact import check_build_fits, solve_polished, spec_options
from solver_placement._solver.explain import explain_spec, infeasible_error
from solver_placement._solver.first_fit import first_fit
from solver_placement._solver.loop import Paths, answer_loop
from solver_placement._solver.options import Budget, SolverOptions, SolveStatus, Status
from solver_placement._solver.previous import PreviousPlacements, previous_hardware
from solver_placement._solver.solution import Method, Solution
from solver_placement._solver_settings import DEFAULT_WEIGHTS
from solver_placement._specification.candidates import expand_all
from solver_placement._specification.placement_spec import PlacementSpec, SpecSource, spec_of_job

log = logging.getLogger(__name__)


#: The part of what is left of the time limit the count model may take: when it cannot answer
#: in that, the flat model still gets the rest.
COUNT_SHARE = 0.5
#: The part of that share its CP-SAT runs leave for the Python work after the last one (laying
#: out its answer): ``contiguity:28:93``'s second run ended at the share's end with an answer
#: 15% better than first fit's (138,072 against 162,048), the layout found no time left, and
#: the count path declined, leaving first fit's answer after a flat search that found nothing.
COUNT_LAYOUT_SHARE = 0.1
#: How far below an integer CP-SAT's float bound may sit and still prove that integer.
BOUND_TOLERANCE = 1e-6
#: Kept back from first fit and the exact model's search (seconds, and per process of the spec)
#: for what runs after them before the answer leaves: reading the answer, verifying it and first
#: fit's. Without it a search that used its whole time ended past ``time_limit_s`` (by 11 ms on
#: 62 processes). Measured (the records built and verified, on 65,536 nodes, a 2-core machine
#: loaded 6x): 65,536 processes 0.10 s CPU / 0.29 s wall, 262,144 0.13 / 0.26 s, 721,765 0.24 /
#: 0.50 s; at most 1.5 us CPU and 4.4 us wall a process. 4 us a process covers every one of them
#: and leaves first fit 2 s of a 5 s limit on 721,765 processes (15 us, as measured at 329,543
#: processes before, kept back more than a whole 5 s limit past 333,000 processes).
FINISH_S, FINISH_S_PER_PROCESS = 0.03, 4e-6


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
    conflicting statements, or :class:`SolverTimeoutError`; every answer has passed the
    independent verifier (one it rejects is a bug of the library: :class:`VerificationError`).
    """
    started = time.perf_counter()
    spec = _read(source, cluster, time_limit_s, started)
    options = spec_options(spec, time_limit_s=time_limit_s, num_workers=num_workers, seed=seed)
    asked = spec.solver_options.weights(objective)
    _log_size(spec, options)
    try:
        solution = _solve_spec(spec, options, asked, previous, started)
    except PlacementError as error:
        log.info("no placement after %.3f s: %s", time.perf_counter() - started, type(error).__name__)
        raise
    log.info(
        "placed by %s: %s, objective %s, bound %s, in %.3f s",
        solution.method, solution.status, solution.objective, solution.bound, time.perf_counter() - started,
    )  # fmt: skip
    return solution


def _read(source: SpecSource, cluster: Cluster | None, time_limit_s: float | None, started: float) -> PlacementSpec:
    """``source`` as a spec, its cluster read under the call's time limit (the caller's, else its
    ``solver:`` section's, read first): reading 65,536 nodes of robots took seconds, past a
    limit no step had checked yet."""
    if isinstance(source, PlacementSpec):
        return source
    job = load_job(source, cluster)
    with reading_within(job.solver_options.options(time_limit_s=time_limit_s).start(at=started).check):
        return spec_of_job(job)


def solve_part(spec: PlacementSpec, *, time_limit_s: float | None, num_workers: int | None, objective: Mapping[str, int] | None) -> Solution:
    """:func:`solve` of a spec whose answer is part of the caller's, which the caller verifies
    whole: ``replan``'s keep in place merges it with the surviving processes and verifies the
    merge, which holds every item of this answer. Why: each check costs ~0.2 s on 65,536 nodes,
    and the second re-checked what the first did. The count and exact models' answers skip the
    loop's check (first fit's do not: the loop rejects them by it)."""
    started = time.perf_counter()
    options = spec_options(spec, time_limit_s=time_limit_s, num_workers=num_workers, seed=None)
    return _solve_spec(spec, options, spec.solver_options.weights(objective), None, started, verified_by_caller=True)


def _log_size(spec: PlacementSpec, options: SolverOptions) -> None:
    """The spec's size, the first thing someone debugging a slow or refused solve asks for."""
    if not log.isEnabledFor(logging.INFO):
        return
    requests = spec.requests.values()
    free = [request for request in requests if not request.determined]
    log.info(
        "solving %s, %s, %d declarative with %d candidate pairs, on %s with %d hardware items (time limit %g s, %s)",
        counted(len(spec.components), "component"), counted(sum(request.num_processes for request in requests), "process", "processes"),
        len(free), sum(request.candidate_pairs for request in free), counted(spec.cluster.num_nodes, "node"), spec.cluster.num_hardware,
        options.time_limit_s, counted(options.num_workers, "worker"),
    )  # fmt: skip
    for request in requests:
        log.debug(
            "%s: %s, %s, %d candidate pairs",
            request.name, counted(request.num_processes, "process", "processes"), "rank strings" if request.determined else "declarative", request.candidate_pairs,
        )  # fmt: skip


def _solve_spec(
    spec: PlacementSpec, options: SolverOptions, asked: dict[str, int], previous: PreviousPlacements | None, started: float, verified_by_caller: bool = False
) -> Solution:
    """:func:`solve`'s answer: the rank strings' own rules first (they refuse the spec before any
    model), then the answer loop over the paths below, the counting bounds among them."""
    budget = options.start(at=started)
    budget.check("resolving the spec")
    held_before = previous_hardware(spec, previous)
    timings = {"parse": time.perf_counter() - started}
    fixed = fixed_conflicts(spec, budget)
    if fixed:  # rank strings that break their own rules: no path can place them
        log.info("the rank-string components break their own rules (%s)", counted(len(fixed), "statement"))
        raise infeasible_error(fixed)
    call = SolveCall(spec, options, budget, {**DEFAULT_WEIGHTS, **asked}, "contiguity" in asked, held_before, verified_by_caller)
    return answer_loop(call, Paths(_count_answer, _counting_refusal, _first_fit_answer, _exact_answer), timings)


def _counting_refusal(call: SolveCall) -> None:
    """Raises the counting bounds' conflicts when counting alone proves the spec infeasible (no
    further model is built); asked only once neither the count model nor first fit has a
    placement (``loop.py``). Where the time runs out while counting, the exact model goes on to
    say so, naming what was tried (the paths before it ran out of their time too, as a rule,
    rather than found the spec infeasible)."""
    try:
        conflicts = counting_conflicts(call.spec, call.budget)
    except SolverTimeoutError:
        log.info("the time ran out while counting: no refusal")
        return
    if conflicts:
        log.info("the counting bounds prove the spec infeasible (%s): no further model is built", counted(len(conflicts), "statement"))
        raise infeasible_error(conflicts)
    log.debug("the counting bounds find no conflict")


def _count_answer(call: SolveCall) -> Answer | Declined:
    """The count model's answer, with its share of what is left of the time limit. Its layouts
    are exact by construction; the loop checks them with the independent verifier all the same."""
    spec = call.spec
    weights = call.weights if call.weighs_contiguity else {**call.weights, "contiguity": 0}  # 0: the tie-break only
    now, length = time.perf_counter(), COUNT_SHARE * call.budget.remaining()
    share = Budget(now + length, call.budget.limit_s, search_deadline=now + (1 - COUNT_LAYOUT_SHARE) * length)
    with call.timed("count"):
        try:
            if call.held_before:  # re-planning: the count layout matched to where processes were
                answer = count_replan(spec, call.held_before, weights, call.options, share)
            else:
                answer = count_path(spec, spec.requests, weights, call.options, share)
        except SolverTimeoutError:
            answer = Declined(PathName.COUNTS, f"its share of the time limit ({COUNT_SHARE:.0%}) ran out")
    if isinstance(answer, Answer):
        log.debug("the count model answered: %s, objective %s, bound %s", answer.status, answer.objective, answer.bound)
    return answer


def _first_fit_answer(call: SolveCall) -> Answer | Declined:
    """The first-fit placement of the spec, if it builds (not verified yet: the loop verifies it
    when it would use it). Milliseconds: the search's hint, and the answer of last resort."""
    spec = call.spec
    with call.timed("construct"):
        primary = {**call.weights, "contiguity": 0}

        def values(built: dict[str, Assignment]) -> tuple[int, int]:
            """(without contiguity, with it): the weighted terms first, contiguity breaks ties."""
            return (
                objective_value(spec, spec.requests, built, primary, call.held_before),
                objective_value(spec, spec.requests, built, call.weights, call.held_before),
            )

        try:
            built = first_fit(spec, spec.requests, _finishing(call), values)
        except SolverTimeoutError:
            log.info("first fit ran out of time")
            return Declined(PathName.FIRST_FIT, "its time ran out")
        if built is None:
            log.info("first fit built no placement (the construction cannot state the spec, or no order left every component room)")
            return Declined(PathName.FIRST_FIT, "no placement")
        without, value = values(built)
        log.debug("first fit placed every component: objective %d (%d without contiguity)", value, without)
        return Answer(PathName.FIRST_FIT, Method.FIRST_FIT, by_component(spec, built), SolveStatus.FEASIBLE, value, primary=without)

def _exact_answer(call: SolveCall, hint: Answer | None, tried: list[str]) -> Answer:
    """The exact flat model decides: an answer, or the conflicts, or a timeout naming what was
    ``tried``. First fit's placement, when there is one, is its starting point (a CP-SAT hint)."""
    spec = call.spec
    check_build_fits(spec.requests, call.budget, tried)
    with call.timed("build"):
        ctx = build_model(spec, expand_all(spec.requests), weights=call.weights, previous=call.held_before, check=call.budget.check)
    call.budget.check("building the model")
    log.info(
        "the exact model: %d variables, %d constraints, built in %.3f s",
        len(ctx.model.proto.variables), len(ctx.model.proto.constraints), call.clock["build"],
    )  # fmt: skip
    if ctx.conflicts:
        raise infeasible_error(ctx.conflicts)
    if hint is not None:
        ctx.hint(hint.assignments)
    with call.timed("solve"):
        solver, status = solve_polished(ctx, call.options, _finishing(call))
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
        raise _not_solved(status, call.options, [*tried, f"{PathName.EXACT} ({pairs} process x item candidates, {len(ctx.model.proto.variables)} variables)"])
    # every weight is an integer: CP-SAT's float values (30066.000000000004) are read as integers,
    # so an answer that ties first fit's compares equal to it; a bound rounds up within tolerance
    value = round(solver.objective_value) if ctx.model.has_objective() else None
    bound = math.ceil(solver.best_objective_bound - BOUND_TOLERANCE) if ctx.model.has_objective() else None
    return Answer(PathName.EXACT, Method.SEARCH, ctx.assignments(solver.response_proto.solution), SolveStatus(solver.status_name(status)), value, bound)

def _finishing(call: SolveCall) -> Budget:
    """The call's budget less what the answer needs after the last path that builds it (first
    fit, the exact model): reading it and verifying it, so the call ends within the limit."""
    processes = sum(request.num_processes for request in call.spec.requests.values())
    return Budget(call.budget.deadline - FINISH_S - FINISH_S_PER_PROCESS * processes, call.budget.limit_s)


def _not_solved(status: Status, options: SolverOptions, tried: Sequence[str]) -> Exception:
    """A timeout names what was tried and how to give the solver more room; any other status
    left at this point is the library's fault."""
    if status == cp_model.UNKNOWN:
        return SolverTimeoutError(
            f"the solver found no placement within time_limit_s={options.time_limit_s} s and could not prove "
            f"there is none (tried: {'; '.join(tried)}); raise cluster.solver.time_limit_s or narrow the declarative components"
        )
    return InternalError(f"the solver stopped with status {status}")
