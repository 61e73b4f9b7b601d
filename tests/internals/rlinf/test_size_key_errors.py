"""Issue 31, item 4: an RLinf model-parallel size that does not fit is reported in the key the user
wrote (``actor.model.tensor_model_parallel_size``, ``rollout.tensor_parallel_size``), with its value
and a value that places, never with a segment or rank range the layout wrote; and the suggested
value is checked: the same config with it places."""

from __future__ import annotations

from typing import Any

import pytest

from solver_placement import (
    Cluster,
    InfeasiblePlacementError,
    ModelParallelComponentPlacement,
    ModelParallelEvalComponentPlacement,
    PackedPlacementStrategy,
    PlacementConfigError,
    PlacementError,
)
from solver_placement._frontends.rlinf import MultiAgentModelParallelComponentPlacement, MultiAgentModelParallelEvalComponentPlacement
from solver_placement._frontends.rlinf.size_keys import divisor_size
from solver_placement._solver.nearest_sizes import MAX_TRIES, nearest_fit, tries


def job(placement: dict[str, Any], nodes: int = 1, actor_tp: int | None = None, rollout_tp: int | None = None) -> dict[str, Any]:
    config: dict[str, Any] = {"cluster": {"num_nodes": nodes, "num_gpus_per_node": 8, "component_placement": placement}}
    if actor_tp is not None:
        config["actor"] = {"model": {"tensor_model_parallel_size": actor_tp}}
    if rollout_tp is not None:
        config["rollout"] = {"tensor_parallel_size": rollout_tp}
    return config


COLLOCATED = {"actor,rollout,reward": "all"}


def with_sizes(config: dict[str, Any], actor_tp: int | None = None, rollout_tp: int | None = None) -> dict[str, Any]:
    changed = {**config}
    if actor_tp is not None:
        changed["actor"] = {"model": {"tensor_model_parallel_size": actor_tp}}
    if rollout_tp is not None:
        changed["rollout"] = {"tensor_parallel_size": rollout_tp}
    return changed


def test_actor_tp_that_does_not_split_the_gpus_names_the_key_and_a_checked_fix():
    config = job(COLLOCATED, actor_tp=3, rollout_tp=1)
    with pytest.raises(PlacementConfigError) as info:
        ModelParallelComponentPlacement(config)
    message = str(info.value)
    assert "actor.model.tensor_model_parallel_size=3" in message, message
    assert "with actor.model.tensor_model_parallel_size=4 it places" in message, message
    assert "num_hardware_per_process" not in message and "0-7" not in message, message
    assert ModelParallelComponentPlacement(with_sizes(config, actor_tp=4)).is_collocated  # the fix places


def test_rollout_engine_wider_than_a_node_names_the_key_not_a_segment():
    config = job(COLLOCATED, nodes=2, rollout_tp=16)
    with pytest.raises(InfeasiblePlacementError) as info:
        ModelParallelComponentPlacement(config)
    message = str(info.value)
    assert "rollout.tensor_parallel_size=16" in message and "with rollout.tensor_parallel_size=8 it places" in message, message
    assert "segment" not in message and "0-15" not in message, message
    (statement,) = info.value.statements
    assert (statement.component, statement.keys) == ("rollout", ("rollout.tensor_parallel_size",))
    assert ModelParallelComponentPlacement(with_sizes(config, rollout_tp=8)).is_collocated


def test_a_size_beyond_the_components_gpus_gets_a_fix_too():
    config = job({"actor": "0-7", "rollout": "8-13", "reward": "14-15"}, nodes=2, rollout_tp=16)
    with pytest.raises(PlacementConfigError) as info:
        ModelParallelComponentPlacement(config)
    assert "(rollout.tensor_parallel_size) must be less than or equal to its 6 GPUs" in str(info.value)
    assert "with rollout.tensor_parallel_size=6 it places" in str(info.value)
    assert ModelParallelComponentPlacement(with_sizes(config, rollout_tp=6)).is_disaggregated


@pytest.mark.filterwarnings("ignore:the rollout engines")  # GPUs 1-3 of the actor hold no engine, as stated
def test_multi_agent_collocated_sizes_are_named():
    config = job({"actor,reward": "0-3", "rollout": "0"}, actor_tp=2)
    with pytest.raises(PlacementConfigError) as info:
        MultiAgentModelParallelComponentPlacement(config)
    assert "actor.model.tensor_model_parallel_size=2 and rollout.tensor_parallel_size=1" in str(info.value)
    assert "with actor.model.tensor_model_parallel_size=1 it places" in str(info.value)
    MultiAgentModelParallelComponentPlacement(with_sizes(config, actor_tp=1))  # the fix places


