"""NeMo-RL's own layout rank by rank (commit 7ea279ab), its findings node by node, and their
fixes kept only when predicting them clears the finding."""

from __future__ import annotations

from pathlib import Path

import pytest
from nemo_rl_configs import write_configs

from solver_placement._cluster.cluster import Cluster
from solver_placement._cluster.ray_nodes import RayNode, ray_cluster_kwargs
from solver_placement._errors import PlacementConfigError
from solver_placement._frontends.nemo_rl.segments import DOMAIN_LABEL, TOPO_RANK_LABEL
from solver_placement._prediction.findings import FindingKind
from solver_placement._prediction.layout import Prediction
from solver_placement._prediction.predict import improve, predict

TWO_BY_EIGHT = Cluster(num_nodes=2, num_gpus_per_node=8)
MIXED = Cluster(num_nodes=3, num_gpus_per_node=[8, 8, 4])


@pytest.fixture
def config(tmp_path: Path) -> list[str]:
    return ["--config", str(write_configs(tmp_path))]


def layout(prediction: Prediction, role: str) -> list[tuple[int | None, tuple[int, ...], tuple[str, ...], float, int | None, int | None]]:
    return [(r.node, r.gpus, r.visible_devices, r.gpu_share, r.engine, r.bundle) for r in prediction.of_role(role)]


