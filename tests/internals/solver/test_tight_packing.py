"""Processes that need every item offered: the sharing rule states the equality, so CP-SAT
proves the optimum at once (it took 20 s to refute an item the symmetry order had left behind)."""

from __future__ import annotations

from helpers import config, layout, solved

from solver_placement import PlacementSpec
from solver_placement._solver.build import build_model
from solver_placement._specification.candidates import expand_all


def test_twenty_eight_two_gpu_processes_fill_fourteen_four_gpu_nodes_at_once() -> None:
    solution = solved(14, 4, {"actor": {"processes": 28, "hardware_per_process": 2}}, time_limit_s=5)
    assert solution.status == "OPTIMAL"  # before: FEASIBLE at best within 5 s
    assert layout(solution, "actor") == [(p // 2, [2 * (p % 2), 2 * (p % 2) + 1]) for p in range(28)]


def test_the_equality_is_stated_only_when_demand_equals_the_items_offered() -> None:
    def item_bounds(processes: int) -> set[tuple[int, int]]:
        spec = PlacementSpec.from_config(config(2, 4, {"actor": {"processes": processes, "hardware_per_process": 2}}))
        model = build_model(spec, expand_all(spec.requests)).model.proto
        sums = [c.linear for c in model.constraints if c.has_linear() and len(c.linear.vars) == processes]
        return {tuple(linear.domain) for linear in sums if set(linear.coeffs) == {1}}

    assert item_bounds(4) == {(1, 1)}  # 4 processes x 2 GPUs = the 8 GPUs: each exactly once
    assert item_bounds(3) == {(-(2**63), 1)}  # at most one process per GPU, no more


def test_a_component_alone_on_a_gpu_is_not_said_to_share_it() -> None:
    spec = PlacementSpec.from_config(config(1, 2, {"actor": {"processes": 2, "memory_gb": 90}}, gpu_memory_gb=80))
    statements = [s.text for s in build_model(spec, expand_all(spec.requests), explain=True).statements]
    assert "GPU memory: actor running (90 GB per process) must fit 80 GB per GPU" in statements
    assert not [s for s in statements if "idle" in s]
