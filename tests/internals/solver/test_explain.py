"""Infeasible specs: the explanation names exactly the statements in conflict, and suggestions
(checked by solving) say what would make the spec feasible."""

from __future__ import annotations

import pytest
from helpers import config

from solver_placement import InfeasiblePlacementError, solve
from solver_placement._diagnose import diagnose

GROUPS = [{"label": "a800", "node_ranks": 0}, {"label": "4090", "node_ranks": "1-2"}]
HETERO = {"num_nodes": 3, "num_gpus": [8, 2, 2], "node_groups": GROUPS}

CASES = [
    (  # the issue's own example
        "too_big_for_4090_nodes", HETERO,
        {"rollout": {"node_group": "4090", "processes": 2, "hardware_per_process": 4}},
        ["rollout: needs 2 processes x 4 GPUs = 8 GPUs, but node group '4090' (4 GPUs) offers 4"],
        ["rollout: node_group 'a800' instead of '4090' fits"],
    ),
    (
        "process_wider_than_any_node", HETERO,
        {"rollout": {"node_group": "4090", "processes": 1, "hardware_per_process": 4}},
        ["rollout: needs 4 GPUs per process on one node (a span of 4), but the largest node in node group '4090' (4 GPUs) has 2"],
        ["rollout: node_group 'a800' instead of '4090' fits"],  # one more 2-GPU node would not help
    ),
    (
        "collocation_vs_exclusivity", {"num_nodes": 1, "num_gpus": 8},
        {"actor": "0-3", "reward": "2-3", "rollout": {"processes": 4, "collocate_with": "actor", "exclusive_with": ["reward"]}},
        ["rollout collocates with actor (same hardware set)", "rollout is exclusive with reward (no shared hardware)"],
        [],
    ),
    (
        "exclusive_leaves_too_few", {"num_nodes": 2, "num_gpus": 4},
        {"actor": "0-3", "rollout": {"processes": 6, "exclusive_with": ["actor"]}},
        ['actor: placement "0-3" uses 4 GPUs', "rollout needs 6 processes x 1 GPU", "rollout is exclusive with actor (no shared hardware)",
         "counting: the cluster has 2 nodes x 4 GPUs = 8 GPUs; together they need 10"],
        ["rollout: processes 4 instead of 6 fits", "one more node like node 0"],
    ),
    (
        "exclusive_fragmented_node", {"num_nodes": 2, "num_gpus": 4},
        {"actor": "0-5", "rollout": {"processes": 1, "hardware_per_process": 4, "exclusive_with": ["actor"]}},
        ['actor: placement "0-5" uses 6 GPUs', "rollout needs 1 process x 4 GPUs", "rollout is exclusive with actor (no shared hardware)",
         "counting: the cluster has 2 nodes x 4 GPUs = 8 GPUs; together they need 10"],
        ["one more node like node 0"],
    ),
    (
        "rank_strings_overlap_exclusive", {"num_nodes": 1, "num_gpus": 8},
        {"actor": {"placement": "0-3", "exclusive_with": ["reward"]}, "reward": "3-4"},
        ["actor is exclusive with reward (no shared hardware), but both use GPU 3 of node 0"],
        [],
    ),
    (
        "rank_string_crosses_nodes", {"num_nodes": 2, "num_gpus": 4},
        {"actor": "2-5:0"},
        ['actor: segment "2-5:0" (process 0) must have all its GPUs on one node, but its ranks lie on nodes 0, 1'],
        [],
    ),
    (
        "tp_group_crosses_nodes", {"num_nodes": 2, "num_gpus": 6},
        {"actor": {"placement": "4-11", "tensor_parallel_size": 4}},
        ["actor: tensor-parallel group 0 (processes 0-3) must have all its GPUs on one node, but its ranks lie on nodes 0, 1"],
        [],
    ),
    (
        "capacity_exceeded", {"num_nodes": 1, "num_gpus": 4},
        {"reward": "0-1:0-3", "inference": {"placement": "0-1", "max_processes_per_hardware": 2}},
        ["inference: at most 2 processes per item (max_processes_per_hardware), but GPU 0 of node 0 holds 3",
         "inference: at most 2 processes per item (max_processes_per_hardware), but GPU 1 of node 0 holds 3"],
        [],
    ),
    (
        "capacity_declarative", {"num_nodes": 1, "num_gpus": 4},
        {"reward": "0-3:0-7", "inference": {"processes": 2, "max_processes_per_hardware": 2}},
        ['reward: placement "0-3:0-7" uses 4 GPUs', "inference needs 2 processes x 1 GPU",
         "inference: at most 2 processes per item (max_processes_per_hardware)",
         "counting: the cluster has 1 node x 4 GPUs; inference may use 0 GPUs of them"],
        [],  # every GPU already holds 2 reward processes: no smaller count fits either
    ),
    (
        "stride_window_no_cover", {"num_nodes": 1, "num_gpus": 8},
        {"rollout": {"resources": "0-5", "hardware_per_process": 2, "stride": 2}},
        ["rollout: each process takes 2 GPUs with stride 2", 'rollout: every item of resources "0-5" is shared by 1 process'],
        [],
    ),
    (
        "nesting_broken", {"num_nodes": 1, "num_gpus": 8},
        {"actor": {"placement": "0-3", "tensor_parallel_size": 2}, "rollout": {"placement": [[0, 3], [1, 2]], "collocate_with": "actor"}},
        ["rollout: process 0 (ranks [0, 3]): each rollout process sits inside one tensor-parallel group of actor (2 GPUs)",
         "rollout: process 1 (ranks [1, 2]): each rollout process sits inside one tensor-parallel group of actor (2 GPUs)"],
        [],
    ),
    (
        "collocated_sets_differ", {"num_nodes": 1, "num_gpus": 8},
        {"actor": "0-3", "rollout": {"placement": "2-5", "collocate_with": "actor"}},
        ["rollout collocates with actor (same hardware set), but rollout uses 2 items outside actor and leaves 2 of actor's unused",
         'rollout: segment "2-5" (process 2): each rollout process sits inside one tensor-parallel group of actor',
         'rollout: segment "2-5" (process 3): each rollout process sits inside one tensor-parallel group of actor'],
        [],
    ),
]


@pytest.mark.parametrize(("name", "shape", "placement", "conflicts", "suggestions"), CASES, ids=[c[0] for c in CASES])
def test_conflicts_are_named(name: str, shape: dict, placement: dict, conflicts: list[str], suggestions: list[str]) -> None:
    cfg = config(shape["num_nodes"], shape["num_gpus"], placement, **({"node_groups": shape["node_groups"]} if "node_groups" in shape else {}))
    with pytest.raises(InfeasiblePlacementError) as caught:
        solve(cfg)
    got = list(caught.value.conflicts)
    assert [c for c in got if not any(c.startswith(want) for want in conflicts)] == [], got
    assert all(any(c.startswith(want) for c in got) for want in conflicts), got
    diagnosis = diagnose(cfg)
    assert not diagnosis.feasible
    for want in suggestions:
        assert any(s.startswith(want) for s in diagnosis.suggestions), diagnosis.suggestions


def test_valid_config_gets_one_line() -> None:
    summary = diagnose("models/quickstart.yaml").summary()
    assert summary.startswith("valid: 4 components, 36 processes on 3 of 3 nodes") and "\n" not in summary
