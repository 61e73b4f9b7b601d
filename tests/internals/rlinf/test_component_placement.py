"""ComponentPlacement, HybridComponentPlacement and ModelParallelComponentPlacement.

The seed examples (rlinf_placement_api_en.txt, rlinf_placement_concepts_zh.rst,
rlinf_collocated_mode.rst) run through the RLinf-compatible API; model-parallel layouts follow
rlinf_behaviour.md section 7 and the issue. Expected values are derived by hand from the quoted
sentences. A layout is one ``(cluster_node_rank, local_hardware_ranks)`` pair per process.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import MODELS
from omegaconf import OmegaConf

from solver_placement import (
    Cluster,
    ComponentPlacement,
    FlexiblePlacementStrategy,
    HybridComponentPlacement,
    ModelParallelComponentPlacement,
    NodePlacementStrategy,
    PackedPlacementStrategy,
    PlacementConfigError,
    PlacementError,
    PlacementMode,
    RolloutSyncMode,
    verify,
)


def checked(placement: ComponentPlacement) -> ComponentPlacement:
    """Verify every component of a solved placement independently and return it."""
    verify(placement.spec, placement.solution.placements_by_component())
    return placement


def from_yaml(name: str, cls: type[ComponentPlacement] = ComponentPlacement) -> ComponentPlacement:
    """RLinf's usage: a DictConfig and a cluster built from its `cluster:` section."""
    cfg = OmegaConf.load(MODELS / name)
    return checked(cls(cfg, Cluster.from_config(cfg.cluster)))


def layout(placement: ComponentPlacement, name: str) -> list[tuple[int, list[int]]]:
    return [(p.cluster_node_rank, p.local_hardware_ranks) for p in placement.get_placements(name)]


def gpus(node: int, *ids: int) -> tuple[int, list[int]]:
    return (node, list(ids))


def one_per_gpu(nodes: int) -> list[tuple[int, list[int]]]:
    return [gpus(n, g) for n in range(nodes) for g in range(8)]


# ------------------------------------------------------------------------------ ComponentPlacement: seeds
def test_short_form_shares_one_rule():
    # api_en: "actor,inference: 0-7 ... means both the actor and inference groups' process 0-7
    # evenly occupy accelerator 0 to 7."  zh: the two components share one placement rule.
    cp = from_yaml("api_short_form.yaml")
    assert cp.components == ["actor", "inference"]
    assert cp.placement_mode is None
    for name in ("actor", "inference"):
        assert layout(cp, name) == one_per_gpu(1)
        assert cp.get_world_size(name) == 8
        assert cp.get_hardware_ranks(name) == list(range(8))
    strategy = cp.get_strategy("actor")
    assert isinstance(strategy, FlexiblePlacementStrategy)
    assert cp.get_strategy("inference") is strategy
    assert [p.local_hardware_ranks for p in strategy.get_placement(cp.cluster)] == [[g] for g in range(8)]


def test_node_group_form_with_robots_and_node_label():
    # api_en "A more complex example" (fixed as in models/api_node_groups.yaml: 4 nodes, 0-7,
    # agent 0-199/200-511): a800 = node 0, 4090 = node 1, robot group = nodes 2-3 (2 robots each).
    cp = from_yaml("api_node_groups.yaml")
    assert cp.components == ["actor", "rollout", "env", "agent"]
    # "The actor group occupies accelerators 0-8 [0-7] on node group 'a800'."
    assert layout(cp, "actor") == one_per_gpu(1)
    assert {p.node_group_label for p in cp.get_placements("actor")} == {"a800"}
    # "The rollout group occupies accelerators 0-8 [0-7] on node group '4090'."
    assert layout(cp, "rollout") == [gpus(1, g) for g in range(8)]
    # "The env group occupies robot hardware 0-3 ... with each robot hardware shared by 2 processes."
    assert layout(cp, "env") == [(2, [0]), (2, [0]), (2, [1]), (2, [1]), (3, [0]), (3, [0]), (3, [1]), (3, [1])]
    assert cp.get_hardware_ranks("env") == [0, 1, 2, 3]
    assert isinstance(cp.get_strategy("env"), FlexiblePlacementStrategy)
    # "The agent group occupies nodes 0-1 for process 0-200 [0-199], and nodes 2-3 for process
    # 201-511 [200-511]": 100 processes on each of nodes 0,1 and 156 on each of nodes 2,3.
    agent = cp.get_placements("agent")
    assert cp.get_world_size("agent") == 512
    assert [p.cluster_node_rank for p in agent] == [0] * 100 + [1] * 100 + [2] * 156 + [3] * 156
    assert {p.hardware_type for p in agent} == {"node"}
    strategy = cp.get_strategy("agent")
    assert isinstance(strategy, NodePlacementStrategy)
    assert strategy.node_ranks == [0] * 100 + [1] * 100 + [2] * 156 + [3] * 156


