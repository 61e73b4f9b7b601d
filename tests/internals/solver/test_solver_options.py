"""CP-SAT is configured and run in one place: an invalid model is the library's fault, one budget
spans a call, and the user's options are read, never written."""

from __future__ import annotations

import time
from dataclasses import FrozenInstanceError

import pytest
from helpers import config
from ortools.sat.python import cp_model

from solver_placement import PlacementError, PlacementSpec, solve
from solver_placement._errors import InternalError
from solver_placement._solver import SolverOptions, explain_spec, solve_model


def test_an_invalid_model_is_an_internal_error_not_a_placement_error() -> None:
    model = cp_model.CpModel()
    x, y = model.new_int_var(0, 2**60, "x"), model.new_int_var(0, 2**60, "y")
    model.add(8 * x + 8 * y >= 0)  # overflows int64: CP-SAT answers MODEL_INVALID
    options = SolverOptions()
    with pytest.raises(InternalError, match="invalid") as info:
        solve_model(model, options, options.start())
    assert not isinstance(info.value, PlacementError)


def test_a_budget_started_earlier_has_less_left() -> None:
    options = SolverOptions(time_limit_s=10)
    assert options.start(at=time.perf_counter() - 4).remaining() < 6.01
    assert options.start().remaining() > 9


def test_solve_leaves_the_solver_section_as_given() -> None:
    section = {"time_limit_s": 5, "seed": 3, "objective": {"nodes": 7}}
    spec = PlacementSpec.from_config(config(1, 8, {"a": {"processes": 2}}, solver=section))
    assert spec.solver_options.as_section() == section
    solve(spec)
    assert spec.solver_options.as_section() == section
    with pytest.raises(FrozenInstanceError):  # read once into frozen values: no stage can write into them
        spec.solver_options.objective = ()  # type: ignore[misc]


def test_explain_runs_within_a_given_budget() -> None:
    spec = PlacementSpec.from_config(config(2, 4, {"actor": "0-3", "rollout": {"processes": 6, "exclusive_with": ["actor"]}}))
    options = SolverOptions(time_limit_s=5)
    assert [statement.text for statement in explain_spec(spec, options, options.start())] == [
        'actor: placement "0-3" uses 4 GPUs', "rollout needs 6 processes x 1 GPU", "rollout is exclusive with actor (no shared hardware)",
        "counting: the cluster has 2 nodes x 4 GPUs = 8 GPUs; together they need 10",
    ]
