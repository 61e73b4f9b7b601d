"""GLOP as the count path's relaxations use it (``counts/glop.py``): a re-solve past its cap of
iterations is made again by the dual simplex, then afresh, each under the same cap, and the
solution found afresh is handed back."""

from __future__ import annotations

import pytest
from ortools.linear_solver import pywraplp

from solver_placement._solver.counts import glop


def transport(solver: pywraplp.Solver, supplies: int, demands: int) -> pywraplp.Objective:
    """A small transportation program (every supply shipped, every demand met, costs by
    distance): its simplex needs tens of iterations, so a cap of one is passed."""
    ship = [[solver.NumVar(0.0, solver.infinity(), "") for _ in range(demands)] for _ in range(supplies)]
    for s, row in enumerate(ship):
        solver.Add(sum(row) == float(demands + s))
    total = sum(demands + s for s in range(supplies))
    for d in range(demands):
        solver.Add(sum(ship[s][d] for s in range(supplies)) == total / demands)
    objective = solver.Objective()
    for s, row in enumerate(ship):
        for d, var in enumerate(row):
            objective.SetCoefficient(var, float(abs(s - d) + 1))
    objective.SetMinimization()
    return objective


def parameters_set(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every parameter text given to a GLOP solver from here on, in order."""
    texts: list[str] = []
    set_parameters = pywraplp.Solver.SetSolverSpecificParametersAsString

    def recorded(solver: pywraplp.Solver, text: str) -> bool:
        texts.append(text)
        return bool(set_parameters(solver, text))

    monkeypatch.setattr(pywraplp.Solver, "SetSolverSpecificParametersAsString", recorded)
    return texts


def test_every_solve_stops_at_its_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cap of one iteration, which the program needs more than: the warm-started primal
    simplex, the dual simplex and the solve afresh each stop there, so the call ends (unsolved)
    rather than run past its cap."""
    monkeypatch.setattr(glop, "LEAST_ITERATIONS", 1)
    monkeypatch.setattr(glop, "ITERATIONS_PER_ENTRY", 0)
    capped = glop.glop()
    transport(capped, 6, 5)
    texts = parameters_set(monkeypatch)
    assert not glop.optimal(capped)
    tried = [text for text in texts if "max_number_of_iterations: 1" in text]
    assert len(tried) == 3 and glop.DUAL_SIMPLEX in tried[1] and glop.DUAL_SIMPLEX not in tried[2]  # primal, dual, then afresh


def test_a_program_solved_afresh_hands_back_its_solution() -> None:
    """The solve afresh loads its values, duals and objective into the solver the caller reads."""
    direct, stalled = glop.glop(), glop.glop()
    expected, objective = transport(direct, 6, 5), transport(stalled, 6, 5)
    assert glop.optimal(direct)
    assert glop._afresh(stalled, glop.IMPRECISE_KEPT, None) == pywraplp.Solver.OPTIMAL
    assert objective.Value() == pytest.approx(expected.Value())
    assert [row.dual_value() for row in stalled.constraints()] == pytest.approx([row.dual_value() for row in direct.constraints()])


def test_a_solve_within_its_cap_is_not_repeated(monkeypatch: pytest.MonkeyPatch) -> None:
    solver = glop.glop()
    transport(solver, 6, 5)
    texts = parameters_set(monkeypatch)
    assert glop.optimal(solver)
    assert not any(glop.DUAL_SIMPLEX in text for text in texts)
