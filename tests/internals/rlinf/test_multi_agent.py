"""MultiAgentModelParallelComponentPlacement and its eval variant: several engines in the actor's GPUs.

Expected layouts are derived by hand from RLinf 0.3.0 (``rlinf/utils/placement.py``) and the
WideSeek-R1 entry scripts and configs (``examples/agent/wideseek_r1/{train,eval}.py``,
``config/train_qwen3_hybrid_local_judge.yaml``, ``config/eval_qwen3_widesearch_local_judge.yaml``):

* the mode is forced COLLOCATED, so the rollout is ``Packed(r0, rN, n=rollout_tp, stride=s)`` with
  ``s = actor_tp // rollout_tp`` when the actor's TP is larger, else 1; actor, reward
  ``Packed(x0, xN)`` (one process per GPU);
* ``Packed(start, end, n, stride)`` tiles every block of ``n * stride`` GPUs as ``stride``
  interleaved processes (n 1, stride 2 over 0-1 -> [0], [1]; n 2, stride 2 over 0-3 -> [0,2], [1,3]);
* the rollout sync mode is COLLOCATED only when the rollout holds exactly the actor's GPUs;
* ``get_strategy(name, PackedPlacementStrategy)`` is ``Packed(h0, hN)`` over the engine's own GPUs
  with the rollout's ``n`` and stride.

A layout is one ``(cluster_node_rank, local GPU ids)`` pair per process.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from solver_placement import FlexiblePlacementStrategy, PackedPlacementStrategy, PlacementConfigError, PlacementMode, RolloutSyncMode, verify
from solver_placement._frontends.rlinf import (
    ComponentPlacement,
    MultiAgentModelParallelComponentPlacement,
    MultiAgentModelParallelEvalComponentPlacement,
)

#: train_qwen3_hybrid_local_judge.yaml / eval_qwen3_widesearch_local_judge.yaml, on one 4-GPU node
WIDESEEK = {"actor,reward": "all", "rollout": "0-1", "rollout_judge": "2-3"}


def job(placement: dict[str, Any], gpus: int = 8, nodes: int = 1, actor_tp: int = 1, rollout_tp: int = 1, **sections: Any) -> dict[str, Any]:
    return {
        "cluster": {"num_nodes": nodes, "num_gpus_per_node": gpus, "component_placement": placement},
        "actor": {"model": {"tensor_model_parallel_size": actor_tp}},
        "rollout": {"tensor_parallel_size": rollout_tp, "pipeline_parallel_size": 1},
        **sections,
    }


def judge(tp: int | None = 1, **extra: Any) -> dict[str, Any]:
    """The rollout_judge section of the WideSeek configs (tensor_parallel_size: 1 there)."""
    return {"rollout_judge": {"group_name": "RolloutJudgeGroup", **({} if tp is None else {"tensor_parallel_size": tp}), **extra}}


def checked(placement: ComponentPlacement) -> Any:
    verify(placement.spec, placement.solution.placements_by_component())
    return placement


def train(config: dict[str, Any]) -> MultiAgentModelParallelComponentPlacement:
    return checked(MultiAgentModelParallelComponentPlacement(config))


def layout(placement: ComponentPlacement, name: str) -> list[tuple[int, list[int]]]:
    return [(p.cluster_node_rank, p.local_hardware_ranks) for p in placement.get_placements(name)]


def strategy_layout(placement: ComponentPlacement, strategy: PackedPlacementStrategy) -> list[tuple[int, list[int]]]:
    return [(p.cluster_node_rank, p.local_hardware_ranks) for p in strategy.get_placement(placement.cluster)]


def packed_args(strategy: Any) -> tuple[int, int, int, int]:
    assert isinstance(strategy, PackedPlacementStrategy)
    return (strategy.start_hardware_rank, strategy.end_hardware_rank, strategy.num_hardware_per_process, strategy.stride)


# ------------------------------------------------------------------------------ training
def test_wideseek_local_judge_training():
    # actor TP 2 (train_qwen3_hybrid_local_judge.yaml), rollout and judge TP 1, 4 GPUs
    cp = train(job(WIDESEEK, gpus=4, actor_tp=2, **judge()))
    assert cp.placement_mode is PlacementMode.COLLOCATED and cp.is_collocated and not cp.is_pipeline
    # rollout 0-1 is not the actor's 0-3: several engines, weights go by collectives
    assert cp.rollout_sync_mode is RolloutSyncMode.DISAGGREGATED
    assert layout(cp, "actor") == layout(cp, "reward") == [(0, [g]) for g in range(4)]
    # Packed(0, 1, n=1, stride=2 // 1 = 2): one block of 2 GPUs, 2 interleaved 1-GPU processes
    assert packed_args(cp.get_strategy("rollout")) == (0, 1, 1, 2)
    assert layout(cp, "rollout") == [(0, [0]), (0, [1])]
    # the judge keeps its own placement until asked for a packed strategy
    assert isinstance(cp.get_strategy("rollout_judge"), FlexiblePlacementStrategy)
    assert layout(cp, "rollout_judge") == [(0, [2]), (0, [3])]
    judge_strategy = cp.get_strategy("rollout_judge", PackedPlacementStrategy)
    assert packed_args(judge_strategy) == (2, 3, 1, 2)
    assert strategy_layout(cp, judge_strategy) == [(0, [2]), (0, [3])]
    assert (cp.actor_tp_size, cp.actor_dp_size, cp.actor_world_size) == (2, 2, 4)
    assert (cp.rollout_tp_size, cp.rollout_dp_size, cp.rollout_world_size, cp.reward_world_size) == (1, 2, 2, 4)


def test_single_engine_is_rlinfs_collocated_mode():
    # base_train.yaml "actor,rollout,reward: all" with actor TP 4 / rollout TP 2: rollout
    # Packed(0, 7, n=2, stride=2) -> [0,2],[1,3],[4,6],[5,7]; one engine set on the actor's GPUs -> CUDA IPC
    cp = train(job({"actor,rollout,reward": "all"}, actor_tp=4, rollout_tp=2))
    assert cp.rollout_sync_mode is RolloutSyncMode.COLLOCATED
    assert layout(cp, "rollout") == [(0, [0, 2]), (0, [1, 3]), (0, [4, 6]), (0, [5, 7])]
    # actor rank r is on GPU r, so engine [0,2] is fed by actor ranks 0 and 2, and so on
    assert cp.weight_sync_map() == {0: [0, 2], 1: [1, 3], 2: [4, 6], 3: [5, 7]}
    assert cp.spec.components["rollout"].constraints.collocate_with == "actor"


def test_several_engines_have_no_cuda_ipc_pairing():
    cp = train(job(WIDESEEK, gpus=4, actor_tp=2, **judge()))
    assert cp.spec.components["rollout"].constraints.collocate_with is None
    with pytest.raises(PlacementConfigError, match="rollout sync mode DISAGGREGATED"):
        cp.weight_sync_map()


def test_judge_with_the_rollouts_engine_size_is_shaped_like_the_rollout():
    # actor TP 4, rollout TP 2 on 0-3 -> Packed(0, 3, n=2, stride=2) -> [0,2],[1,3];
    # judge TP 2 on 4-7 -> Packed(4, 7, n=2, stride=2) -> [4,6],[5,7] (RLinf's reuse of n and stride)
    cp = train(job({"actor,reward": "all", "rollout": "0-3", "rollout_judge": "4-7"}, actor_tp=4, rollout_tp=2, **judge(tp=2)))
    assert layout(cp, "rollout") == [(0, [0, 2]), (0, [1, 3])]
    strategy = cp.get_strategy("rollout_judge", PackedPlacementStrategy)
    assert packed_args(strategy) == (4, 7, 2, 2)
    assert strategy_layout(cp, strategy) == [(0, [4, 6]), (0, [5, 7])]


def test_judge_without_tp_is_shaped_like_the_rollout():
    # no rollout_judge.tensor_parallel_size: RLinf's rule exactly, the rollout's n=2 and stride 2
    cp = train(job({"actor,reward": "all", "rollout": "0-3", "rollout_judge": "4-7"}, actor_tp=4, rollout_tp=2, **judge(tp=None)))
    assert packed_args(cp.get_strategy("rollout_judge", PackedPlacementStrategy)) == (4, 7, 2, 2)


def test_judge_engines_have_their_own_tp():
    # rollout TP 1 (n=1, stride 2), judge TP 2: RLinf would reuse n=1 and start 1-GPU engines for a
    # TP-2 model; here the judge gets Packed(4, 7, n=2, stride=1) -> [4,5],[6,7]
    cp = train(job({"actor,reward": "all", "rollout": "0-3", "rollout_judge": "4-7"}, actor_tp=2, rollout_tp=1, **judge(tp=2)))
    assert layout(cp, "rollout") == [(0, [0]), (0, [1]), (0, [2]), (0, [3])]
    strategy = cp.get_strategy("rollout_judge", PackedPlacementStrategy)
    assert packed_args(strategy) == (4, 7, 2, 1)
    assert strategy_layout(cp, strategy) == [(0, [4, 5]), (0, [6, 7])]


def test_shared_components_keep_their_strategy():
    # RLinf warns "Specifying a PlacementStrategy for 'rollout' ... is not allowed" and returns the default
    cp = train(job(WIDESEEK, gpus=4, actor_tp=2, **judge()))
    with pytest.warns(UserWarning, match="rollout is laid out by MultiAgentModelParallelComponentPlacement"):
        strategy = cp.get_strategy("rollout", PackedPlacementStrategy)
    assert strategy is cp.get_strategy("rollout")


def test_exclusive_components_are_stated_as_exclusive():
    # components other than actor/rollout/reward/inference must not share GPUs: stated for the solver
    placement = {"actor,reward": "all", "rollout": "0-3", "rollout_judge": "4-5", "rollout_fixed_worker": "6-7"}
    sections = {**judge(), "rollout_fixed_worker": {"tensor_parallel_size": 1}}
    cp = train(job(placement, **sections))
    assert cp.spec.components["rollout_judge"].constraints.exclusive_with == ("rollout_fixed_worker",)
    assert layout(cp, "rollout_fixed_worker") == [(0, [6]), (0, [7])]


def test_node_group_is_honoured():
    # group 'train' is node 1; every engine runs on node 1 (RLinf reads the group-local ranks as cluster ranks)
    node1 = {"node_group": "train"}
    placement = {"actor,reward": {**node1, "placement": "all"}, "rollout": {**node1, "placement": "0-3"}, "rollout_judge": {**node1, "placement": "4-7"}}
    config = job(placement, nodes=2, **judge())
    config["cluster"]["node_groups"] = [{"label": "train", "node_ranks": 1}]
    cp = train(config)
    assert layout(cp, "rollout") == [(1, [g]) for g in range(4)]
    strategy = cp.get_strategy("rollout_judge", PackedPlacementStrategy)
    assert strategy.node_groups == ("train",)
    assert strategy_layout(cp, strategy) == [(1, [g]) for g in range(4, 8)]


def test_all_actor_gpus_covered_gives_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        train(job(WIDESEEK, gpus=4, actor_tp=2, **judge()))


def test_idle_actor_gpus_are_reported():
    # RLinf: "Rollout components do not cover all actor GPUs ... Missing: {4, 5, 6, 7}"
    with pytest.warns(UserWarning, match="leave the actor's cluster GPUs 4-7 without an engine"):
        train(job({"actor,reward": "all", "rollout": "0-3"}))


def auto_scheduled(config: dict[str, Any]) -> dict[str, Any]:
    config["cluster"]["auto_scheduler"] = True
    return config


MULTI_AGENT_ERRORS = [
    # RLinf: "Actor and reward must be placed on the same GPUs during multi-agent scenario."
    (job({"actor": "0-7", "reward": "0-3", "rollout": "0-3"}), ["reward", "0-3", "same GPUs"]),
    # RLinf: "Component rollout_judge GPUs {...} are not subsets of actor GPUs {...}."
    (job({"actor,reward": "0-3", "rollout": "0-3", "rollout_judge": "4-5"}, **judge()), ["rollout_judge", "4-5", "among the actor's cluster GPUs 0-3"]),
    (job({"actor,reward": "0-3", "rollout": "2-5"}), ["rollout", "2-5", "among the actor's"]),
    # RLinf: "Resource Conflict: Component 'rollout_fixed_worker' global GPU {3} is already occupied ..."
    (
        job({"actor,reward": "all", "rollout": "0-1", "rollout_judge": "2-3", "rollout_fixed_worker": "3-4"}, **judge()),
        ["rollout_judge", "rollout_fixed_worker", "share cluster GPUs 3"],
    ),
    # forced collocated mode: no dedicated inference
    (job({"actor,reward,rollout": "0-5", "inference": "6-7"}), ["inference", "collocated mode"]),
    # AUTO needs disjoint GPUs, which a multi-agent job never has
    (auto_scheduled(job({"actor,rollout,reward": "all"})), ["auto_scheduler", "only collocated mode"]),
    # RLinf: "Actor TP size (4) must be divisible by Rollout TP size (3)"
    (job({"actor,rollout,reward": "all"}, actor_tp=4, rollout_tp=3), ["actor TP size 4", "divisible by", "rollout TP size 3"]),
    # stride 2 from actor TP 2 needs blocks of 2 GPUs: a 1-GPU rollout window cannot tile
    (job({"actor,reward": "0-3", "rollout": "0"}, actor_tp=2), ["rollout", "actor.model.tensor_model_parallel_size=2", "divisible by"]),
]


@pytest.mark.parametrize("config, fragments", MULTI_AGENT_ERRORS, ids=lambda v: str(v)[:60])
def test_multi_agent_rules(config, fragments):
    with pytest.raises(PlacementConfigError) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a rejected config may leave actor GPUs without an engine
        MultiAgentModelParallelComponentPlacement(config)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


GET_STRATEGY_ERRORS = [
    # RLinf: "Unsupported strategy class ... Currently only PackedPlacementStrategy is supported."
    (FlexiblePlacementStrategy, judge(), ["FlexiblePlacementStrategy", "only PackedPlacementStrategy"]),
    # RLinf: "component_name rollout_judge not found in cfg"
    (PackedPlacementStrategy, {}, ["rollout_judge", "section", "missing"]),
    # RLinf: "Component 'rollout_judge' placement strategy must be divisible by pipeline_parallel_size."
    (PackedPlacementStrategy, judge(pipeline_parallel_size=3), ["rollout_judge", "2 GPUs", "rollout_judge.pipeline_parallel_size = 3"]),
    (PackedPlacementStrategy, judge(dp_size=4), ["rollout_judge.dp_size = 4"]),
]


@pytest.mark.parametrize("cls, sections, fragments", GET_STRATEGY_ERRORS, ids=lambda v: str(v)[:40])
def test_engine_strategy_rules(cls, sections, fragments):
    cp = train(job(WIDESEEK, gpus=4, actor_tp=2, **sections))
    with pytest.raises(PlacementConfigError) as info:
        cp.get_strategy("rollout_judge", cls)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


# ------------------------------------------------------------------------------ eval
def test_wideseek_local_judge_eval():
    # eval_qwen3_widesearch_local_judge.yaml: the eval placement lays out rollout Packed(0, 1, n=1,
    # stride=1) and reward Packed(0, 3); the judge's packed strategy reuses n=1, stride=1 over 2-3
    cp = checked(MultiAgentModelParallelEvalComponentPlacement(job(WIDESEEK, gpus=4, **judge())))
    assert cp.placement_mode is PlacementMode.COLLOCATED
    assert layout(cp, "rollout") == [(0, [0]), (0, [1])]
    assert layout(cp, "reward") == [(0, [g]) for g in range(4)]
    strategy = cp.get_strategy("rollout_judge", PackedPlacementStrategy)
    assert packed_args(strategy) == (2, 3, 1, 1)
    assert strategy_layout(cp, strategy) == [(0, [2]), (0, [3])]
    assert (cp.rollout_dp_size, cp.rollout_world_size) == (2, 2)


def test_eval_with_two_gpu_engines():
    # rollout TP 2 on 0-3 -> [0,1],[2,3]; judge TP 2 on 4-7 -> the rollout's n=2, stride 1 -> [4,5],[6,7]
    placement = {"actor,reward": "all", "rollout": "0-3", "rollout_judge": "4-7"}
    cp = checked(MultiAgentModelParallelEvalComponentPlacement(job(placement, rollout_tp=2, **judge(tp=2))))
    assert layout(cp, "rollout") == [(0, [0, 1]), (0, [2, 3])]
    assert strategy_layout(cp, cp.get_strategy("rollout_judge", PackedPlacementStrategy)) == [(0, [4, 5]), (0, [6, 7])]
