"""The solver stage: a spec's CP-SAT model (``rules/``), its solve and its explanation.

Other stages import from here: :func:`solve`, :func:`explain` (of anything ``solve`` takes; :func:`explain_spec` of a spec, within given options), :class:`Solution`,
:class:`Assignment`, and the option types of ``options.py``.
"""

from __future__ import annotations

from solver_placement._solver.assignment import Assignment
from solver_placement._solver.explain import explain, explain_spec
from solver_placement._solver.options import Budget, SolverOptions, make_solver, solve_model
from solver_placement._solver.solution import Solution
from solver_placement._solver.solve import solve
from solver_placement._solver_settings import DEFAULT_WEIGHTS

__all__ = ["DEFAULT_WEIGHTS", "Assignment", "Budget", "Solution", "SolverOptions", "explain", "explain_spec", "make_solver", "solve", "solve_model"]
