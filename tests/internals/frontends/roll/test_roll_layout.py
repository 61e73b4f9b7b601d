"""ROLL's own layout predicted rank by rank, checked node by node, with fixes in ROLL's keys that
``predict()`` keeps only after predicting them; and the solver's layout as device_mapping values."""

from __future__ import annotations

from typing import Any

import pytest

from solver_placement import Cluster, PlacementConfigError
from solver_placement._frontends.roll.resource_manager import land_groups
from solver_placement._prediction.findings import FindingKind, FrameworkLayoutError
from solver_placement._prediction.predict import improve, predict


def section(mapping: str | None, strategy: str = "megatron_train", **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"strategy_args": {"strategy_name": strategy, "strategy_config": extra.pop("strategy_config", {})}, **extra}
    if mapping is not None:
        body["device_mapping"] = mapping
    return body


def rows(prediction: Any, role: str) -> list[tuple[int, int | None, tuple[int, ...], tuple[str, ...], int | None]]:
    return [(rank.rank, rank.node, rank.gpus, rank.visible_devices, rank.bundle) for rank in prediction.of_role(role)]


def kinds(prediction: Any) -> list[FindingKind]:
    return [finding.kind for finding in prediction.findings]


RLVR = {
    "num_gpus_per_node": 8,
    "actor_train": section("list(range(0,16))"),
    "actor_infer": section("list(range(0,12))", "vllm", strategy_config={"tensor_parallel_size": 2}),
    "reference": section("list(range(0,16))", "megatron_infer"),
    "rewards": {"math": section(None, "hf_infer", world_size=3), "judge": section("list(range(12,16))", "vllm")},
}


def test_every_worker_lands_where_rolls_code_puts_it() -> None:
    prediction = predict("roll", RLVR)
    assert prediction.cluster.describe() == "2 nodes, 8 GPUs each" and prediction.release == "0.3.0"
    assert rows(prediction, "actor_train")[7:9] == [(7, 0, (7,), ("7",), 0), (8, 1, (0,), ("0",), 1)]
    infer = prediction.of_role("actor_infer")
    assert [(rank.node, rank.visible_devices, rank.engine) for rank in infer] == [
        (0, ("0", "1"), 0), (0, ("2", "3"), 1), (0, ("4", "5"), 2), (0, ("6", "7"), 3), (1, ("0", "1"), 4), (1, ("2", "3"), 5),
    ]  # fmt: skip
    assert [(rank.node, rank.gpus, rank.gpu_share) for rank in prediction.of_role("rewards.math")] == [(0, (), 0.0), (1, (), 0.0), (0, (), 0.0)]
    assert rows(prediction, "rewards.judge")[0] == (0, 1, (4,), ("4",), 1)
    assert prediction.errors == () and prediction.warnings == ()
    prediction.check()


def test_two_node_ranks_on_one_large_node_are_told_the_same_gpus_and_no_key_fixes_it_from_0_1_3() -> None:
    """alibaba/ROLL#78, #205, #326: the driver's node has 4 GPUs, so node ranks are 4 GPUs wide,
    and Ray puts both groups on the 32-GPU node, whose GPUs 4-7 ROLL then never names."""
    config = {"actor_train": section("list(range(0,8))")}
    prediction = predict("roll", config, cluster=Cluster(num_nodes=2, num_gpus_per_node=[4, 32]))
    assert rows(prediction, "actor_train")[3:5] == [(3, 1, (3,), ("3",), 0), (4, 1, (4,), ("0",), 1)]
    assert set(kinds(prediction)) == {FindingKind.SHARED_GPU, FindingKind.WRONG_DEVICE}
    shared = next(finding for finding in prediction.findings if finding.kind == FindingKind.SHARED_GPU)
    assert (shared.node, shared.count, shared.fix) == (1, 4, ())
    assert "GPUs 0-3 are each told to workers of two device numbers" in shared.message
    with pytest.raises(
        FrameworkLayoutError, match="ranks 4-7 are told GPUs 0-3 but their placement group \\(node rank 1\\) holds GPUs 4-7"
    ):
        prediction.check()


def test_in_0_1_0_the_same_layout_is_fixed_by_num_gpus_per_node_and_the_fix_is_checked() -> None:
    config = {"num_gpus_per_node": 4, "actor_train": section("list(range(0,8))", "megatron_train")}
    cluster = Cluster(num_nodes=2, num_gpus_per_node=[4, 32])
    prediction = predict("roll", config, cluster=cluster, release="0.1.0")
    errors = prediction.errors
    assert {finding.kind for finding in errors} == {FindingKind.SHARED_GPU, FindingKind.WRONG_DEVICE}
    assert all(finding.fix == (("num_gpus_per_node", "32"),) for finding in errors)
    fixed = predict("roll", {**config, "num_gpus_per_node": 32}, cluster=cluster, release="0.1.0")
    assert fixed.errors == () and [finding.kind for finding in fixed.warnings] == [FindingKind.IDLE_GPUS]
    assert {rank.node for rank in fixed.ranks} == {1}


def test_a_vllm_engine_across_node_ranks_sees_only_its_first_part_and_is_realigned() -> None:
    config = {"actor_infer": section("list(range(2,10))", "vllm", strategy_config={"tensor_parallel_size": 4})}
    prediction = predict("roll", config)
    split = [finding for finding in prediction.findings if finding.kind == FindingKind.SPLIT_ENGINE]
    assert [(finding.role, finding.node, finding.count) for finding in split] == [("actor_infer", 0, 4)]
    assert "from node rank 0 only (2 of its 4 GPUs), so its engine runs across nodes" in split[0].message
    assert prediction.of_role("actor_infer")[1].visible_devices == ("6", "7")
    assert split[0].fix == (("actor_infer.device_mapping", "list(range(2,6))+list(range(8,12))"),)
    assert FindingKind.IDLE_GPUS in kinds(prediction)


