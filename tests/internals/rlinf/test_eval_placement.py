"""ModelParallelEvalComponentPlacement: rollout engines and reward for evaluation.

Expected layouts are derived by hand from RLinf's ``rlinf/utils/placement.py`` (0.3.0):
``_generate_placements`` makes the rollout ``PackedPlacementStrategy(r0, rN,
num_hardware_per_process=rollout_tp, stride=1)`` and the reward ``PackedPlacementStrategy(w0,
wN)``; the mode is always COLLOCATED. Packed with ``n`` GPUs per process and stride 1 takes
consecutive blocks of ``n`` GPUs. A layout is one ``(cluster_node_rank, local GPU ids)`` pair per
process.
"""

from __future__ import annotations

from typing import Any

import pytest

from solver_placement import Cluster, FlexiblePlacementStrategy, PackedPlacementStrategy, PlacementConfigError, PlacementMode, verify
from solver_placement._frontends.rlinf import ModelParallelEvalComponentPlacement


def job(placement: dict[str, Any], nodes: int = 1, gpus: int = 8, groups: list[dict[str, Any]] | None = None, **sections: Any) -> dict[str, Any]:
    cluster: dict[str, Any] = {"num_nodes": nodes, "num_gpus_per_node": gpus, "component_placement": placement}
    if groups:
        cluster["node_groups"] = groups
    return {"cluster": cluster, "runner": {"task_type": "reasoning_eval"}, **sections}


def rollout(tp: int = 1, pp: int = 1) -> dict[str, Any]:
    return {"rollout": {"tensor_parallel_size": tp, "pipeline_parallel_size": pp}}


def evaluate(config: dict[str, Any], cluster: Cluster | None = None) -> ModelParallelEvalComponentPlacement:
    placement = ModelParallelEvalComponentPlacement(config, cluster)
    verify(placement.spec, placement.solution.placements_by_component())
    return placement


def layout(placement: ModelParallelEvalComponentPlacement, name: str) -> list[tuple[int, list[int]]]:
    return [(p.cluster_node_rank, p.local_hardware_ranks) for p in placement.get_placements(name)]


def test_wideseek_eval_layout_tp2():
    # WideSeek-R1 base_eval.yaml: "actor,reward: all / rollout: all", here with rollout TP 2 on 8 GPUs:
    # Packed(0, 7, n=2, stride=1) -> [0,1], [2,3], [4,5], [6,7]; reward Packed(0, 7) -> one per GPU.
    cp = evaluate(job({"actor,reward": "all", "rollout": "all"}, **rollout(tp=2)))
    assert layout(cp, "rollout") == [(0, [0, 1]), (0, [2, 3]), (0, [4, 5]), (0, [6, 7])]
    assert layout(cp, "reward") == [(0, [g]) for g in range(8)]
    # the actor is not laid out by the eval class: it keeps its (Flexible) placement, one per GPU
    assert layout(cp, "actor") == [(0, [g]) for g in range(8)]
    assert isinstance(cp.get_strategy("actor"), FlexiblePlacementStrategy)
    strategy = cp.get_strategy("rollout")
    assert isinstance(strategy, PackedPlacementStrategy)
    assert (strategy.start_hardware_rank, strategy.end_hardware_rank, strategy.num_hardware_per_process, strategy.stride) == (0, 7, 2, 1)
    assert cp.get_world_size("rollout") == 4


def test_properties_are_rlinfs():
    # RLinf: always collocated; rollout_dp_size = #rollout GPUs // (tp * pp); world sizes are GPU counts
    cp = evaluate(job({"rollout": "0-5", "reward": "6-7"}, **rollout(tp=2)))
    assert cp.placement_mode is PlacementMode.COLLOCATED
    assert (cp.is_collocated, cp.is_disaggregated, cp.is_auto, cp.is_pipeline, cp.has_dedicated_inference) == (True, False, False, False, False)
    assert (cp.rollout_tp_size, cp.rollout_pp_size, cp.rollout_dp_size, cp.rollout_world_size, cp.reward_world_size) == (2, 1, 3, 6, 2)
    assert layout(cp, "rollout") == [(0, [0, 1]), (0, [2, 3]), (0, [4, 5])]
    assert layout(cp, "reward") == [(0, [6]), (0, [7])]


