"""Memory that fits two by two but not all together, stated exactly by the count model: where no
pair kept apart reaches the bound of memory stated by pairs, a hole of the classes holding memory
whose GPU stacks are those that fit (``stacks.apart_graphs``, ``counts._count_separating``)."""

from __future__ import annotations

from typing import Any

import pytest
from flat_model import built_or_refused, count_answer, flat_optimum
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from solver_placement import Cluster, PlacementSpec, solve, verify
from solver_placement._solver.answer import Answer


def triangle(nodes: int, gpus: int, processes: int) -> PlacementSpec:
    """Three components of 30 GB each on 80 GB GPUs: any two share a GPU, never all three."""
    return PlacementSpec.build(Cluster(nodes, gpus, gpu_memory_gb=80), {name: {"processes": processes, "memory_gb": 30} for name in "abc"})


@pytest.mark.parametrize(("nodes", "gpus", "processes"), [(1, 3, 2), (2, 3, 4), (3, 3, 5), (2, 6, 7)])
def test_three_that_fit_only_in_pairs_are_proven_by_their_stacks(nodes: int, gpus: int, processes: int) -> None:
    """Every GPU holding two of them is the only layout on 3 GPUs a node (no pair kept apart on
    every GPU has one): the count model proves it where it declined, leaving it to the flat model."""
    solution = solve(triangle(nodes, gpus, processes), time_limit_s=10, num_workers=1)
    assert (solution.method, solution.status) == ("counts", "OPTIMAL")
    assert "stated exactly, the GPU stacks of its holders those that fit" in solution.notes[-1]
    verify(solution.spec, solution.placements_by_component())


@st.composite
def memory_mixes(draw: st.DrawFn) -> dict[str, Any]:
    """Three or four components with memory on 80 GB GPUs (most sets of three fit only in pairs),
    some exclusive, on 1-3 small nodes."""
    names = ["a", "b", "c", "d"][: draw(st.integers(3, 4))]
    placement: dict[str, Any] = {}
    for i, name in enumerate(names):
        body: dict[str, Any] = {"processes": draw(st.integers(1, 6)), "memory_gb": draw(st.sampled_from([20, 30, 30, 40]))}
        if i and draw(st.integers(0, 3)) == 0:
            body["exclusive_with"] = [names[draw(st.integers(0, i - 1))]]
        placement[name] = body
    return {"nodes": draw(st.integers(1, 3)), "gpus": draw(st.sampled_from([2, 3, 3, 4, 6])), "placement": placement}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(memory_mixes())
def test_memory_counted_by_its_stacks_meets_the_flat_optimum(case: dict[str, Any]) -> None:
    note(str(case))
    spec = built_or_refused(Cluster(case["nodes"], case["gpus"], gpu_memory_gb=80), case["placement"])
    if spec is None:
        return
    answer = count_answer(spec)
    optimum = flat_optimum(spec)
    if not isinstance(answer, Answer):
        assert optimum is None, f"the count model declined a feasible spec: {answer.reason}"
        return
    assert optimum is not None and answer.status == "OPTIMAL" and answer.objective == optimum
