"""Running the exact (flat) model: the CP-SAT parameters it needs and deterministic tie-breaking.

Solve and explanations run a model built by
``build_model``; they get their solver here, so the parameters of the exact model are stated
once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ortools.sat.python import cp_model

from solver_placement._errors import SolverTimeoutError
from solver_placement._solver.context import ModelContext
from solver_placement._solver.options import Budget, SolverOptions, Status, solve_model
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec

#: Symmetry is broken explicitly by the symmetry rule; CP-SAT's detection costs seconds at scale.
EXACT_PARAMETERS = {"symmetry_level": 0}
#: Seconds building the flat model takes per (process, candidate) pair of a declarative
#: component. Measured after the build was made interruptible (budget checks in every loop,
#: the objective written straight into the proto), on a shared 2-core machine with other work
#: running: 8.5-11 us on the 16-node ``models/infeasible`` family, 9-18 us at 128 nodes
#: (0.26-2.1 M pairs, e.g. counting_exclusive 11.0, memory 14.1, counting_collocated 17.7),
#: 13.6-14.5 us on ``benchmarks/limits.py``'s heterogeneous spec at 32-128 nodes. The low end
#: is used: the build stops at the limit by itself now, so an estimate that is too low only
#: costs the time up to the limit, while one that is too high refuses models that would have
#: been built in time. Rank strings cost ~0.1 us a process and are not counted.
BUILD_S_PER_FREE_PAIR = 10e-6


def check_build_fits(requests: Mapping[str, ComponentRequest], budget: Budget, tried: Sequence[str] = ()) -> None:
    """Refuse to build a flat model that cannot be built in what is left of ``budget``.

    The build checks the budget inside its loops and stops at the limit anyway; refusing up
    front answers at once (not after the whole time limit) when the estimate, from the
    declarative candidate pairs, already exceeds the time left, and says how to narrow the spec
    and what was ``tried`` before (the paths that declined, and why: a share of the limit spent).
    """
    pairs = sum(request.candidate_pairs for request in requests.values() if not request.determined)
    estimate = pairs * BUILD_S_PER_FREE_PAIR
    if estimate > budget.remaining():
        limit = "the time limit" if budget.limit_s is None else f"time_limit_s={budget.limit_s} s"
        before = f" (tried: {'; '.join(tried)})" if tried else ""
        raise SolverTimeoutError(
            f"the exact model would have {pairs} declarative process x item candidates, about {estimate:.0f} s to build, "
            f"more than the {max(budget.remaining(), 0):.1f} s left of {limit}{before}; raise cluster.solver.time_limit_s "
            "(or --time-limit), or narrow the declarative components with node_group or resources"
        )


def spec_options(spec: PlacementSpec, **overrides: Any) -> SolverOptions:
    """The options of the spec's ``cluster.solver`` section (its ``objective`` weights belong
    to the objective rule); keyword overrides that are not None win."""
    return spec.solver_options.options(**overrides)


def run_exact(ctx: ModelContext, options: SolverOptions, budget: Budget, **parameters: Any) -> tuple[cp_model.CpSolver, Status]:
    """One CP-SAT run of the exact model (``parameters``: further CP-SAT parameters)."""
    return solve_model(ctx.model, options, budget, **EXACT_PARAMETERS, **parameters)


def solve_polished(ctx: ModelContext, options: SolverOptions, budget: Budget) -> tuple[cp_model.CpSolver, Status]:
    """Solve; when an objective has tied optima, pick among them deterministically.

    Different worker counts may stop at different optimal solutions. Fixing the objective to
    the optimum and re-solving with one worker (no hint, so nothing of the first run leaks in,
    the first-fit hint included) gives the same placement whatever ``num_workers`` is and
    whatever the first run started from.
    """
    solver, status = run_exact(ctx, options, budget)
    if status != cp_model.OPTIMAL or not ctx.model.has_objective():
        return solver, status
    ctx.model.clear_hints()
    _fix_objective(ctx.model, int(round(solver.objective_value)))
    polish, polished = run_exact(ctx, options.with_workers(1), budget)
    return (polish, polished) if polished == cp_model.OPTIMAL else (solver, status)


def _fix_objective(model: cp_model.CpModel, best: int) -> None:
    """Add ``objective == best``: the linear constraint ``model.add`` would write (the
    objective's variables are already merged and sorted), written straight into the proto
    instead of through a Python expression of every term, seconds at 256 nodes."""
    objective = model.proto.objective
    target = best - int(objective.offset)
    if not len(objective.vars):
        model.add(target == 0)  # what ``add`` makes of a constant comparison
        return
    linear = model.proto.constraints.add().linear
    linear.vars.extend(objective.vars)
    linear.coeffs.extend(objective.coeffs)
    linear.domain.extend([target, target])