def test_when_no_size_places_no_fix_is_offered_and_the_tries_are_bounded():
    """Sizes no change of which places are not the cause: the original error stands (None here),
    and at most MAX_TRIES solves are spent finding that out."""
    asked: list[dict[str, int]] = []
    stated = [divisor_size("a", 3, "actor", 4096), divisor_size("b", 2, "rollout", 4096)]
    assert nearest_fit(stated, lambda sizes: asked.append(sizes) is not None) is None
    assert len(asked) == MAX_TRIES


def test_tries_go_nearest_first_and_only_over_divisors():
    stated = [divisor_size("a", 3, "actor", 8), divisor_size("b", 2, "rollout", 8)]
    order = list(tries(stated))
    assert order[:2] == [{"a": 4, "b": 2}, {"a": 2, "b": 2}]  # 3 -> 4 is nearer by ratio than 3 -> 2
    assert {"a": 3, "b": 2} not in order  # the stated sizes themselves are no fix
    assert all(sizes["a"] in (1, 2, 3, 4, 8) and sizes["b"] in (1, 2, 4, 8) for sizes in order)
    assert all(len([k for k in sizes if sizes[k] != {"a": 3, "b": 2}[k]]) == 1 for sizes in order[:7])


def test_counts_of_one_read_as_one():
    """Issue 31 item 6: no "1 GPUs", "1 components" or "valid ranks are 0-0" in a message."""
    from solver_placement._cluster.ranks import valid_ranks
    from solver_placement._errors import counted

    assert (counted(1, "GPU"), counted(2, "GPU"), counted(1, "process", "processes"), counted(3, "process", "processes")) == (
        "1 GPU",
        "2 GPUs",
        "1 process",
        "3 processes",
    )
    assert (valid_ranks(0), valid_ranks(1), valid_ranks(8)) == ("there are none", "the only valid rank is 0", "valid ranks are 0-7")
    with pytest.raises(PlacementConfigError) as info:
        ModelParallelComponentPlacement(job({"actor": "0-6", "rollout": "7", "reward": "0-6"}, rollout_tp=2))
    assert "its 1 GPU " in str(info.value) and "1 GPUs" not in str(info.value), str(info.value)


def test_a_misspelt_node_group_gets_the_close_name():
    """Issue 31 item 6: ``node_group: franak`` suggests ``franka``; a name close to none lists the groups."""
    from solver_placement._job import load_job
    from solver_placement._specification.placement_spec import PlacementSpec

    def spec(group: str) -> PlacementSpec:
        groups = [{"label": "gpu", "node_ranks": "0"}, {"label": "franka", "node_ranks": "1"}]
        cluster = {"num_nodes": 2, "num_gpus_per_node": 8, "node_groups": groups}
        return PlacementSpec.from_component_placement(load_job({"cluster": {**cluster, "component_placement": {"env": {"node_group": group, "placement": "0"}}}}))

    with pytest.raises(PlacementConfigError, match="node group 'franak' not found; did you mean 'franka'\\?"):
        spec("franak")
    with pytest.raises(PlacementConfigError, match="node group 'zzz' not found; known groups: .*franka"):
        spec("zzz")


def eval_job(placement: dict[str, Any], nodes: int, **sections: Any) -> dict[str, Any]:
    cluster = {"num_nodes": nodes, "num_gpus_per_node": 8, "component_placement": placement}
    return {"cluster": cluster, "runner": {"task_type": "reasoning_eval"}, **sections}


def test_eval_rollout_engine_wider_than_a_node_names_the_keys_not_a_segment():
    """Issue 31 item 4 (eval): tp 16 on 2 x 8 GPUs said "segment "0-15:0-0" (process 0) must have
    all its GPUs on one node"; now the key, its value, the cluster's keys and a checked fix."""
    config = eval_job({"rollout": "0-15", "reward": "0-15"}, nodes=2, rollout={"tensor_parallel_size": 16})
    with pytest.raises(InfeasiblePlacementError) as info:
        ModelParallelEvalComponentPlacement(config)
    message = str(info.value)
    assert "rollout.tensor_parallel_size=16" in message and "with rollout.tensor_parallel_size=8 it places" in message, message
    assert "cluster.num_nodes=2, cluster.num_gpus_per_node=8" in message, message
    assert "each rollout process must have all its GPUs on one node" in message, message  # the rule, without the segment
    assert "All hardware ranks for a process must be on the same node" in message, message  # RLinf's phrase, which code matches
    assert "segment" not in message and "0-15" not in message, message
    (statement,) = info.value.statements
    assert (statement.component, statement.keys) == ("rollout", ("rollout.tensor_parallel_size",))
    fixed = ModelParallelEvalComponentPlacement({**config, "rollout": {"tensor_parallel_size": 8}})
    assert fixed.get_world_size("rollout") == 2


