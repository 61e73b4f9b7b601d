"""Narrowing by the node-level model gives verified layouts and, on small cases, the flat optimum."""

from __future__ import annotations

import pytest
from flat_model import counts_kept_out

from solver_placement import Cluster, PlacementSpec, solve, verify
from solver_placement._solver.counts import narrowing

SPECS = [
    {"actor": {"processes": 8, "tensor_parallel_size": 4}, "reward": {"processes": 4, "exclusive_with": ["actor"]}},
    {"actor": {"processes": 8, "tensor_parallel_size": 2},
     "rollout": {"processes": 4, "hardware_per_process": 2, "stride": "auto", "collocate_with": "actor"}},
    {"a": {"processes": 6, "hardware_per_process": 2}, "b": {"processes": 5, "exclusive_with": ["a"]}, "c": "0-3"},
]


def solved(spec: PlacementSpec, threshold: int, monkeypatch: pytest.MonkeyPatch):
    """Solved by the flat model (or its decomposition above ``threshold`` pairs), the count model
    kept out (it answers these specs)."""
    monkeypatch.setattr(narrowing, "AGGREGATE_ABOVE_PAIRS", threshold)
    counts_kept_out(monkeypatch)
    solution = solve(spec, objective={"contiguity": 1})
    assert solution.method == "search"
    verify(solution.spec, solution.placements_by_component())
    return solution


@pytest.mark.parametrize("placement", SPECS)
def test_decomposition_matches_the_flat_optimum(placement: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = PlacementSpec.build(Cluster(3, 8), placement)
    flat = solved(spec, 10**12, monkeypatch)
    split = solved(spec, 0, monkeypatch)
    assert (flat.status, split.status) == ("OPTIMAL", "FEASIBLE")  # the decomposition proves no optimum
    assert split.objective is not None and split.objective >= flat.objective  # its value, measured, is no better than the proven one
    # the dominant term (nodes per component) matches the exact optimum
    assert nodes_used(split) == nodes_used(flat)


def nodes_used(solution) -> dict[str, int]:
    return {name: len({p.cluster_node_rank for p in records}) for name, records in solution.placements_by_component().items()}


def test_sixteen_nodes_four_components() -> None:
    nodes, gpus = 16, 128
    spec = PlacementSpec.build(Cluster(nodes, 8), {
        "actor": {"processes": gpus // 2, "tensor_parallel_size": 4},
        "rollout": {"processes": gpus // 4, "hardware_per_process": 2, "stride": "auto", "collocate_with": "actor"},
        "inference": {"processes": gpus // 8, "hardware_per_process": 2, "exclusive_with": ["actor"]},
        "reward": {"processes": gpus // 8, "exclusive_with": ["actor", "inference"]},
    })
    assert narrowing.should_aggregate(spec, spec.requests)
    solution = solve(spec)
    verify(solution.spec, solution.placements_by_component())
    actor_nodes = {p.cluster_node_rank for p in solution.placements("actor")}
    assert len(actor_nodes) == 8  # 64 GPUs of TP groups packed on 8 full nodes
    assert [p.local_hardware_ranks for p in solution.placements("rollout")[:4]] == [[0, 2], [1, 3], [4, 6], [5, 7]]
