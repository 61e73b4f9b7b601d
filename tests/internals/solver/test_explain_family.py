"""The impossible specs of ``models/infeasible/``: each answer names exactly the statements that
matter (and the counting that rules them out), fast, and the fixes offered were checked."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from helpers import MODELS, config

from solver_placement import InfeasiblePlacementError, PlacementSpec, solve
from solver_placement._diagnose import diagnose
from solver_placement._solver import SolverOptions, explain_spec

FAMILY = MODELS / "infeasible"
ACTOR_120_TP8 = "actor needs 120 processes x 1 GPU in tensor-parallel groups of 8 (15 groups of 8 GPUs, each on one node)"
COUNTING_129 = [ACTOR_120_TP8, "reward needs 9 processes x 1 GPU", "reward is exclusive with actor (no shared hardware)",
                "counting: the cluster has 16 nodes x 8 GPUs = 128 GPUs; together they need 129"]
EXPECTED = {
    "counting_exclusive": COUNTING_129,
    "counting_collocated": COUNTING_129,  # the collocated rollout and the env play no part
    "tp_granularity": [  # the actor alone is impossible: the collocated rollout is not blamed
        "actor needs 32 processes x 1 GPU in tensor-parallel groups of 8 (4 groups of 8 GPUs, each on one node)",
        "counting: the cluster has 16 nodes x 4 GPUs = 64 GPUs; room for 0 of actor's 4 groups of 8 GPUs",
    ],
    "tp_fragmented": [
        "actor needs 68 processes x 1 GPU in tensor-parallel groups of 4 (17 groups of 4 GPUs, each on one node)",
        "counting: the cluster has 16 nodes x 6 GPUs = 96 GPUs; room for 16 of actor's 17 groups of 4 GPUs",
    ],
    "exclusive_granularity": [
        "actor needs 104 processes x 1 GPU in tensor-parallel groups of 8 (13 groups of 8 GPUs, each on one node)",
        "reward needs 4 processes x 5 GPUs", "reward is exclusive with actor (no shared hardware)",
        "counting: the cluster has 16 nodes x 8 GPUs = 128 GPUs; at most 1 block of more than 4 GPUs fit on a node, "
        "but they need 13 of actor, 4 of reward on 16 nodes",
    ],
    "memory": [
        "actor needs 128 processes x 1 GPU", "rollout needs 128 processes x 1 GPU",
        "GPU memory: actor running (60 GB per process) with the others idle (rollout 40 GB) must fit 80 GB per GPU",
        "counting: the cluster has 16 nodes x 8 GPUs = 128 GPUs; together they need 256",
    ],
    "topology": [
        "actor needs 2 pipelines of 32 GPUs", "actor: topology.pipeline_parallel.rack: require (each pipeline inside one 'rack' domain)",
        "counting: the largest 'rack' domain offers 16 GPUs, room for 0 such pipelines",
    ],
    "heterogeneous": [
        "actor needs 24 processes x 1 GPU in tensor-parallel groups of 8 (3 groups of 8 GPUs, each on one node)",
        "counting: the cluster has 2 nodes x 8 GPUs + 14 nodes x 4 GPUs = 72 GPUs; room for 2 of actor's 3 groups of 8 GPUs",
    ],
}


def test_the_family_is_complete() -> None:
    assert sorted(path.stem for path in FAMILY.glob("*.yaml")) == sorted(EXPECTED)
    for path in FAMILY.glob("*.yaml"):
        assert path.read_text().startswith("# Impossible"), f"{path.name} must say what makes it impossible"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_solve_and_explain_name_exactly_the_statements_that_matter(name: str) -> None:
    path = FAMILY / f"{name}.yaml"
    with pytest.raises(InfeasiblePlacementError) as caught:
        solve(path)
    assert list(caught.value.conflicts) == EXPECTED[name]
    assert [s.text for s in explain_spec(PlacementSpec.from_config(path), SolverOptions(time_limit_s=10))] == EXPECTED[name]


@pytest.mark.parametrize(("name", "first_fixes"), [
    ("counting_exclusive", ["actor: processes 112 instead of 120 fits", "reward: processes 8 instead of 9 fits"]),
    ("tp_granularity", ["actor: tensor_parallel_size 4 instead of 8 fits", "8-GPU nodes in place of the 16 nodes with 4 GPUs that actor may use fit"]),
    ("heterogeneous", ["actor: processes 16 instead of 24 fits", "actor: tensor_parallel_size 4 instead of 8 fits"]),
    ("memory", ["GPUs of 100 GB (instead of 80 GB) fit the memory of actor, rollout on one GPU"]),
    ("topology", ["actor: tensor_parallel_size 4 instead of 8 fits"]),
])
def test_fixes_are_the_usual_changes_cheapest_first(name: str, first_fixes: list[str]) -> None:
    diagnosis = diagnose(FAMILY / f"{name}.yaml", time_limit_s=30)
    assert list(diagnosis.suggestions[: len(first_fixes)]) == first_fixes


@pytest.mark.parametrize(("actor", "rollout", "fix"), [
    (16, 6, "rollout: processes 8 instead of 6 fits (covers actor's 16 GPUs)"),
    (12, 8, "rollout: processes 6 instead of 8 fits (covers actor's 12 GPUs)"),
])
def test_a_collocated_component_that_does_not_cover_its_target_is_told_the_count_that_does(actor: int, rollout: int, fix: str) -> None:
    placement = {"actor": {"processes": actor, "tensor_parallel_size": 4},
                 "rollout": {"processes": rollout, "hardware_per_process": 2, "stride": "auto", "collocate_with": "actor"}}
    diagnosis = diagnose(config(2, 8, placement), time_limit_s=30)
    assert not diagnosis.feasible and diagnosis.suggestions[0] == fix


def test_counting_answers_at_1024_nodes_in_milliseconds() -> None:
    placement = {"actor": {"processes": 120 * 64, "tensor_parallel_size": 8}, "reward": {"processes": 9 * 64, "exclusive_with": ["actor"]}}
    started = time.perf_counter()
    with pytest.raises(InfeasiblePlacementError) as caught:
        solve(config(1024, 8, placement), time_limit_s=5)
    assert time.perf_counter() - started < 2.0
    assert caught.value.conflicts[-1] == "counting: the cluster has 1024 nodes x 8 GPUs = 8192 GPUs; together they need 8256"


def test_a_component_impossible_alone_is_blamed_alone() -> None:
    """Beyond counting (a stride pattern fits once on a 4-GPU node), the exact explanation tries
    each component alone first: the collocated reward and the critic are not named."""
    placement = {"actor": {"processes": 2, "hardware_per_process": 2, "stride": 3}, "reward": {"processes": 4, "collocate_with": "actor"},
                 "critic": {"processes": 1}}
    with pytest.raises(InfeasiblePlacementError) as caught:
        solve(config(1, 4, placement))
    assert list(caught.value.conflicts) == ["actor: each process takes 2 GPUs with stride 3"]


def test_every_family_file_stays_impossible_on_more_nodes(tmp_path: Path) -> None:
    """The benchmark scales node counts and processes together; the reason must not change."""
    text = (FAMILY / "counting_exclusive.yaml").read_text().replace("num_nodes: 16", "num_nodes: 128")
    text = text.replace("processes: 120", "processes: 960").replace("processes: 9,", "processes: 72,")
    (tmp_path / "big.yaml").write_text(text)
    with pytest.raises(InfeasiblePlacementError) as caught:
        solve(tmp_path / "big.yaml")
    assert caught.value.conflicts[-1] == "counting: the cluster has 128 nodes x 8 GPUs = 1024 GPUs; together they need 1032"
