"""placement_for_config: the placement class RLinf's entry script for a config would use.

The mapping is read from RLinf 0.3.0's entry scripts and ``rlinf/config.py``:
``examples/reasoning/main_grpo.py`` (task_type reasoning) builds ModelParallelComponentPlacement;
coding online RL too, and ``validate_coding_online_rl_cfg`` asserts "Online coding task must use
disaggregated placement mode"; Search-R1 ``eval.py`` (reasoning_eval) builds
ModelParallelEvalComponentPlacement; WideSeek-R1 ``train.py`` / ``eval.py`` (configs with a
``rollout_judge`` engine) build the multi-agent classes; the embodied, SFT and offline scripts
build HybridComponentPlacement.
"""

from __future__ import annotations

from typing import Any

import pytest
from omegaconf import OmegaConf

from solver_placement import Cluster, PlacementConfigError, PlacementMode, load_job
from solver_placement._frontends.rlinf import (
    ComponentPlacement,
    HybridComponentPlacement,
    ModelParallelComponentPlacement,
    ModelParallelEvalComponentPlacement,
    MultiAgentModelParallelComponentPlacement,
    MultiAgentModelParallelEvalComponentPlacement,
)
from solver_placement._frontends.rlinf.task_placement import placement_class, placement_for_config

COLLOCATED = {"actor,rollout,reward": "all"}
DISAGGREGATED = {"actor": "0-3", "rollout": "4-5", "inference": "6-7", "reward": "6-7"}
WIDESEEK = {"actor,reward": "all", "rollout": "0-3", "rollout_judge": "4-7"}


def job(placement: dict[str, Any], task: str | None, rollout_tp: int = 1, **sections: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "cluster": {"num_nodes": 1, "num_gpus_per_node": 8, "component_placement": placement},
        "actor": {"model": {"tensor_model_parallel_size": 2}},
        "rollout": {"tensor_parallel_size": rollout_tp},
        "algorithm": {"recompute_logprobs": True},
        **sections,
    }
    if task is not None:
        config["runner"] = {"task_type": task}
    return config


@pytest.mark.parametrize(
    "placement, task, expected",
    [
        (COLLOCATED, "reasoning", ModelParallelComponentPlacement),
        (DISAGGREGATED, "coding_online_rl", ModelParallelComponentPlacement),
        (WIDESEEK, "reasoning", MultiAgentModelParallelComponentPlacement),
        ({"rollout,reward": "all"}, "reasoning_eval", ModelParallelEvalComponentPlacement),
        (WIDESEEK, "reasoning_eval", MultiAgentModelParallelEvalComponentPlacement),
        ({"actor,env,rollout": "all"}, "embodied", HybridComponentPlacement),
        ({"actor,env,rollout": "all"}, "embodied_eval", HybridComponentPlacement),
        ({"actor": "all"}, "sft", HybridComponentPlacement),
        ({"actor,rollout": "all"}, "offline", HybridComponentPlacement),
    ],
)
def test_class_follows_the_entry_scripts(placement, task, expected):
    config = job(placement, task, rollout_judge={"tensor_parallel_size": 1})
    assert placement_class(load_job(config)) is expected
    assert type(placement_for_config(config)) is expected


def test_reasoning_rollout_engines_hold_their_tp_gpus():
    # rollout.tensor_parallel_size: 2 with task_type reasoning: engines of 2 GPUs, strided by
    # actor TP 2 // rollout TP 2 = 1 -> [0,1], [2,3], [4,5], [6,7] (never 1-GPU rollouts)
    placement = placement_for_config(job(COLLOCATED, "reasoning", rollout_tp=2))
    assert [p.local_hardware_ranks for p in placement.get_placements("rollout")] == [[0, 1], [2, 3], [4, 5], [6, 7]]


def test_coding_online_rl_is_disaggregated():
    placement = placement_for_config(job(DISAGGREGATED, "coding_online_rl"))
    assert placement.placement_mode is PlacementMode.DISAGGREGATED


def test_coding_online_rl_refuses_collocated_mode():
    # rlinf/config.py: "Online coding task must use disaggregated placement mode"
    with pytest.raises(PlacementConfigError, match="coding_online_rl.*must use disaggregated.*COLLOCATED mode"):
        placement_for_config(job(COLLOCATED, "coding_online_rl"))


def test_without_task_type_places_as_written():
    # no runner section and rollout engines of 1 GPU: the components are placed as written
    placement = placement_for_config(job({"actor": "0-3", "rollout": "4-7"}, None))
    assert type(placement) is ComponentPlacement
    assert placement.get_world_size("rollout") == 4


def test_without_task_type_engine_sizes_are_ambiguous():
    with pytest.raises(PlacementConfigError) as info:
        placement_for_config(job(COLLOCATED, None, rollout_tp=2))
    message = str(info.value)
    for fragment in ("rollout.tensor_parallel_size: 2", "no runner.task_type", "one process per listed GPU", "reasoning_eval"):
        assert fragment in message, message


def test_unknown_task_type():
    with pytest.raises(PlacementConfigError, match="runner.task_type 'math' is not one of RLinf's task types"):
        placement_for_config(job(COLLOCATED, "math"))


def test_task_type_must_be_text():
    with pytest.raises(PlacementConfigError, match="runner.task_type must be a string"):
        placement_class(load_job(job(COLLOCATED, None, runner={"task_type": 3})))


def test_hybrid_rollout_must_hold_whole_engines():
    # embodied places the rollout as written: "4-7" is four 1-GPU processes, not engines of 2 GPUs
    with pytest.raises(PlacementConfigError) as info:
        placement_for_config(job({"actor": "0-3", "rollout": "4-7"}, "embodied", rollout_tp=2))
    for fragment in ("rollout", "HybridComponentPlacement", "processes of 1 GPU,", "= 2 GPUs per engine"):
        assert fragment in str(info.value), str(info.value)


def test_hybrid_rollout_with_whole_engines():
    # "4-7:0-1": two processes of two GPUs each, matching tensor_parallel_size 2
    placement = placement_for_config(job({"actor": "0-3", "rollout": "4-7:0-1"}, "embodied", rollout_tp=2))
    assert [p.local_hardware_ranks for p in placement.get_placements("rollout")] == [[4, 5], [6, 7]]


def test_yaml_path_and_cluster_argument(tmp_path):
    path = tmp_path / "job.yaml"
    OmegaConf.save(OmegaConf.create(job(COLLOCATED, "reasoning", rollout_tp=2)), path)
    cluster = Cluster(num_nodes=1, num_gpus_per_node=8)
    placement = placement_for_config(str(path), cluster)
    assert isinstance(placement, ModelParallelComponentPlacement) and placement.cluster is cluster
