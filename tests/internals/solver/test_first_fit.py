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
    # stride 2, explicit: a block of four consecutive ranks dealt out to two processes
    ({"actor": {"processes": 2, "hardware_per_process": 2, "stride": 2, "exclusive_with": ["window"]}} | WINDOW_ON_GPU_1,
     {"actor": [[4, 6], [5, 7]]}),
])
def test_a_process_of_several_gpus_takes_a_run_of_ranks_around_a_taken_gpu(placement: dict[str, Any], expected: dict[str, list[list[int]]]) -> None:
    spec = PlacementSpec.build(Cluster(2, 4), placement)
    built = first_fit(spec, spec.requests, SolverOptions().start())
    assert built is not None
    solution = Solution(spec, spec.requests, {c.name: built[c.rule_owner] for c in spec.components.values()}, "FEASIBLE", None)
    verify(spec, solution.placements_by_component())
    held = {name: sorted(sorted(p.hardware_ranks) for p in solution.placements(name)) for name in expected}
    assert held == expected
