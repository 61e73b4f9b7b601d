"""Naming a conflict costs runs only when there is one: a spec that fits is answered by one
counting run, however many components it has (found by the hostile suite: a mutated config of
150 components spent 3 s, one CP-SAT run per component, before the exact model was built)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import config
from ortools.sat.python import cp_model

from solver_placement import InfeasiblePlacementError, solve
from solver_placement._solver.bounds import core


@pytest.fixture
def counted_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of statements assumed by each counting-model run of ``minimal_core`` (each
    still runs CP-SAT)."""
    runs: list[int] = []
    real = core.solve_model

    def counting(model: cp_model.CpModel, *args: Any, **kwargs: Any) -> Any:
        runs.append(len(model.proto.assumptions))
        return real(model, *args, **kwargs)

    monkeypatch.setattr(core, "solve_model", counting)
    return runs


def test_a_spec_that_fits_takes_one_counting_run_whatever_its_components(counted_runs: list[int]) -> None:
    components = {f"c{i}": {"processes": 1} for i in range(150)}
    solution = solve(config(32, 8, components))
    assert len(solution.placements_by_component()) == 150
    assert len(counted_runs) == 1


def test_a_component_impossible_alone_is_still_blamed_alone(counted_runs: list[int]) -> None:
    components: dict[str, Any] = {f"c{i}": {"processes": 1} for i in range(20)}
    components["huge"] = {"processes": 100}
    with pytest.raises(InfeasiblePlacementError) as info:
        solve(config(4, 8, components))
    assert "huge" in str(info.value) and "c0" not in str(info.value)


def test_components_that_only_conflict_together_are_not_tried_one_by_one(counted_runs: list[int]) -> None:
    """Each of 4 whole-node components fits alone; 2 nodes hold only 2 of them side by side."""
    components = {f"c{i}": {"processes": 1, "hardware_per_process": 8, "exclusive_with": "all"} for i in range(4)}
    with pytest.raises(InfeasiblePlacementError):
        solve(config(2, 8, components))
    assert counted_runs and min(counted_runs) > 1  # no run of one component's own statement