def test_defaults_one_gpu_engines():
    # no rollout section: tensor_parallel_size defaults to 1, so Packed(0, 3, n=1) -> one engine per GPU
    cp = evaluate(job({"rollout": "0-3", "reward": "0-3"}))
    assert layout(cp, "rollout") == [(0, [g]) for g in range(4)]
    assert (cp.rollout_tp_size, cp.rollout_dp_size, cp.rollout_world_size) == (1, 4, 4)


def test_pipeline_size_counts_in_dp_only():
    # RLinf eval packs n = rollout_tp (the engines ignore pp), but rollout_dp_size divides by tp * pp:
    # 8 GPUs, tp 2, pp 2 -> four 2-GPU engines, rollout_dp_size 8 // 4 = 2
    cp = evaluate(job({"rollout,reward": "all"}, **rollout(tp=2, pp=2)))
    assert layout(cp, "rollout") == [(0, [0, 1]), (0, [2, 3]), (0, [4, 5]), (0, [6, 7])]
    assert cp.rollout_dp_size == 2


def test_reward_is_one_process_per_gpu_whatever_was_written():
    # RLinf replaces the reward's strategy by Packed(w0, wN): "0-1:0-3" (two per GPU) becomes one per GPU
    cp = evaluate(job({"rollout": "0-3", "reward": "0-1:0-3"}))
    assert layout(cp, "reward") == [(0, [0]), (0, [1])]
    assert cp.reward_world_size == 2


def test_node_group_is_honoured():
    # group 'gen' is node 1: rollout "0-7" there means node 1's GPUs (RLinf would use cluster ranks 0-7 = node 0)
    groups = [{"label": "gen", "node_ranks": 1}]
    placement = {"rollout": {"node_group": "gen", "placement": "0-7"}, "reward": "0-1"}
    cp = evaluate(job(placement, nodes=2, groups=groups, **rollout(tp=4)))
    assert layout(cp, "rollout") == [(1, [0, 1, 2, 3]), (1, [4, 5, 6, 7])]
    assert {p.node_group_label for p in cp.get_placements("rollout")} == {"gen"}
    assert cp.get_strategy("rollout").node_groups == ("gen",)
    assert layout(cp, "reward") == [(0, [0]), (0, [1])]


def test_cluster_argument():
    # RLinf's call: ModelParallelEvalComponentPlacement(cfg, cluster)
    cluster = Cluster(num_nodes=1, num_gpus_per_node=4)
    cp = evaluate(job({"rollout,reward": "all"}, gpus=4, **rollout(tp=2)), cluster)
    assert cp.cluster is cluster
    assert layout(cp, "rollout") == [(0, [0, 1]), (0, [2, 3])]


EVAL_ERRORS = [
    # RLinf: "Rollout GPUs must be specified" / "Reward GPUs must be specified"
    ({"reward": "0-7"}, rollout(), ["'rollout'", "needs rollout and reward"]),
    ({"rollout": "0-7"}, rollout(), ["'reward'", "needs rollout and reward"]),
    # RLinf: "Rollout GPUs [...] must be continuous."
    ({"rollout": "0-2,4-7", "reward": "0"}, rollout(), ["rollout", "0-2,4-7", "continuous"]),
    # RLinf fills gaps of the reward; refused here (the gap's GPUs would run reward processes)
    ({"rollout": "0-7", "reward": "0,2"}, rollout(), ["reward", "0,2", "continuous"]),
    # RLinf: "Rollout TP size 4 must be less than or equal to Rollout world size 2."
    ({"rollout": "0-1", "reward": "0-1"}, rollout(tp=4), ["rollout", "TP size 4", "less than or equal", "2 GPUs"]),
    # RLinf's Packed constructor: 6 GPUs not divisible by n * stride = 4
    ({"rollout": "0-5", "reward": "0-1"}, rollout(tp=4), ["rollout", "6 GPUs (0-5)", "not divisible by rollout.tensor_parallel_size = 4"]),
    # engines need GPUs
    ({"rollout": {"node_group": "node", "placement": "0"}, "reward": "0"}, rollout(), ["rollout", "not GPUs"]),
    ({"rollout,reward": "all"}, {"rollout": {"tensor_parallel_size": 0}}, ["rollout.tensor_parallel_size", "positive"]),
]


@pytest.mark.parametrize("placement, sections, fragments", EVAL_ERRORS, ids=lambda v: str(v)[:40])
def test_eval_rules(placement, sections, fragments):
    with pytest.raises(PlacementConfigError) as info:
        ModelParallelEvalComponentPlacement(job(placement, **sections))
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)