@pytest.mark.parametrize(("gpus", "tp", "fix"), [("0-15", 3, 4), ("0-15", 32, 8), ("0-11", 8, 4)])
def test_eval_sizes_refused_by_rlinfs_checks_get_a_checked_fix(gpus: str, tp: int, fix: int):
    """RLinf's own wording stays (code matches it) and the nearest size that places is appended."""
    config = eval_job({"rollout": gpus, "reward": "0-15"}, nodes=2, rollout={"tensor_parallel_size": tp})
    with pytest.raises(PlacementConfigError) as info:
        ModelParallelEvalComponentPlacement(config)
    assert "rollout.tensor_parallel_size" in str(info.value) and f"with rollout.tensor_parallel_size={fix} it places" in str(info.value)
    ModelParallelEvalComponentPlacement({**config, "rollout": {"tensor_parallel_size": fix}})


def test_a_cluster_handed_in_is_described_as_it_is_not_by_the_configs_keys():
    """The config says 2 x 8 GPUs but the placement runs on another cluster: naming
    cluster.num_gpus_per_node=8 would describe a cluster the job is not placed on."""
    config = eval_job({"rollout": "0-15", "reward": "0-15"}, nodes=2, rollout={"tensor_parallel_size": 16})
    with pytest.raises(InfeasiblePlacementError) as info:
        ModelParallelEvalComponentPlacement(config, Cluster(num_nodes=4, num_gpus_per_node=4))
    assert "cluster.num_gpus_per_node" not in str(info.value) and "4 GPUs each" in str(info.value), str(info.value)
    assert "with rollout.tensor_parallel_size=4 it places" in str(info.value)


def test_multi_agent_eval_engine_wider_than_a_node_names_its_sections_key():
    """An extra engine's size comes from its own section (``rollout_judge.tensor_parallel_size``);
    a judge of 16 GPUs on 8-GPU nodes failed later, at get_placement, naming a segment."""
    placement = {"rollout": "0-15", "reward": "0-15", "rollout_judge": "0-15"}
    config = eval_job(placement, nodes=2, rollout={"tensor_parallel_size": 2}, rollout_judge={"tensor_parallel_size": 16})
    cp = MultiAgentModelParallelEvalComponentPlacement(config)
    with pytest.raises(InfeasiblePlacementError) as info:
        cp.get_strategy("rollout_judge", PackedPlacementStrategy)
    message = str(info.value)
    assert "rollout_judge.tensor_parallel_size=16" in message and "with rollout_judge.tensor_parallel_size=8 it places" in message, message
    assert "segment" not in message, message
    fixed = MultiAgentModelParallelEvalComponentPlacement({**config, "rollout_judge": {"tensor_parallel_size": 8}})
    assert len(fixed.get_strategy("rollout_judge", PackedPlacementStrategy).get_placement(fixed.cluster)) == 2


@pytest.mark.parametrize(
    ("cls", "placement", "sections"),
    [
        (ModelParallelComponentPlacement, {"actor,rollout,reward": "0-15"}, {"rollout": {"tensor_parallel_size": 16}}),
        (ModelParallelComponentPlacement, {"actor": "0-7", "rollout": "8-15", "reward": "8-15"}, {"rollout": {"tensor_parallel_size": 4, "pipeline_parallel_size": 4}}),
        (ModelParallelEvalComponentPlacement, {"rollout,reward": "0-15"}, {"rollout": {"tensor_parallel_size": 16}}),
        (MultiAgentModelParallelComponentPlacement, {"actor,reward,rollout": "0-15", "rollout_judge": "0-15"}, {"rollout": {"tensor_parallel_size": 16}}),
        (MultiAgentModelParallelEvalComponentPlacement, {"rollout,reward": "0-15", "rollout_judge": "0-15"}, {"rollout": {"tensor_parallel_size": 16}}),
    ],
)
def test_no_rlinf_placement_class_names_a_segment_for_a_size_that_does_not_fit(cls: type, placement: dict[str, Any], sections: dict[str, Any]):
    """Every model-parallel class, every size key it reads: a size wider than a node is said in the key."""
    config = {"cluster": {"num_nodes": 2, "num_gpus_per_node": 8, "component_placement": placement}, **sections}
    with pytest.raises(PlacementError) as info:
        cls(config)
    message = str(info.value)
    assert "segment" not in message and "it places (checked by solving" in message, message
