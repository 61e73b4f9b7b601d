"""GLOP as the count path's linear relaxations use it: a solution a hair outside GLOP's own
tolerances is returned as solved, and a re-solve warm-started from the last basis that runs far
past what a fresh solve takes is made again by the dual simplex.

Why imprecise solutions are kept: every relaxation here reads a Lagrangian bound from the duals
(valid for any duals of the right signs, recomputed over every pattern with a margin for float64
sums), or uses the primal values only to choose chords or a rounding that CP-SAT and the verifier
check. An imprecise solution can only weaken such a bound a little; withheld, it ended the column
generation at the previous round's duals. ``contiguity:41:24``: re-solved after a round's
columns, GLOP found the optimum, 90,012, but called it imprecise ("the needed cost perturbation
is too large", dual infeasibility 5e-8). The previous round's bound, 89,552, left all 15,091
patterns within 460 of it, and past ``MAX_PATTERNS`` the answer stayed unproven after 2.3 s.
With those duals, 13 rounds bound it at 90,012 and it is proven in 0.14 s CPU.

Why the cap on a warm-started re-solve: ``mixed kinds contiguity:253:248``'s seventh round (275
columns, 165 rows) ran 38,039 primal simplex iterations in 2.4 s, warm-started, until the count
path's share of the time limit ran out and first fit answered (``FEASIBLE``, 2.5 s); the same
program loaded afresh takes 208 iterations and 5 ms. GLOP's own "incrementality off" stalls the
same way; its dual simplex from that basis takes 25 iterations, and the spec is proven in 0.38
s CPU. The dual simplex is not the first choice: it would move the duals, hence the patterns
kept, of every spec. The cap counts iterations, not seconds, so which solve is repeated is the
same on every machine.

Why a third solve, afresh, under the same cap: the dual simplex stalls from some bases too
(``mixed kinds contiguity:299:348``, a branch of the ``nodes`` term: 75,461 iterations, 2.5 s,
the count path's share spent and first fit left to answer with no bound); GLOP loading the
same program anew solves it in 136 iterations, and its solution loaded back (values, duals,
reduced costs) proves the spec in 0.3 s. Every solve here is capped: uncapped, a fresh solve
stalled for minutes too (``mixed kinds contiguity:449:411``, proven in 0.5 s now).
"""

from __future__ import annotations

from ortools.linear_solver import linear_solver_pb2, pywraplp

#: GLOP's parameters (``glop/parameters.proto``).
IMPRECISE_KEPT = "change_status_to_imprecise: false"
#: Simplex iterations per variable and row of the program a warm-started re-solve may take
#: before it is made again by the dual simplex (which has no cap but the caller's time limit).
ITERATIONS_PER_ENTRY = 10
#: The least such cap, for small programs.
LEAST_ITERATIONS = 1_000
#: What a re-solve past its cap is made with.
DUAL_SIMPLEX = "use_dual_simplex: true"


def glop() -> pywraplp.Solver:
    """A GLOP solver that returns imprecise solutions as solved."""
    solver = pywraplp.Solver.CreateSolver("GLOP")
    solver.SetSolverSpecificParametersAsString(IMPRECISE_KEPT)
    return solver


def optimal(solver: pywraplp.Solver, limit_ms: int | None = None) -> bool:
    """Whether GLOP solves ``solver``'s program as it now stands to optimality: by its primal
    simplex warm-started from the last basis, by its dual simplex where that passes its cap of
    iterations, and afresh where that does too; each solve within ``limit_ms`` (None: its cap
    alone)."""
    if limit_ms is not None:
        solver.SetTimeLimit(limit_ms)
    cap = max(LEAST_ITERATIONS, ITERATIONS_PER_ENTRY * (solver.NumVariables() + solver.NumConstraints()))
    capped = f"{IMPRECISE_KEPT} max_number_of_iterations: {cap}"
    solver.SetSolverSpecificParametersAsString(capped)
    status = solver.Solve()
    if status != pywraplp.Solver.OPTIMAL and solver.iterations() >= cap:
        solver.SetSolverSpecificParametersAsString(f"{capped} {DUAL_SIMPLEX}")
        status = solver.Solve()
        if status != pywraplp.Solver.OPTIMAL and solver.iterations() >= cap:  # stalled from that basis too: the program loaded afresh
            status = _afresh(solver, capped, limit_ms)
    solver.SetSolverSpecificParametersAsString(IMPRECISE_KEPT)
    return bool(status == pywraplp.Solver.OPTIMAL)


def _afresh(solver: pywraplp.Solver, parameters: str, limit_ms: int | None) -> int:
    """``solver``'s program solved by a GLOP that loads it afresh (no basis to stall from) with
    ``parameters`` (the cap of iterations: a fresh solve may stall too, ``mixed kinds
    contiguity:449:411`` ran for minutes uncapped), its solution (values, duals, reduced costs)
    loaded back into ``solver``: its status."""
    program, response = linear_solver_pb2.MPModelProto(), linear_solver_pb2.MPSolutionResponse()
    solver.ExportModelToProto(program)
    fresh = glop()
    fresh.SetSolverSpecificParametersAsString(parameters)
    if limit_ms is not None:
        fresh.SetTimeLimit(limit_ms)
    fresh.LoadModelFromProto(program)
    status = fresh.Solve()
    if status == pywraplp.Solver.OPTIMAL:
        fresh.FillSolutionResponseProto(response)
        solver.LoadSolutionFromProto(response)
    return int(status)
