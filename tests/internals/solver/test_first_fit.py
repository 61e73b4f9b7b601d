"""First fit never builds a layout the verifier refuses for its strides (found by hypothesis in
the count-model property test: a ``resources`` window took one GPU, the per-GPU process limit
made it unusable, and first fit gave a two-GPU process the GPUs on either side of it)."""

from __future__ import annotations

from typing import Any

import pytest

from solver_placement import Cluster, PlacementSpec, Solution, verify
from solver_placement._solver.first_fit import first_fit
from solver_placement._solver.options import SolverOptions

WINDOW_ON_GPU_1 = {"window": {"resources": "1-1"}}
ROLLOUT = {"rollout": {"processes": 1, "hardware_per_process": 2, "stride": "auto", "collocate_with": "actor"}}


@pytest.mark.parametrize(("placement", "expected"), [
    # two GPUs per process, stride 1: GPUs 0 and 2 are not a run of ranks, 2 and 3 are
    ({"actor": {"processes": 1, "hardware_per_process": 2, "max_processes_per_hardware": 2}} | WINDOW_ON_GPU_1 | ROLLOUT,
     {"actor": [[2, 3]], "rollout": [[2, 3]]}),
    # one GPU per process, but the collocated rollout spreads over the whole TP group at stride 1
    ({"actor": {"processes": 2, "tensor_parallel_size": 2, "max_processes_per_hardware": 2}} | WINDOW_ON_GPU_1 | ROLLOUT,
     {"actor": [[2], [3]], "rollout": [[2, 3]]}),
    # stride 2, explicit: each process at the lowest rank whose progression is free, so the first
    # takes 0 and 2 around the window's GPU 1, the second 4 and 6 (blocks of four consecutive
    # ranks took 4-7)
    ({"actor": {"processes": 2, "hardware_per_process": 2, "stride": 2, "exclusive_with": ["window"]}} | WINDOW_ON_GPU_1,
     {"actor": [[0, 2], [4, 6]]}),
])
def test_a_process_of_several_gpus_takes_a_run_of_ranks_around_a_taken_gpu(placement: dict[str, Any], expected: dict[str, list[list[int]]]) -> None:
    assert_first_fit_holds(PlacementSpec.build(Cluster(2, 4), placement), expected)


@pytest.mark.parametrize(("gpus", "placement", "expected"), [
    # three processes of 2 GPUs 2 apart: one block of four, then a process with holes beside it
    (8, {"actor": {"processes": 3, "hardware_per_process": 2, "stride": 2}}, {"actor": [[0, 2], [1, 3], [4, 6]]}),
    # the holes left by the last one hold the next component (it may share no GPU with it)
    (8, {"actor": {"processes": 3, "hardware_per_process": 2, "stride": 2}, "ref": {"processes": 2, "exclusive_with": ["actor"]}},
     {"actor": [[0, 2], [1, 3], [4, 6]], "ref": [[5], [7]]}),
    # 5 GPUs 3 apart on 18-GPU nodes: three a block of 15, the 3 left hold no fourth, so the next node
    (18, {"actor": {"processes": 4, "hardware_per_process": 5, "stride": 3}},
     {"actor": [[0, 3, 6, 9, 12], [1, 4, 7, 10, 13], [2, 5, 8, 11, 14], [18, 21, 24, 27, 30]]}),
])
def test_a_stride_that_leaves_holes_is_placed_process_by_process(gpus: int, placement: dict[str, Any], expected: dict[str, list[list[int]]]) -> None:
    assert_first_fit_holds(PlacementSpec.build(Cluster(2, gpus), placement), expected)


def assert_first_fit_holds(spec: PlacementSpec, expected: dict[str, list[list[int]]]) -> None:
    """First fit places ``spec``, its layout passes the verifier, and each component named in
    ``expected`` holds exactly those rank sets."""
    built = first_fit(spec, spec.requests, SolverOptions().start())
    assert built is not None
    solution = Solution(spec, spec.requests, {c.name: built[c.rule_owner] for c in spec.components.values()}, "FEASIBLE", None)
    verify(spec, solution.placements_by_component())
    held = {name: sorted(sorted(p.hardware_ranks) for p in solution.placements(name)) for name in expected}
    assert held == expected
