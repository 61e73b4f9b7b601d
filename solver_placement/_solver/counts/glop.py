"""GLOP as the count path's linear relaxations use it: a solution a hair outside GLOP's own
tolerances is returned as solved, not withheld as ABNORMAL.

Why that is safe: every relaxation here reads a Lagrangian bound from the duals (valid for any
duals of the right signs, recomputed over every pattern with a margin for float64 sums), or
uses the primal values only to choose chords or a rounding that CP-SAT and the verifier check.
An imprecise solution can only weaken such a bound a little; withheld, it ended the column
generation at the previous round's duals. ``contiguity:41:24``: re-solved after a round's
columns, GLOP found the optimum, 90,012, but called it imprecise ("the needed cost perturbation
is too large", dual infeasibility 5e-8). The previous round's bound, 89,552, left all 15,091
patterns within 460 of it, and past ``MAX_PATTERNS`` the answer stayed unproven after 2.3 s.
With those duals, 13 rounds bound it at 90,012 and it is proven in 0.14 s CPU.
"""

from __future__ import annotations

from ortools.linear_solver import pywraplp

#: GLOP's parameters (``glop/parameters.proto``).
IMPRECISE_KEPT = "change_status_to_imprecise: false"


def glop() -> pywraplp.Solver:
    """A GLOP solver that returns imprecise solutions as solved."""
    solver = pywraplp.Solver.CreateSolver("GLOP")
    solver.SetSolverSpecificParametersAsString(IMPRECISE_KEPT)
    return solver
