"""Why a spec has no placement: the user statements that cannot hold together.

The model is built once more with one assumption literal guarding each statement (see
``ModelContext.guard``); CP-SAT names a set of assumptions that is infeasible on its own, which
is then shrunk to a minimal one by re-solving without each statement in turn.
"""

from __future__ import annotations

from ortools.sat.python import cp_model

from solver_placement.errors import InfeasiblePlacementError
from solver_placement.solver.build import build_model
from solver_placement.solver.context import ModelContext
from solver_placement.solver.exact import run_exact, spec_options
from solver_placement.solver.options import Budget, SolverOptions
from solver_placement.spec.candidates import expand_all
from solver_placement.spec.placement_spec import PlacementSpec

#: Longest conflict set that is shrunk to a minimal one by re-solving.
MAX_CORE_TO_MINIMIZE = 40
#: CP-SAT parameters of the first explanation run (finds small cores sooner).
EXPLAIN_PARAMETERS = {"linearization_level": 2}


def explain(spec: PlacementSpec, options: SolverOptions | None = None, budget: Budget | None = None) -> list[str]:
    """The user statements that cannot hold together (empty if the spec is feasible).

    ``options`` default to the spec's ``cluster.solver`` section; ``budget`` (default: a fresh
    one of ``options.time_limit_s``) bounds every CP-SAT run of the explanation together.
    """
    options = spec_options(spec) if options is None else options
    budget = options.start() if budget is None else budget
    ctx = build_model(spec, expand_all(spec.requests), explain=True)
    if ctx.conflicts:
        return ctx.conflicts
    ctx.model.add_assumptions(list(ctx.statements.values()))
    one_worker = options.with_workers(1)
    solver, status = run_exact(ctx, one_worker, budget, **EXPLAIN_PARAMETERS)
    if status != cp_model.INFEASIBLE:
        return []
    names = {literal.index: text for text, literal in ctx.statements.items()}
    core = [names[index] for index in solver.sufficient_assumptions_for_infeasibility() if index in names]
    if not core:
        return ["the spec as a whole (CP-SAT found no smaller conflicting set)"]
    return _minimize_core(ctx, core, one_worker, budget)


def infeasible_error(conflicts: list[str]) -> InfeasiblePlacementError:
    """The error that lists the conflicting statements (one line when there is one)."""
    if len(conflicts) == 1:
        return InfeasiblePlacementError(f"no placement exists: {conflicts[0]}", conflicts)
    listed = "\n  - ".join(conflicts)
    return InfeasiblePlacementError(f"no placement exists; these statements conflict:\n  - {listed}", conflicts)


def _minimize_core(ctx: ModelContext, core: list[str], options: SolverOptions, budget: Budget) -> list[str]:
    """Drop every statement the conflict does not need (deletion: re-solve without it).

    CP-SAT's set is sufficient, not minimal; a short core names only what the user must change.
    Skipped for long cores, where the re-solves would cost more than the shorter message is worth.
    """
    if len(core) > MAX_CORE_TO_MINIMIZE:
        return core
    needed = list(core)
    for statement in core:
        trial = [s for s in needed if s != statement]
        ctx.model.clear_assumptions()
        ctx.model.add_assumptions([ctx.statements[s] for s in trial])
        _, status = run_exact(ctx, options, budget)
        if status == cp_model.INFEASIBLE:
            needed = trial
    return needed