def test_mixed_segments():
    # api_en: "0-1:0-3,3-5,7-10:7-14, which means process 0-3 will be evenly assigned to resource
    # ranks 0-1, process 4-6 will be assigned to resource ranks 3-5 ... and process 7-14 will be
    # evenly assigned to resource ranks 7-10."  (2 nodes x 8 GPUs: ranks 8-10 are node 1 GPUs 0-2)
    cp = from_yaml("api_mixed_segments.yaml")
    assert layout(cp, "actor") == [
        gpus(0, 0), gpus(0, 0), gpus(0, 1), gpus(0, 1),
        gpus(0, 3), gpus(0, 4), gpus(0, 5),
        gpus(0, 7), gpus(0, 7), gpus(1, 0), gpus(1, 0), gpus(1, 1), gpus(1, 1), gpus(1, 2), gpus(1, 2),
    ]
    assert cp.get_world_size("actor") == 15
    assert cp.get_hardware_ranks("actor") == [0, 1, 3, 4, 5, 7, 8, 9, 10]


@pytest.mark.parametrize(
    "model, expected",
    [
        # api_en: "0-4 means process 0-4 will be assigned to resource ranks 0-4 respectively."
        ("api_implicit_0-4.yaml", [gpus(0, g) for g in range(5)]),
        # api_en: "0-3:0-7 means process 0-7 will be evenly assigned to resource ranks 0-3, with 2
        # processes sharing 1 resource."
        ("api_sharing_0-3_0-7.yaml", [gpus(0, g // 2) for g in range(8)]),
        # zh: "0-3,4-7 则第一段隐式对应进程 0-3，第二段对应进程 4-7"
        ("zh_implicit_segments.yaml", one_per_gpu(1)),
        # zh: "0-3,5-7 表示 0,1,2,3,5,6,7"
        ("zh_rank_list_0-3_5-7.yaml", [gpus(0, g) for g in (0, 1, 2, 3, 5, 6, 7)]),
    ],
)
def test_rank_grammar_examples(model, expected):
    assert layout(from_yaml(model), "actor") == expected


def test_zh_test_worker_on_a800():
    # zh conf.yaml: "placement: 0-3  # 在节点组 a800（仅包含节点 0）上的 GPU 0-3 各启动一个进程"
    cp = from_yaml("zh_test_worker_a800.yaml")
    assert cp.components == ["test_worker"]
    assert layout(cp, "test_worker") == [gpus(0, g) for g in range(4)]
    strategy = cp.get_strategy("test_worker")
    assert isinstance(strategy, FlexiblePlacementStrategy)
    assert strategy.node_groups == ("a800",)


@pytest.mark.parametrize("model", ["api_multi_group_a800_4090.yaml", "api_multi_group_yaml_list.yaml"])
def test_multi_group_ranks_span_groups_in_order(model):
    # api_en: "hardware ranks 0-7 belong to 'a800' and ranks 8-15 belong to '4090'" (comma string
    # or list)
    cp = from_yaml(model)
    assert layout(cp, "actor") == one_per_gpu(2)
    assert [p.node_group_label for p in cp.get_placements("actor")] == ["a800"] * 8 + ["4090"] * 8


def test_collocated_doc_example_base_class():
    # collocated_mode.rst: "`actor` uses all the 16 GPUs and `rollout` also uses all the 16 GPUs"
    for model in ("collocated_all_2x8.yaml", "collocated_0-15_2x8.yaml"):
        cp = from_yaml(model)
        assert layout(cp, "actor") == layout(cp, "rollout") == one_per_gpu(2)


def test_cpu_only_cluster_gets_node_placement():
    # api_en: "If the nodes do not have accelerators, resource ranks are the node ranks."
    # zh: 节点组没有专门的硬件资源 -> NodePlacementStrategy
    cp = from_yaml("api_cpu_only_nodes.yaml")
    assert [p.cluster_node_rank for p in cp.get_placements("env")] == [0, 0, 1, 1]
    assert isinstance(cp.get_strategy("env"), NodePlacementStrategy)


def test_plain_dict_and_cluster_from_config():
    # issue: "config may be a DictConfig or a plain dict"; the cluster may be omitted.
    config = {"cluster": {"num_nodes": 1, "num_gpus_per_node": 4, "component_placement": {"actor": "0-3:0-1"}}}
    cp = checked(ComponentPlacement(config))
    assert layout(cp, "actor") == [gpus(0, 0, 1), gpus(0, 2, 3)]
    assert cp.get_world_size("actor") == 2


def test_isolate_accelerator_false():
    cp = from_yaml("api_implicit_0-4.yaml")
    records = cp.get_placements("actor", isolate_accelerator=False)
    assert {len(p.visible_accelerators) for p in records} == {8}
    assert [p.local_accelerator_rank for p in records] == [0, 1, 2, 3, 4]


def test_hybrid_mode():
    # api_en: "HybridComponentPlacement is a direct inheritance of ComponentPlacement"
    cp = from_yaml("modelparallel_hybrid_embodied_1x8.yaml", HybridComponentPlacement)
    assert cp.placement_mode is PlacementMode.HYBRID
    assert layout(cp, "actor") == one_per_gpu(1)
    assert layout(cp, "env") == [gpus(0, g // 2) for g in range(8)]
    assert layout(cp, "rollout") == [gpus(0, g) for g in range(4, 8)]


def test_unknown_component():
    cp = from_yaml("api_short_form.yaml")
    for call in (cp.get_strategy, cp.get_world_size, cp.get_hardware_ranks, cp.get_placements):
        with pytest.raises(PlacementConfigError, match="'critic' does not exist in ComponentPlacement"):
            call("critic")


def test_missing_component_placement():
    with pytest.raises(PlacementConfigError, match="cluster.component_placement is missing"):
        ComponentPlacement({"cluster": {"num_nodes": 1}})


# ------------------------------------------------------------------------------ grammar rules (seeds)
def cp_error(placement: dict[str, Any], cluster: dict[str, Any] | None = None) -> str:
    section = {"num_nodes": 2, "num_gpus_per_node": 8, **(cluster or {}), "component_placement": placement}
    with pytest.raises(PlacementError) as info:
        ComponentPlacement({"cluster": section})
    return str(info.value)


ROBOT_NODE = {
    "node_groups": [
        {"label": "gpu", "node_ranks": 0},
        {"label": "arm", "node_ranks": 0, "hardware": {"type": "arm", "configs": [{"node_rank": 0}]}},
    ]
}

GRAMMAR_ERRORS = [
    # api_en: "resource_ranks:process_ranks" -- one colon per segment
    ({"actor": "0-3:0-1:2"}, None, ["actor", "0-3:0-1:2", "more than one"]),
    # api_en: "The format of resource_ranks is an integer range a-b"
    ({"actor": "0-x"}, None, ["actor", "0-x", "not a rank range"]),
    # zh: 资源数量与进程数量必须满足“互为整数倍”的关系
    ({"actor": "0-2:0-1"}, None, ["actor", "0-2:0-1", "multiple"]),
    # api_en: "process ranks ... assumed to be continuous from 0 to N-1"
    ({"actor": "0-1:0-1,2-3:3-4"}, None, ["actor", "2-3:3-4", "continuous"]),
    ({"actor": "0-1:1-2"}, None, ["actor", "0-1:1-2", "continuous from 0"]),
    # zh: process_ranks 语法与 resource_ranks 相同，但不能写成 all
    ({"actor": "0-3:all"}, None, ["actor", "0-3:all", "cannot be \"all\""]),
    ({"actor": "4-7,0-3"}, None, ["actor", "0-3", "ascending"]),
    ({"actor": "0-16"}, None, ["actor", "0-16", "out of range"]),
    ({"actor": {"node_group": "h100", "placement": "0-3"}}, None, ["actor", "h100", "not found"]),
    # zh: 单个进程不能跨节点运行; api_en: "on the same node"
    ({"actor": "6-9:0"}, None, ["actor", "6-9:0", "one node"]),
    ({"agent": {"node_group": "node", "placement": "0-1:0"}}, None, ["agent", "0-1:0", "one node"]),
    # api_en: "hardware ranks within a single process must all be of the same hardware type"
    ({"env": {"node_group": "gpu,arm", "placement": "7-8:0"}}, ROBOT_NODE, ["env", "7-8:0", "hardware type"]),
    # rlinf_behaviour.md 3.1: a component defined twice
    ({"actor": "0-3", "rollout,actor": "4-7"}, None, ["actor", "two keys"]),
]


@pytest.mark.parametrize("placement, cluster, fragments", GRAMMAR_ERRORS, ids=lambda v: str(v)[:40])
def test_grammar_rules(placement, cluster, fragments):
    message = cp_error(placement, cluster)
    for fragment in fragments:
        assert fragment in message, message


# ------------------------------------------------------------------------------ ModelParallel: collocated
def model_parallel(placement: dict[str, Any], nodes: int = 1, cluster: dict[str, Any] | None = None, **sections: Any) -> ModelParallelComponentPlacement:
    section = {"num_nodes": nodes, "num_gpus_per_node": 8, **(cluster or {}), "component_placement": placement}
    return checked(ModelParallelComponentPlacement({"cluster": section, **sections}))


def sizes(actor_tp: int = 1, rollout_tp: int = 1, rollout_pp: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "actor": {"model": {"tensor_model_parallel_size": actor_tp}},
        "rollout": {"tensor_parallel_size": rollout_tp, "pipeline_parallel_size": rollout_pp},
        **extra,
    }


def assert_weight_sync_pairs_share_gpus(cp: ModelParallelComponentPlacement, actor_tp: int) -> None:
    """Every actor rank is listed once, on the very GPU of the rollout rank it feeds, and one
    rollout engine is fed by a single actor TP group."""
    actor = cp.get_placements("actor")
    rollout = cp.get_placements("rollout")
    sync = cp.weight_sync_map()
    assert sorted(rank for ranks in sync.values() for rank in ranks) == list(range(len(actor)))
    for rollout_rank, actor_ranks in sync.items():
        engine = rollout[rollout_rank]
        for gpu, actor_rank in zip(engine.local_hardware_ranks, actor_ranks):
            assert actor[actor_rank].cluster_node_rank == engine.cluster_node_rank
            assert actor[actor_rank].local_hardware_ranks == [gpu]
        assert len({rank // actor_tp for rank in actor_ranks}) == 1


def test_collocated_tp4_tp2():
    # issue: "Collocated TP4/TP2 on 8 GPUs gives rollout GPUs [0,2],[1,3],[4,6],[5,7]"
    cp = from_yaml("modelparallel_collocated_tp4_tp2_1x8.yaml", ModelParallelComponentPlacement)
    assert cp.placement_mode is PlacementMode.COLLOCATED
    assert cp.rollout_sync_mode is RolloutSyncMode.COLLOCATED
    assert (cp.is_collocated, cp.is_disaggregated, cp.is_auto, cp.is_pipeline) == (True, False, False, False)
    assert not cp.has_dedicated_inference
    assert layout(cp, "rollout") == [gpus(0, 0, 2), gpus(0, 1, 3), gpus(0, 4, 6), gpus(0, 5, 7)]
    assert layout(cp, "actor") == layout(cp, "reward") == one_per_gpu(1)
    # actor rank r sits on GPU r, so engine [0,2] is fed by actor ranks 0 and 2, and so on
    assert cp.weight_sync_map() == {0: [0, 2], 1: [1, 3], 2: [4, 6], 3: [5, 7]}
    assert_weight_sync_pairs_share_gpus(cp, actor_tp=4)
    assert (cp.actor_tp_size, cp.actor_pp_size, cp.actor_dp_size, cp.actor_world_size) == (4, 1, 2, 8)
    assert (cp.rollout_tp_size, cp.rollout_dp_size, cp.rollout_world_size, cp.reward_world_size) == (2, 4, 8, 8)
    assert cp.get_world_size("rollout") == 4


def test_collocated_tp8_tp2():
    # issue: "TP8/TP2 gives [0,4],[1,5],[2,6],[3,7]"
    cp = from_yaml("modelparallel_collocated_tp8_tp2_1x8.yaml", ModelParallelComponentPlacement)
    assert layout(cp, "rollout") == [gpus(0, 0, 4), gpus(0, 1, 5), gpus(0, 2, 6), gpus(0, 3, 7)]
    assert cp.weight_sync_map() == {0: [0, 4], 1: [1, 5], 2: [2, 6], 3: [3, 7]}
    assert_weight_sync_pairs_share_gpus(cp, actor_tp=8)


def test_collocated_strategy_is_the_strided_packed():
    # rlinf_behaviour.md 7.6: rollout Packed(r0, rN, n=rollout_tp, stride=actor_tp // rollout_tp)
    cp = from_yaml("modelparallel_collocated_tp4_tp2_1x8.yaml", ModelParallelComponentPlacement)
    strategy = cp.get_strategy("rollout")
    assert isinstance(strategy, PackedPlacementStrategy)
    expected = (0, 7, 2, 2)
    assert (strategy.start_hardware_rank, strategy.end_hardware_rank, strategy.num_hardware_per_process, strategy.stride) == expected
    assert [p.local_hardware_ranks for p in strategy.get_placement(cp.cluster)] == [[0, 2], [1, 3], [4, 6], [5, 7]]
    assert isinstance(cp.get_strategy("actor"), PackedPlacementStrategy)


def test_collocated_tp4_tp2_on_two_nodes():
    # the strided pattern repeats in every actor TP block of 4 GPUs: node 1 mirrors node 0
    cp = model_parallel({"actor,rollout,reward": "all"}, nodes=2, **sizes(4, 2))
    expected = [gpus(n, *pair) for n in (0, 1) for pair in ((0, 2), (1, 3), (4, 6), (5, 7))]
    assert layout(cp, "rollout") == expected
    assert_weight_sync_pairs_share_gpus(cp, actor_tp=4)


def test_collocated_equal_tp_is_contiguous():
    # actor_tp == rollout_tp -> stride 1: each engine is one actor TP group
    cp = model_parallel({"actor,rollout,reward": "0-7"}, **sizes(2, 2))
    assert layout(cp, "rollout") == [gpus(0, 0, 1), gpus(0, 2, 3), gpus(0, 4, 5), gpus(0, 6, 7)]
    assert_weight_sync_pairs_share_gpus(cp, actor_tp=2)


def test_collocated_doc_example():
    # collocated_mode.rst with ModelParallelComponentPlacement (reward added): TP 1 everywhere,
    # so one actor and one rollout process per GPU on all 16 GPUs.
    cp = from_yaml("modelparallel_collocated_doc_2x8.yaml", ModelParallelComponentPlacement)
    assert cp.is_collocated
    assert layout(cp, "actor") == layout(cp, "rollout") == layout(cp, "reward") == one_per_gpu(2)
    assert cp.weight_sync_map() == {rank: [rank] for rank in range(16)}


def test_extra_component_keeps_its_placement():
    # rlinf_behaviour.md 7.1: "extra components such as `agent` keep theirs"
    cp = model_parallel(
        {"actor,rollout,reward": "all", "agent": {"node_group": "node", "placement": "0:0-1"}}, **sizes(4, 2)
    )
    assert cp.components == ["actor", "rollout", "reward", "agent"]
    assert [p.cluster_node_rank for p in cp.get_placements("agent")] == [0, 0]
    assert isinstance(cp.get_strategy("agent"), NodePlacementStrategy)


# ------------------------------------------------------------------------------ ModelParallel: disaggregated / auto
def test_disaggregated():
    cp = from_yaml("modelparallel_disaggregated_2x8.yaml", ModelParallelComponentPlacement)
    assert cp.placement_mode is PlacementMode.DISAGGREGATED
    assert cp.rollout_sync_mode is RolloutSyncMode.DISAGGREGATED
    assert cp.is_pipeline and cp.has_dedicated_inference
    assert layout(cp, "actor") == one_per_gpu(1)
    # rollout 8-13, TP2: 6 GPUs / (2 * 1) = 3 engines of 2 GPUs on node 1
    assert layout(cp, "rollout") == [gpus(1, 0, 1), gpus(1, 2, 3), gpus(1, 4, 5)]
    assert layout(cp, "inference") == layout(cp, "reward") == [gpus(1, 6), gpus(1, 7)]
    assert cp.get_world_size("rollout") == 3
    assert (cp.rollout_world_size, cp.rollout_dp_size, cp.inference_world_size, cp.inference_dp_size) == (6, 3, 2, 2)
    assert cp.spec.components["actor"].constraints.exclusive_with == ("rollout", "inference")


def test_disaggregated_honours_node_groups():
    # issue: "node_group in the config is honoured (RLinf ignores it here and places on the wrong node)"
    cp = from_yaml("modelparallel_disaggregated_node_groups.yaml", ModelParallelComponentPlacement)
    assert cp.is_disaggregated
    assert layout(cp, "actor") == one_per_gpu(1)
    assert layout(cp, "rollout") == [gpus(1, 0, 1), gpus(1, 2, 3), gpus(1, 4, 5)]
    assert layout(cp, "inference") == [gpus(1, 6), gpus(1, 7)]
    assert {p.node_group_label for p in cp.get_placements("rollout")} == {"gen"}
    assert cp.get_strategy("rollout").node_groups == ("gen",)


def test_disaggregated_with_critic_and_actor_inference():
    # components: critic, critic_inference and actor_inference (rlinf_behaviour.md 7.2)
    placement = {
        "actor": "0-3", "critic": "4-5", "reward": "6-7",
        "rollout": "8-11", "actor_inference": "12-13", "critic_inference": "14-15",
    }
    extra = {"critic": {"model": {"tensor_model_parallel_size": 2}}, "algorithm": {"recompute_logprobs": True}}
    cp = model_parallel(placement, nodes=2, **sizes(2, 2, actor_inference={"model": {"tensor_model_parallel_size": 1}}, **extra))
    assert cp.is_disaggregated and cp.has_dedicated_inference and cp.has_dedicated_critic_inference
    assert isinstance(cp.get_strategy("actor_inference"), PackedPlacementStrategy)
    assert cp.get_world_size("actor_inference") == 2
    assert layout(cp, "actor_inference") == [gpus(1, 4), gpus(1, 5)]
    assert (cp.critic_tp_size, cp.critic_dp_size, cp.critic_world_size) == (2, 1, 2)
    # critic_inference has no model section: its TP falls back to the critic's
    assert (cp.critic_inference_tp_size, cp.critic_inference_world_size, cp.critic_inference_dp_size) == (2, 2, 1)
    assert (cp.inference_tp_size, cp.inference_pp_size) == (1, 1)


def test_rollout_pipeline_parallel_multiplies_gpus_per_engine():
    # rlinf_behaviour.md 7.6: "pp multiplies the per-process GPU count"
    placement = {"actor": "0-7", "rollout": "8-15", "reward": "8-15"}
    cp = model_parallel(placement, nodes=2, **sizes(1, 2, rollout_pp=2))
    assert layout(cp, "rollout") == [gpus(1, 0, 1, 2, 3), gpus(1, 4, 5, 6, 7)]
    assert cp.rollout_dp_size == 2


def test_auto_with_pre_process_policy():
    cp = from_yaml("modelparallel_auto_2x8.yaml", ModelParallelComponentPlacement)
    assert cp.placement_mode is PlacementMode.AUTO
    assert cp.is_auto and cp.is_pipeline and cp.has_dedicated_inference
    # "In AUTO mode, actor will be placed on all GPUs": 16 processes
    assert layout(cp, "actor") == one_per_gpu(2)
    assert cp.get_world_size("actor") == 16 and cp.actor_world_size == 4
    # pre-process: rollout GPUs 0-11 in TP2 engines
    assert layout(cp, "rollout") == [
        gpus(0, 0, 1), gpus(0, 2, 3), gpus(0, 4, 5), gpus(0, 6, 7), gpus(1, 0, 1), gpus(1, 2, 3),
    ]
    assert (cp.rollout_world_size, cp.rollout_dp_size) == (12, 6)
    assert layout(cp, "inference") == [gpus(1, g) for g in range(4, 8)]


def test_auto_without_pre_process_policy():
    placement = {"actor": "0-3", "rollout": "4-7", "reward": "4-7"}
    cp = model_parallel(placement, cluster={"auto_scheduler": True}, **sizes(1, 2))
    assert cp.is_auto and not cp.has_dedicated_inference
    assert layout(cp, "actor") == one_per_gpu(1)
    assert layout(cp, "rollout") == [gpus(0, 4, 5), gpus(0, 6, 7)]


def test_auto_needs_no_critic():
    # rlinf_behaviour.md 7.4: AUTO "if cluster.auto_scheduler truthy and no critic"
    placement = {"actor": "0-1", "critic": "2-3", "rollout": "4-7", "reward": "4-7"}
    cp = model_parallel(placement, cluster={"auto_scheduler": True}, **sizes())
    assert cp.is_disaggregated


def test_model_parallel_from_dictconfig_without_cluster():
    # collocated_mode.rst: `ModelParallelComponentPlacement(cfg)` -- no cluster argument
    cfg = OmegaConf.load(MODELS / "modelparallel_collocated_tp8_tp2_1x8.yaml")
    cp = checked(ModelParallelComponentPlacement(cfg))
    assert layout(cp, "rollout") == [gpus(0, 0, 4), gpus(0, 1, 5), gpus(0, 2, 6), gpus(0, 3, 7)]


# ------------------------------------------------------------------------------ ModelParallel: validation
def mp_error(placement: dict[str, Any], nodes: int = 1, cluster: dict[str, Any] | None = None, **sections: Any) -> str:
    section = {"num_nodes": nodes, "num_gpus_per_node": 8, **(cluster or {}), "component_placement": placement}
    with pytest.raises(PlacementError) as info:
        ModelParallelComponentPlacement({"cluster": section, **sections})
    return str(info.value)


RECOMPUTE = {"algorithm": {"recompute_logprobs": True}}
MP_ERRORS = [
    # api_en: "The components must be actor, rollout, and optionally inference"; RLinf requires reward
    ({"actor,rollout": "all"}, 1, None, sizes(), ["'reward'", "needs actor, rollout and reward"]),
    ({"actor,reward": "all"}, 1, None, sizes(), ["'rollout'"]),
    # api_en: "... whose GPUs must be continuous"
    ({"actor,rollout": "0-2,4-7", "reward": "0-7"}, 1, None, sizes(), ["actor", "0-2,4-7", "continuous"]),
    # issue: "gaps inside the reward GPUs (RLinf fills them)"
    ({"actor,rollout": "0-7", "reward": "0-2,5-7"}, 1, None, sizes(), ["reward", "0-2,5-7", "continuous"]),
    # api_en: "In the collocated mode, only actor and rollout exist."
    ({"actor,rollout": "0-5", "reward": "0-5", "inference": "6-7"}, 1, None, sizes(), ["inference", "collocated"]),
    ({"actor,rollout,reward": "all"}, 1, None, sizes(4, 3), ["rollout", "actor TP size 4", "divisible by", "rollout TP size 3"]),
    # issue: "rollout GPUs not divisible by tp*pp (RLinf makes one process holding all of them)"
    ({"actor": "0-1", "rollout": "2-7", "reward": "0-1"}, 1, None, sizes(1, 4), ["rollout", "6 GPUs (2-7)", "not divisible", "= 4"]),
    # issue: "tp*pp larger than the GPU count (RLinf divides by zero)"
    ({"actor": "0-5", "rollout": "6-7", "reward": "0-1"}, 1, None, sizes(1, 2, 2), ["rollout", "2 (rollout.tensor_parallel_size) x PP size 2 (rollout.pipeline_parallel_size) = 4", "exceeds"]),
    ({"actor": "0-5", "rollout": "6-7", "reward": "0-1"}, 1, None, sizes(1, 4), ["rollout", "TP size 4", "less than or equal", "2 GPUs"]),
    ({"actor,rollout,reward": "0-1"}, 1, None, sizes(4, 1), ["actor", "TP size 4", "less than or equal", "2 GPUs"]),
    # issue: "a partial overlap that is neither collocated nor disaggregated"
    ({"actor": "0-3", "rollout": "2-5", "reward": "0-7"}, 1, None, sizes(), ["neither collocated", "actor", "rollout", "share cluster GPUs 2-3"]),
    ({"actor": "0-3", "rollout": "4-5", "inference": "5-6", "reward": "7"}, 1, None, sizes(), ["rollout", "inference", "share cluster GPUs 5"]),
    # rlinf_behaviour.md 7.4: dedicated inference needs algorithm.recompute_logprobs
    ({"actor": "0-3", "rollout": "4-5", "inference": "6-7", "reward": "7"}, 1, None,
     sizes(algorithm={"recompute_logprobs": False}), ["inference", "recompute_logprobs is false"]),
    ({"actor": "0-3", "rollout": "4-5", "inference": "6-7", "reward": "7"}, 1, None, sizes(), ["recompute_logprobs is missing"]),
    ({"actor": "0-3", "rollout": "4-5", "inference": "6-7", "reward": "7"}, 1, None,
     sizes(inference={"model": {"tensor_model_parallel_size": 4}}, **RECOMPUTE), ["inference", "TP size 4", "2 GPUs"]),
    ({"actor": "0-3", "rollout": "4-5", "inference": "6", "actor_inference": "7", "reward": "7"}, 1, None,
     sizes(**RECOMPUTE), ["'inference' and 'actor_inference'"]),
    # rlinf_behaviour.md 7.4: AUTO order and AUTO being disaggregated
    ({"actor": "4-7", "rollout": "0-3", "reward": "0-3"}, 1, {"auto_scheduler": True}, sizes(), ["order actor -> rollout", "actor 4-7"]),
    ({"actor": "0-3", "rollout": "4-5", "reward": "0-3"}, 1, {"auto_scheduler": True}, sizes(), ["order", "0-7"]),
    ({"actor,rollout,reward": "all"}, 1, {"auto_scheduler": True}, sizes(), ["AUTO mode", "share cluster GPUs 0-7"]),
    ({"actor": "0-2", "rollout": "3-7", "reward": "3"}, 1, {"auto_scheduler": True, "use_pre_process_policy": True},
     sizes(1, 2), ["use_pre_process_policy", "3 GPUs", "divisible by rollout TP size 2"]),
    # model-parallel components need GPUs
    ({"actor,rollout": {"node_group": "node", "placement": "0"}, "reward": "0"}, 1, None, sizes(), ["actor", "(1 node)", "need GPUs"]),
    ({"actor,rollout,reward": "all"}, 1, None, {"actor": {"model": {"tensor_model_parallel_size": 0}}},
     ["actor.model.tensor_model_parallel_size", "positive"]),
]


@pytest.mark.parametrize("placement, nodes, cluster, sections, fragments", MP_ERRORS, ids=lambda v: str(v)[:40])
def test_model_parallel_rules(placement, nodes, cluster, sections, fragments):
    message = mp_error(placement, nodes, cluster, **sections)
    for fragment in fragments:
        assert fragment in message, message


def test_weight_sync_map_only_in_collocated_mode():
    cp = from_yaml("modelparallel_disaggregated_2x8.yaml", ModelParallelComponentPlacement)
    with pytest.raises(PlacementConfigError, match="placement mode is DISAGGREGATED and the rollout sync mode DISAGGREGATED"):
        cp.weight_sync_map()


@pytest.mark.parametrize("path", sorted(MODELS.glob("modelparallel_*.yaml")), ids=lambda p: p.name)
def test_modelparallel_models_describe_themselves(path):
    assert path.read_text(encoding="utf-8").startswith("# ")
    cls = HybridComponentPlacement if "hybrid" in path.name else ModelParallelComponentPlacement
    assert from_yaml(path.name, cls).components
