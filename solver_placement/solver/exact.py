"""Running the exact (flat) model: the CP-SAT parameters it needs and deterministic tie-breaking.

Solve, the decomposition's per-node stage and explanations all run a model built by
``build_model``; they get their solver here, so the parameters of the exact model are stated
once.
"""

from __future__ import annotations

from typing import Any

from ortools.sat.python import cp_model

from solver_placement.solver.context import ModelContext
from solver_placement.solver.options import Budget, SolverOptions, Status, solve_model
from solver_placement.solver.rules import objective
from solver_placement.spec.placement_spec import PlacementSpec

#: Where a spec's solver options come from, for error messages.
SOLVER_SECTION = "cluster.solver"
#: Symmetry is broken explicitly by the symmetry rule; CP-SAT's detection costs seconds at scale.
EXACT_PARAMETERS = {"symmetry_level": 0}


def spec_options(spec: PlacementSpec, **overrides: Any) -> SolverOptions:
    """The options of the spec's ``cluster.solver`` section (its ``objective`` weights belong
    to the objective rule); keyword overrides that are not None win."""
    return SolverOptions.from_config(spec.solver_options, SOLVER_SECTION, extra_keys=(objective.SECTION_KEY,), **overrides)


def run_exact(ctx: ModelContext, options: SolverOptions, budget: Budget, **parameters: Any) -> tuple[cp_model.CpSolver, Status]:
    """One CP-SAT run of the exact model (``parameters``: further CP-SAT parameters)."""
    return solve_model(ctx.model, options, budget, **EXACT_PARAMETERS, **parameters)


def solve_polished(ctx: ModelContext, options: SolverOptions, budget: Budget) -> tuple[cp_model.CpSolver, Status]:
    """Solve; when an objective has tied optima, pick among them deterministically.

    Different worker counts may stop at different optimal solutions. Fixing the objective to
    the optimum and re-solving with one worker (no hint, so nothing of the first run leaks in)
    gives the same placement whatever ``num_workers`` is.
    """
    solver, status = run_exact(ctx, options, budget)
    if status != cp_model.OPTIMAL or not ctx.model.has_objective():
        return solver, status
    best = int(round(solver.objective_value))
    proto = ctx.model.proto.objective
    expression = sum(coef * ctx.model.get_int_var_from_proto_index(var) for var, coef in zip(proto.vars, proto.coeffs, strict=True))
    ctx.model.add(expression + int(proto.offset) == best)
    polish, polished = run_exact(ctx, options.with_workers(1), budget)
    return (polish, polished) if polished == cp_model.OPTIMAL else (solver, status)
