"""The independent verifier catches every kind of corrupted placement."""

from dataclasses import replace

import pytest
from helpers import solved

from solver_placement import PlacementSpec, VerificationError, verify

PLACEMENT = {
    "actor": {"placement": "0-7", "tensor_parallel_size": 4},
    "rollout": {"processes": 4, "hardware_per_process": 2, "stride": "auto", "collocate_with": "actor"},
    "reward": {"placement": "8-9:0-3", "exclusive_with": ["actor"], "max_processes_per_hardware": 2},
    "critic": {"processes": 2, "hardware_per_process": 2, "stride": 1, "exclusive_with": ["actor", "reward"]},
}


@pytest.fixture(scope="module")
def good():
    return solved(2, 8, PLACEMENT)


def corrupt(solution, component: str, index: int, /, **changes) -> dict:
    records = {name: list(pls) for name, pls in solution.placements_by_component().items()}
    records[component][index] = replace(records[component][index], **changes)
    return records


def test_valid_solution_passes(good) -> None:
    verify(good.spec, good.placements_by_component())


@pytest.mark.parametrize(
    ("component", "rank", "changes", "words"),
    [
        ("actor", 1, {"local_hardware_ranks": [2], "visible_accelerators": ["2"], "local_accelerator_rank": 2}, "the placement string gives"),
        ("actor", 0, {"cluster_node_rank": 1}, "local_rank/local_world_size"),
        ("actor", 0, {"local_rank": 3}, "local_rank/local_world_size 3/8, expected 0/8"),
        ("actor", 0, {"placement_node_rank": 1}, "placement_node_rank 1, expected 0"),
        ("actor", 0, {"visible_accelerators": ["0", "1"]}, "visible_accelerators"),
        ("actor", 2, {"local_accelerator_rank": 0}, "local_accelerator_rank 0, expected 2"),
        ("actor", 2, {"accelerator_type": "AMD_GPU"}, "accelerator_type"),
        ("actor", 0, {"local_hardware_ranks": [9], "visible_accelerators": ["9"], "local_accelerator_rank": 9}, "node 0 has no Accelerator 9"),
        ("actor", 0, {"local_hardware_ranks": [0, 0], "visible_accelerators": ["0", "0"]}, "holds an item twice"),
        ("actor", 3, {"rank": 7}, "ranks are not 0..7 in order"),
        ("rollout", 0, {"local_hardware_ranks": [0, 1], "visible_accelerators": ["0", "1"]}, "do not follow stride 2"),
        ("critic", 1, {"cluster_node_rank": 0, "local_hardware_ranks": [2, 3], "visible_accelerators": ["2", "3"], "local_accelerator_rank": 2}, "shares hardware with actor"),
        ("reward", 3, {"local_hardware_ranks": [0], "visible_accelerators": ["0"], "local_accelerator_rank": 0}, "the placement string gives"),
    ],
)
def test_corruptions_are_caught(good, component: str, rank: int, changes: dict, words: str) -> None:
    with pytest.raises(VerificationError) as caught:
        verify(good.spec, corrupt(good, component, rank, **changes))
    assert any(words in violation for violation in caught.value.violations), caught.value.violations


def test_relations_are_checked(good) -> None:
    records = good.placements_by_component()
    moved = {**records, "rollout": [replace(p, cluster_node_rank=1, local_rank=i, placement_node_rank=0) for i, p in enumerate(records["rollout"])]}
    with pytest.raises(VerificationError, match="collocate_with"):
        verify(good.spec, moved)
    with pytest.raises(VerificationError, match="critic: no placements"):
        verify(good.spec, {name: pls for name, pls in records.items() if name != "critic"})


def test_tp_group_across_nodes_is_caught() -> None:
    s = solved(2, 4, {"a": "0-7"})
    spec_tp = solved(2, 4, {"a": {"placement": "0-7", "tensor_parallel_size": 2}}).spec
    verify(spec_tp, s.placements_by_component())
    spec_tp8 = solved(2, 8, {"a": {"placement": "0-7", "tensor_parallel_size": 8}}).spec
    with pytest.raises(VerificationError, match="group of ranks 0-7 spans nodes"):
        verify(spec_tp8, {"a": [replace(p, cluster_node_rank=p.rank // 4) for p in s.placements("a")]})


def test_capacity_is_checked() -> None:
    s = solved(1, 2, {"a": "0-1:0-3", "b": {"placement": "0-1", "max_processes_per_hardware": 3}})
    tight = PlacementSpec.build(s.cluster, {"a": "0-1:0-3", "b": {"placement": "0-1", "max_processes_per_hardware": 2}})
    with pytest.raises(VerificationError, match="more than 2 processes"):
        verify(tight, s.placements_by_component())
