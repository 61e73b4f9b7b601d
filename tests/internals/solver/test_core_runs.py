"""Naming a conflict costs runs only when there is one: a spec that fits is answered by one
counting run, however many components it has (found by the hostile suite: a mutated config of
150 components spent 3 s, one CP-SAT run per component, before the exact model was built), and
that run is the one without presolve (``core.FEASIBLE_FIRST``), which changes no conflict named."""

from __future__ import annotations

import time
from typing import Any

import pytest
from helpers import config
from ortools.sat.python import cp_model

from solver_placement import InfeasiblePlacementError, PlacementSpec, solve
from solver_placement._errors import Statement
from solver_placement._solver.bounds import core
from solver_placement._solver.counting import counting_conflicts
from solver_placement._solver.options import Budget


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


def bounds_of(cluster: dict[str, Any]) -> list[Statement]:
    """The counting bounds' conflicts of a config, as the solve asks for them."""
    return counting_conflicts(PlacementSpec.from_config(cluster), Budget(time.perf_counter() + 60.0, 60.0))


def test_a_spec_that_fits_takes_one_counting_run_whatever_its_components(counted_runs: list[int]) -> None:
    components = {f"c{i}": {"processes": 1} for i in range(150)}
    assert bounds_of(config(32, 8, components)) == []
    assert len(counted_runs) == 1


def test_a_spec_the_count_model_places_takes_no_counting_run(counted_runs: list[int]) -> None:
    """Its answer proves the spec feasible: the counting bounds are asked only when it has none."""
    components = {f"c{i}": {"processes": 1} for i in range(150)}
    solution = solve(config(32, 8, components))
    assert len(solution.placements_by_component()) == 150 and solution.method == "counts"
    assert counted_runs == []


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


def _runs_with_parameters(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The CP-SAT parameters of each counting-model run of ``minimal_core``."""
    runs: list[dict[str, Any]] = []
    real = core.solve_model

    def recorded(model: cp_model.CpModel, *args: Any, **kwargs: Any) -> Any:
        runs.append(kwargs)
        return real(model, *args, **kwargs)

    monkeypatch.setattr(core, "solve_model", recorded)
    return runs


def test_a_spec_that_fits_is_answered_by_the_run_without_presolve(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _runs_with_parameters(monkeypatch)
    assert bounds_of(config(4, 8, {"a": {"processes": 12, "exclusive_with": ["b"]}, "b": {"processes": 12, "tensor_parallel_size": 2}})) == []
    assert runs == [core.FEASIBLE_FIRST]


@pytest.mark.parametrize(("nodes", "components"), [
    (2, {f"c{i}": {"processes": 1, "hardware_per_process": 8, "exclusive_with": "all"} for i in range(4)}),
    (16, {"actor": {"processes": 120, "tensor_parallel_size": 8}, "reward": {"processes": 9, "exclusive_with": ["actor"]}}),
])  # fmt: skip
def test_a_spec_that_does_not_hold_names_what_it_named_before_the_first_run(monkeypatch: pytest.MonkeyPatch, nodes: int, components: dict[str, Any]) -> None:
    """The run without presolve finds no answer, and the runs that name the conflict (each
    trial of the shrink by the light run first, then the full one where that proves nothing)
    name the same statements as runs with presolve alone (a proof of none by the light run is
    not run again in full)."""
    runs = _runs_with_parameters(monkeypatch)
    with pytest.raises(InfeasiblePlacementError) as now:
        solve(config(nodes, 8, components))
    assert len(runs) > 1 and runs[0] == core.FEASIBLE_FIRST and all(run in (core.FEASIBLE_FIRST, core.CORE_PARAMETERS) for run in runs[1:])
    monkeypatch.setattr(core, "TIERS", (core.CORE_PARAMETERS,))  # as before: every run with presolve
    with pytest.raises(InfeasiblePlacementError) as before:
        solve(config(nodes, 8, components))
    assert str(now.value) == str(before.value)
