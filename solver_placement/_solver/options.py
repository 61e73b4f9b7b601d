"""The only place a CP-SAT solver is configured, from the validated :class:`SolverOptions` and
:class:`Budget` that ``_solver_settings.py`` reads from a config.

Every CP-SAT run of the library (the exact model, the count model, the polish
that breaks ties, explanations, the auto-placement search) gets its solver from
:func:`make_solver`, or runs through :func:`solve_model`, which also checks the model, so seed,
worker count, determinism and the time budget mean the same thing everywhere. A :class:`Budget`
is one wall-clock deadline shared by every run of one call.
"""

from __future__ import annotations

import logging
from enum import StrEnum
from typing import Any

from ortools.sat.python import cp_model

from solver_placement._errors import InternalError, counted
from solver_placement._solver_settings import Budget, SolverOptions

log = logging.getLogger(__name__)

#: What a CP-SAT run ends with (OPTIMAL, FEASIBLE, INFEASIBLE, UNKNOWN, MODEL_INVALID).
Status = cp_model.CpSolverStatus
#: Time a CP-SAT run still gets once the budget is spent (enough to report, not to search).
MIN_RUN_S = 0.01
#: Seconds per model variable that a CP-SAT run spends beyond its own time limit (loading the
#: model, stopping the search): 1.1 s for 112,000 variables and 184,000 constraints, measured.
#: Kept back from the budget, so the run ends when the budget does; models up to
#: ``OVERRUN_FREE_VARIABLES`` overrun by a negligible amount and get their whole budget. Lowered
#: from 20,000: a flat model of 16,429 variables (``other hardware:11:183``) ran 44 ms past its
#: limit, and the solve 33 ms past ``time_limit_s``; the count model's runs (hundreds to a few
#: thousand variables) keep theirs whole, or all but milliseconds.
OVERRUN_S_PER_VARIABLE = 10e-6
OVERRUN_FREE_VARIABLES = 2_000


class SolveStatus(StrEnum):
    """What an answer proves of its objective, in CP-SAT's words: a string enum, so the status
    compares, prints and serialises as the text it always was (``SolveStatus.OPTIMAL == "OPTIMAL"``)
    while the package spells every status one way."""

    OPTIMAL = "OPTIMAL"  # the objective is proven best
    FEASIBLE = "FEASIBLE"  # a placement, not proven best


def make_solver(options: SolverOptions, budget: Budget, reserve_s: float = 0.0, **parameters: Any) -> cp_model.CpSolver:
    """A CpSolver with the options' seed and workers and what is left of ``budget`` for a search
    (``Budget.search_remaining``, less ``reserve_s``, the time the run is expected to take
    beyond its limit).

    ``parameters`` are further CP-SAT parameters a caller needs for its model (e.g.
    ``symmetry_level=0`` where symmetry is broken explicitly).
    """
    solver = cp_model.CpSolver()
    params = solver.parameters
    params.max_time_in_seconds = max(MIN_RUN_S, budget.search_remaining() - reserve_s)
    params.random_seed = int(options.seed)
    params.num_workers = int(options.num_workers)
    params.interleave_search = options.num_workers > 1  # same answer whatever the worker count
    # CP-SAT otherwise resets SIGINT to the OS default after every solve: Ctrl-C would then kill
    # the process with no KeyboardInterrupt, so no cleanup (Ray placement groups) would run.
    params.catch_sigint_signal = False
    for key, value in parameters.items():
        setattr(params, key, value)
    return solver


def solve_model(model: cp_model.CpModel, options: SolverOptions, budget: Budget, **parameters: Any) -> tuple[cp_model.CpSolver, Status]:
    """Run CP-SAT on ``model`` with :func:`make_solver`'s solver; returns it and the status.

    A MODEL_INVALID status means the library built a bad model, never bad input: it raises
    :class:`InternalError` with CP-SAT's reason.
    """
    overrun = max(0, len(model.proto.variables) - OVERRUN_FREE_VARIABLES) * OVERRUN_S_PER_VARIABLE
    solver = make_solver(options, budget, overrun, **parameters)
    status = solver.solve(model)
    if status == cp_model.MODEL_INVALID:
        raise InternalError(f"the CP-SAT model is invalid: {model.validate()}")
    if log.isEnabledFor(logging.DEBUG):
        _log_run(model, solver, status)
    return solver, status


def _log_run(model: cp_model.CpModel, solver: cp_model.CpSolver, status: Status) -> None:
    """One CP-SAT run's size and statistics, what tells a slow run from a hard model."""
    objective = (solver.objective_value, solver.best_objective_bound) if model.has_objective() and status in (cp_model.OPTIMAL, cp_model.FEASIBLE) else (None, None)
    log.debug(
        "CP-SAT run: %d variables, %d constraints, %s, limit %.3f s: %s, objective %s, bound %s, %.3f s wall, %d branches, %d conflicts",
        len(model.proto.variables), len(model.proto.constraints), counted(solver.parameters.num_workers, "worker"), solver.parameters.max_time_in_seconds,
        solver.status_name(status), *objective, solver.wall_time, solver.num_branches, solver.num_conflicts,
    )  # fmt: skip