def test_a_megatron_tensor_parallel_group_across_nodes_is_realigned() -> None:
    config = {"actor_train": section("list(range(6,14))", strategy_config={"tensor_model_parallel_size": 4})}
    prediction = predict("roll", config)
    split = [finding for finding in prediction.findings if finding.kind == FindingKind.SPLIT_ENGINE]
    assert [(finding.message, finding.fix) for finding in split] == [
        ("engine 0 (4 ranks) spans nodes 0, 1", (("actor_train.device_mapping", "list(range(8,16))"),))
    ]


def test_an_engine_larger_than_a_node_rank_spans_nodes_without_a_finding() -> None:
    config = {"actor_infer": section("list(range(0,32))", "vllm", strategy_config={"tensor_parallel_size": 16})}
    prediction = predict("roll", config)
    assert prediction.findings == () and [rank.visible_devices for rank in prediction.of_role("actor_infer")] == [tuple(map(str, range(8)))] * 2


def test_reserved_gpus_no_worker_uses_are_a_warning_without_a_fix() -> None:
    prediction = predict("roll", {"actor_train": section("list(range(0,12))")})
    assert prediction.errors == ()
    [idle] = prediction.warnings
    assert (idle.kind, idle.role, idle.node, idle.count, idle.fix) == (FindingKind.IDLE_GPUS, "ResourceManager", 1, 4, ())
    assert "GPUs 4-7 are reserved for node rank 1 (num_gpus_per_node=8) and no worker uses them (device numbers 12-15)" in idle.message


def test_the_driver_node_decides_the_node_rank_width_from_0_1_3_and_the_config_in_0_1_0() -> None:
    config = {"num_gpus_per_node": 8, "actor_train": section("list(range(0,8))")}
    cluster = Cluster(num_nodes=2, num_gpus_per_node=[4, 8])
    newer = predict("roll", config, cluster=cluster)
    assert [rank.bundle for rank in newer.ranks] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert newer.notes[0] == "rules of ROLL 0.3.0 (v0.3.0 at 7f9d4d38; main at 8eb27cc2 places the same)"
    assert "num_gpus_per_node=4: the GPUs of node 0" in newer.notes[1] and "config's 8 is not read" in newer.notes[1]
    older = predict("roll", config, cluster=cluster, release="0.1.0")
    assert {rank.node for rank in older.ranks} == {1} and [rank.bundle for rank in older.ranks] == [0] * 8


def test_rolls_start_up_assertions_are_refused_with_its_words() -> None:
    with pytest.raises(PlacementConfigError, match=r"The Ray clusters\(ray_num_nodes: 1\) cannot meet the required number of nodes \(`num_nodes`2\)"):
        predict("roll", {"actor_train": section("list(range(0,16))")}, cluster=Cluster(num_nodes=1, num_gpus_per_node=8))
    with pytest.raises(
        PlacementConfigError, match=r"rewards.judge.device_mapping: .*more than num_nodes×num_gpus_per_node=1×8 \(ROLL does not count rewards"
    ):
        predict(
            "roll",
            {"actor_train": section("list(range(0,8))"), "rewards": {"judge": section("list(range(8,12))", "vllm")}},
            cluster=Cluster(num_nodes=2),
        )


def test_a_group_no_node_holds_stays_pending() -> None:
    landed = land_groups([8, 8], 8, 3)
    assert [(group.node, group.first_gpu) for group in landed] == [(0, 0), (1, 0), (None, 0)]
    assert [(group.node, group.first_gpu) for group in land_groups([4, 32], 4, 3)] == [(1, 0), (1, 4), (0, 0)]


def test_the_solvers_layout_comes_back_as_device_mappings_rolls_code_reproduces() -> None:
    offered = improve("roll", RLVR)
    assert offered.arguments is not None and offered.cannot_express == ()
    assert {word.split("=")[0] for word in offered.arguments} == {
        "actor_train.device_mapping", "actor_infer.device_mapping", "reference.device_mapping", "rewards.judge.device_mapping",
    }  # fmt: skip
    assert sorted(offered.solution.components) == ["actor_infer", "actor_train", "reference", "rewards.judge"]


def test_gpus_rolls_node_ranks_cannot_reach_are_stated_not_offered() -> None:
    config = {"actor_train": section("list(range(0,8))"), "actor_infer": section("list(range(8,24))", "vllm")}
    offered = improve("roll", config, cluster=Cluster(num_nodes=2, num_gpus_per_node=[8, 16]))
    assert offered.arguments is None
    assert any("no node rank of ROLL reaches (num_gpus_per_node=8" in reason for reason in offered.cannot_express)


def test_a_job_without_gpu_sections_has_nothing_to_improve() -> None:
    with pytest.raises(PlacementConfigError, match="no section has a device_mapping"):
        improve("roll", {"rewards": {"math": section(None, "hf_infer", world_size=2)}})


def test_one_section_naming_a_device_twice_puts_two_of_its_ranks_on_one_gpu() -> None:
    prediction = predict("roll", {"actor_train": section("[0, 0, 1, 1]", "fsdp2_train")}, cluster=Cluster(num_nodes=1, num_gpus_per_node=8))
    [shared] = prediction.errors
    assert (shared.kind, shared.role, shared.node, shared.count, shared.fix) == (FindingKind.SHARED_GPU, "actor_train", 0, 2, ())
    assert "actor_train rank 0 (node rank 0), actor_train rank 1 (node rank 0)" in shared.message