def test_colocated_policy_and_vllm_share_each_bundle_at_half_a_gpu(config: list[str]) -> None:
    prediction = predict("nemo-rl", [*config, "cluster.num_nodes=2", "policy.generation.vllm_cfg.tensor_parallel_size=4", "policy.dtensor_cfg.tensor_parallel_size=2"], cluster=TWO_BY_EIGHT)
    assert layout(prediction, "policy") == [(node, (gpu,), (str(gpu),), 0.5, (8 * node + gpu) // 2, gpu) for node in range(2) for gpu in range(8)]
    engines = layout(prediction, "generation")
    assert [entry[4] for entry in engines] == [rank // 4 for rank in range(16)]
    assert engines[5] == (0, (5,), ("4", "5", "6", "7"), 0.5, 1, 5)
    assert engines[8] == (1, (0,), ("0", "1", "2", "3"), 0.5, 2, 0)
    assert not prediction.findings


def test_non_colocated_on_one_node_splits_it_between_training_and_inference(config: list[str]) -> None:
    apart = ["policy.generation.colocated.enabled=false", "policy.generation.colocated.resources.gpus_per_node=2"]
    prediction = predict("nemo-rl", [*config, *apart], cluster=Cluster(num_nodes=1, num_gpus_per_node=8))
    assert [r.gpus for r in prediction.of_role("policy")] == [(gpu,) for gpu in range(6)]
    assert layout(prediction, "generation") == [(0, (6,), ("6",), 1.0, None, 0), (0, (7,), ("7",), 1.0, None, 1)]


def test_non_colocated_inference_whose_gpus_are_not_whole_engines_is_refused_as_vllm_generation_asserts(config: list[str]) -> None:
    apart = ["cluster.num_nodes=2", "policy.generation.colocated.enabled=false", "policy.generation.colocated.resources.num_nodes=1", "policy.generation.colocated.resources.gpus_per_node=8"]
    with pytest.raises(PlacementConfigError, match=r"vllm_generation.py line 121 .*world size 8 and model parallel size \(TP \* PP\) 3 .*divides 8: 1, 2$"):
        predict("nemo-rl", [*config, *apart, "policy.generation.vllm_cfg.tensor_parallel_size=3"], cluster=MIXED)
    prediction = predict("nemo-rl", [*config, *apart, "policy.generation.vllm_cfg.tensor_parallel_size=2"], cluster=MIXED)
    assert {r.node for r in prediction.of_role("policy")} == {0}
    assert [(r.node, r.gpus[0], r.engine) for r in prediction.of_role("generation")] == [(1, gpu, gpu // 2) for gpu in range(8)]


def test_an_engine_larger_than_a_node_makes_one_unified_group_sorted_by_node_and_gpu(config: list[str]) -> None:
    prediction = predict("nemo-rl", [*config, "cluster.num_nodes=2", "policy.generation.vllm_cfg.tensor_parallel_size=16"], cluster=TWO_BY_EIGHT)
    # colocated: strategy None -> the cluster's SPREAD, bundles alternate nodes; the ranks follow the sorted order
    assert [(r.node, r.gpus[0], r.bundle) for r in prediction.of_role("policy")][:3] == [(0, 0, 0), (0, 1, 2), (0, 2, 4)]
    assert [r.node for r in prediction.of_role("policy")] == [0] * 8 + [1] * 8
    assert {r.engine for r in prediction.of_role("generation")} == {0}
    assert not prediction.errors  # an engine no node holds spans nodes by design
    assert any("LOCAL_RANK is the bundle index" in note for note in prediction.notes)


def test_more_gpus_than_the_cluster_has_is_pending_and_the_sizing_fix_is_kept(config: list[str]) -> None:
    prediction = predict("nemo-rl", [*config, "cluster.num_nodes=3"], cluster=MIXED)
    assert {(f.kind, f.role) for f in prediction.errors} == {(FindingKind.PENDING, "policy"), (FindingKind.PENDING, "generation")}
    assert all(f.fix == (("cluster.gpus_per_node", "4"),) for f in prediction.errors)
    assert "ResourceInsufficientError" in prediction.errors[0].message
    assert all(r.node is None for r in prediction.ranks)


def test_a_node_group_larger_than_a_machine_spills_and_splits_an_engine_fix_kept(config: list[str]) -> None:
    prediction = predict("nemo-rl", [*config, "cluster.num_nodes=3", "cluster.gpus_per_node=6", "policy.generation.vllm_cfg.tensor_parallel_size=3"], cluster=MIXED)
    (split,) = prediction.errors
    assert (split.kind, split.role) == (FindingKind.SPLIT_ENGINE, "generation")
    assert "engine 5 (3 ranks) spans nodes 0, 2" in split.message  # the third group: 4 GPUs of node 2, then 2 of node 0
    assert split.fix == (("cluster.gpus_per_node", "4"),)


def test_a_sizing_fix_that_does_not_clear_the_split_is_dropped(config: list[str]) -> None:
    # 5-GPU engines: at gpus_per_node=4 they outgrow a node group, and the unified group splits them again
    prediction = predict("nemo-rl", [*config, "cluster.num_nodes=3", "cluster.gpus_per_node=5", "policy.generation.vllm_cfg.tensor_parallel_size=5"], cluster=MIXED)
    (split,) = prediction.errors
    assert (split.kind, split.role, split.fix) == (FindingKind.SPLIT_ENGINE, "generation", ())


def test_inference_that_finds_no_free_gpus_waits_and_no_sizing_fixes_it(config: list[str]) -> None:
    apart = ["cluster.num_nodes=2", "policy.generation.colocated.enabled=false", "policy.generation.colocated.resources.num_nodes=1", "policy.generation.colocated.resources.gpus_per_node=8"]
    prediction = predict("nemo-rl", [*config, *apart], cluster=Cluster(num_nodes=1, num_gpus_per_node=8))
    (pending,) = prediction.errors
    assert (pending.kind, pending.role, pending.fix) == (FindingKind.PENDING, "generation", ())
    assert "TimeoutError" in pending.message
    assert [r.node for r in prediction.of_role("policy")] == [0] * 8


def test_improve_offers_overrides_that_reproduce_the_solver_layout(config: list[str]) -> None:
    better = improve("nemo-rl", [*config, "cluster.num_nodes=2"], cluster=TWO_BY_EIGHT)
    assert better.arguments is not None and better.arguments[0] == "--config"
    assert better.solution.components == ["policy", "generation"]
    realised = predict("nemo-rl", list(better.arguments), cluster=TWO_BY_EIGHT)
    assert len(realised.of_role("policy")) == 16 and not realised.errors


def test_improve_without_a_file_says_what_cannot_be_expressed() -> None:
    job = {"policy": {"generation": {"backend": "vllm", "vllm_cfg": {"tensor_parallel_size": 2, "pipeline_parallel_size": 1}, "colocated": {"enabled": True}}}, "cluster": {"num_nodes": 1, "gpus_per_node": 4}}
    better = improve("nemo-rl", job)
    assert better.arguments is None and "give the YAML file" in better.cannot_express[0]


def _racks(domains: list[tuple[str, int]]) -> Cluster:
    """4-GPU nodes carrying NeMo-RL's topology (``nvlink_domain``, ``topo_rank``) as node labels."""
    return Cluster(
        num_nodes=len(domains), num_gpus_per_node=4, node_labels=[{DOMAIN_LABEL: domain, TOPO_RANK_LABEL: str(rank)} for domain, rank in domains]
    )


TWO_DOMAINS = _racks([("a", 7), ("a", 8), ("a", 9), ("b", 1), ("b", 2), ("b", 3)])
SEGMENTS = ["cluster.num_nodes=4", "cluster.gpus_per_node=4", "++cluster.segment_size=2"]


def test_segments_pin_each_node_group_to_a_domain_and_ray_picks_the_freest_node_in_it(config: list[str]) -> None:
    prediction = predict("nemo-rl", [*config, *SEGMENTS], cluster=TWO_DOMAINS)
    # domain b sorts first (topo_rank 1): its one whole segment, then a's; the groups land on the freest node of their domain
    assert [r.node for r in prediction.of_role("policy")] == [3] * 4 + [4] * 4 + [0] * 4 + [1] * 4
    assert not prediction.errors


def test_a_live_ray_cluster_gives_domains_and_topo_ranks_by_the_resources_ray_sub_registers(config: list[str]) -> None:
    # what Cluster.from_ray reads of nodes started by NeMo-RL's ray.sub: the two resources, no labels
    racks = [("a", 7), ("a", 8), ("a", 9), ("b", 1), ("b", 2), ("b", 3)]
    nodes = [RayNode(f"id{n}", f"10.0.0.{n}", {"GPU": 4, f"nvlink_domain_{domain}": 1, "topo_rank": rank}) for n, (domain, rank) in enumerate(racks)]
    live = Cluster(**ray_cluster_kwargs(nodes))
    assert not any(live.node_labels)
    for asked in ([*config, *SEGMENTS], [*config, *SEGMENTS, "policy.generation.vllm_cfg.tensor_parallel_size=8"]):
        assert predict("nemo-rl", asked, cluster=live).ranks == predict("nemo-rl", asked, cluster=TWO_DOMAINS).ranks


def test_a_unified_group_with_segments_spreads_over_the_domain_and_ranks_follow_topo_rank(config: list[str]) -> None:
    prediction = predict("nemo-rl", [*config, *SEGMENTS, "policy.generation.vllm_cfg.tensor_parallel_size=8"], cluster=TWO_DOMAINS)
    nodes = [r.node for r in prediction.of_role("generation")]
    assert set(nodes) == set(range(6))  # SPREAD reaches every node of both domains, not only the four selected
    assert nodes[:8] == sorted(nodes[:8]) and set(nodes[:8]) == {3, 4, 5}  # domain b first, its nodes by topo_rank
    assert any("NVLink domain's lowest topo_rank" in note for note in prediction.notes)


def test_segments_that_do_not_divide_the_nodes_are_refused_with_a_size_that_works(config: list[str]) -> None:
    with pytest.raises(
        PlacementConfigError, match=r"num_nodes \(3\) must be divisible by segment_size \(2\)\. Fix: cluster\.segment_size=3 forms"
    ) as refused:
        predict("nemo-rl", [*config, "cluster.num_nodes=3", "cluster.gpus_per_node=4", "++cluster.segment_size=2"], cluster=TWO_DOMAINS)
    assert "ValueError" in str(refused.value)
    fixed = predict("nemo-rl", [*config, "cluster.num_nodes=3", "cluster.gpus_per_node=4", "++cluster.segment_size=3"], cluster=TWO_DOMAINS)
    assert {r.node for r in fixed.of_role("policy")} == {3, 4, 5}


def test_too_few_whole_segments_is_nemo_rl_s_resource_error_with_a_size_that_forms(config: list[str]) -> None:
    cluster = _racks([("a", 1), ("b", 2), ("b", 3), ("b", 4)])
    with pytest.raises(
        PlacementConfigError,
        match=r"Cannot form 2 complete segments of 2 nodes\. Nodes per domain: \{'nvlink_domain_a': 1, 'nvlink_domain_b': 3\}.*Fix: cluster\.segment_size=1 forms",
    ):
        predict("nemo-rl", [*config, *SEGMENTS], cluster=cluster)
    assert len(predict("nemo-rl", [*config, *SEGMENTS[:2], "++cluster.segment_size=1"], cluster=cluster).of_role("policy")) == 16


def test_segments_without_domains_change_nothing_but_non_colocated_needs_every_node_alive(config: list[str]) -> None:
    plain = predict("nemo-rl", [*config, "cluster.num_nodes=2"], cluster=TWO_BY_EIGHT)
    segmented = predict("nemo-rl", [*config, "cluster.num_nodes=2", "++cluster.segment_size=2"], cluster=TWO_BY_EIGHT)
    assert segmented.ranks == plain.ranks and any("falls back to unordered allocation" in note for note in segmented.notes)
    apart = ["policy.generation.colocated.enabled=false", "policy.generation.colocated.resources.gpus_per_node=2", "++cluster.segment_size=1"]
    with pytest.raises(PlacementConfigError, match=r"Not enough alive Ray nodes for all roles: need 2 \(train=1 \+ inference=1\), but only 1"):
        predict("nemo-rl", [*config, *apart], cluster=Cluster(num_nodes=1, num_gpus_per_node=8))


def test_a_topo_rank_label_that_is_not_a_rank_is_refused_by_name(config: list[str]) -> None:
    cluster = Cluster(num_nodes=1, num_gpus_per_node=8, node_labels=[{TOPO_RANK_LABEL: "0"}])
    with pytest.raises(PlacementConfigError, match=r"cluster\.node_labels\[0\]\.topo_rank='0': a topo_rank is a whole number of at least 1"):
        predict("nemo-rl", config, cluster=cluster)


MEGATRON = [
    "policy.generation.backend=megatron", "policy.megatron_cfg.enabled=true", "policy.dtensor_cfg.enabled=false", "++policy.megatron_cfg.tensor_model_parallel_size=2",
    "++policy.megatron_cfg.pipeline_model_parallel_size=1", "++policy.megatron_cfg.context_parallel_size=1", "++policy.megatron_cfg.expert_tensor_parallel_size=1",
]  # fmt: skip


def test_colocated_megatron_generation_runs_in_the_policy_workers_on_whole_gpus(config: list[str]) -> None:
    prediction = predict("nemo-rl", [*config, "cluster.num_nodes=2", *MEGATRON, "++policy.megatron_cfg.expert_model_parallel_size=16"], cluster=TWO_BY_EIGHT)
    assert prediction.roles == ["policy"] and {r.gpu_share for r in prediction.ranks} == {1.0}
    assert [r.node for r in prediction.of_role("policy")] == [0] * 8 + [1] * 8  # span 16 > 8, but unpinned: per-node groups
    assert any("runs in the policy's own workers" in note and "span" in note for note in prediction.notes)


def test_non_colocated_megatron_generation_with_a_span_over_a_node_takes_one_sorted_unified_group(config: list[str]) -> None:
    apart = ["cluster.num_nodes=3", "policy.generation.colocated.enabled=false", "policy.generation.colocated.resources.num_nodes=2", "policy.generation.colocated.resources.gpus_per_node=8"]
    prediction = predict("nemo-rl", [*config, *apart, *MEGATRON, "++policy.megatron_cfg.expert_model_parallel_size=16"], cluster=Cluster(num_nodes=3, num_gpus_per_node=8))
    assert [r.node for r in prediction.of_role("generation")] == [1] * 8 + [2] * 8
    assert [r.engine for r in prediction.of_role("generation")] == [rank // 2 for rank in range(16)]  # the merged layout's tensor groups
    assert not prediction.errors


def test_a_megatron_layout_size_that_is_not_a_size_is_refused_by_key(config: list[str]) -> None:
    with pytest.raises(PlacementConfigError, match=r"policy\.megatron_cfg\.expert_model_parallel_size=None: Megatron needs a whole number"):
        predict("nemo-rl", [*config, *MEGATRON, "++policy.megatron_cfg.expert_model_parallel_size=null"])
