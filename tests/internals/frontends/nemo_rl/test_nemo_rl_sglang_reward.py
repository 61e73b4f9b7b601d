"""NeMo-RL's SGLang generation and reward-model environment (commit 7ea279ab): read, predicted rank
by rank, checked node by node, fixed in NeMo-RL's keys (each fix checked by predicting it).

The layouts asserted here are the ones ``tests/data/nemo_rl/layouts.json`` recorded from NeMo-RL's
own code for the same edges (``sglang-*``, ``rm-*``); these tests pin what the user reads: the
GPUs each SGLang server drives, what it sees, the findings and their fixes."""

from __future__ import annotations

from pathlib import Path

import pytest
from nemo_rl_configs import write_configs

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import PlacementConfigError
from solver_placement._prediction.findings import FindingKind
from solver_placement._prediction.predict import improve, predict

SGLANG = "policy.generation.sglang_cfg"
RM = "env.reward_model.resources"
TWO_BY_FOUR = ["cluster.num_nodes=2", "cluster.gpus_per_node=4"]


@pytest.fixture
def sglang(tmp_path: Path) -> list[str]:
    return ["--config", str(write_configs(tmp_path).with_name("grpo_math_1B_sglang.yaml"))]


@pytest.fixture
def reward(tmp_path: Path) -> list[str]:
    return ["--config", str(write_configs(tmp_path).with_name("grpo_rm_1B.yaml"))]


def engines(tp: int, gpus: int) -> list[str]:
    return [f"{SGLANG}.tp_size={tp}", f"{SGLANG}.sglang_server_config.num_gpus={gpus}"]


def test_the_example_runs_one_sglang_actor_per_gpu_in_the_policy_s_unified_group(sglang: list[str]) -> None:
    prediction = predict("nemo-rl", sglang, cluster=Cluster(num_nodes=1, num_gpus_per_node=2))
    assert [(r.node, r.gpus, r.gpu_share, r.bundle) for r in prediction.of_role("policy")] == [(0, (0,), 0.5, 0), (0, (1,), 0.5, 1)]
    assert [(r.node, r.gpus, r.visible_devices, r.gpu_share, r.engine, r.bundle) for r in prediction.of_role("generation")] == [
        (0, (0,), ("0", "1"), 0.2, 0, 0),
        (0, (1,), ("0", "1"), 0.2, 1, 1),
    ]
    assert not prediction.findings
    assert any("SGLangGeneration" in note for note in prediction.notes)


def test_an_engine_spanning_nodes_starts_one_actor_per_node_part(sglang: list[str]) -> None:
    prediction = predict("nemo-rl", [*sglang, *TWO_BY_FOUR, *engines(8, 8)], cluster=Cluster(num_nodes=2, num_gpus_per_node=4))
    assert [(r.node, r.gpus[0], r.engine) for r in prediction.of_role("generation")] == [(node, gpu, 0) for node in range(2) for gpu in range(4)]
    assert not prediction.findings


def test_a_server_counting_past_its_node_is_told_the_wrong_gpus_and_a_smaller_engine_fixes_it(sglang: list[str]) -> None:
    prediction = predict("nemo-rl", [*sglang, *TWO_BY_FOUR, *engines(3, 6)], cluster=Cluster(num_nodes=2, num_gpus_per_node=4))
    assert [(r.node, r.gpus[0], r.bundle, r.engine) for r in prediction.of_role("generation")] == [(0, gpu, gpu, gpu // 3) for gpu in range(6)]
    (wrong,) = prediction.errors
    assert (wrong.kind, wrong.node, wrong.count) == (FindingKind.WRONG_DEVICE, 0, 2)
    assert "base_gpu_id 3" in wrong.message and "node 0 has no GPU 4, 5" in wrong.message and "0:3, 1:0, 1:1" in wrong.message
    assert wrong.fix == ((f"{SGLANG}.tp_size", "2"), (f"{SGLANG}.sglang_server_config.num_gpus_per_engine", "2"))
    assert prediction.fixes_checked


def test_two_servers_driving_one_gpu_are_found_and_sized_apart(sglang: list[str]) -> None:
    prediction = predict("nemo-rl", [*sglang, *TWO_BY_FOUR, *engines(6, 8)], cluster=Cluster(num_nodes=1, num_gpus_per_node=8))
    kinds = sorted(str(finding.kind) for finding in prediction.errors)
    assert kinds == [str(FindingKind.WRONG_DEVICE)] * 2 + [str(FindingKind.SHARED_GPU)]
    shared = next(finding for finding in prediction.errors if finding.kind == FindingKind.SHARED_GPU)
    assert "GPU 4 to policy rank 4, generation rank 4, generation rank 6" in shared.message
    assert shared.fix == (("cluster.num_nodes", "1"), ("cluster.gpus_per_node", "8"), (f"{SGLANG}.tp_size", "4"), (f"{SGLANG}.sglang_server_config.num_gpus_per_engine", "4"))


def test_an_engine_missing_a_node_part_waits_forever_until_num_gpus_holds_whole_engines(sglang: list[str]) -> None:
    prediction = predict("nemo-rl", [*sglang, *TWO_BY_FOUR, *engines(8, 4)], cluster=Cluster(num_nodes=2, num_gpus_per_node=4))
    (pending,) = prediction.errors
    assert pending.kind == FindingKind.PENDING and "node part [0] only" in pending.message
    assert pending.fix == ((f"{SGLANG}.sglang_server_config.num_gpus", "8"),)


@pytest.mark.parametrize(
    ("words", "refusal"),
    [
        (["policy.generation.colocated.enabled=false"], "NotImplementedError: SGLang haven't implemented non-colocated inference mode"),
        (engines(1, 3), "IndexError: list index out of range"),
        ([f"{SGLANG}.sglang_server_config.num_gpus_per_engine=1", f"{SGLANG}.tp_size=2"], r"tp_size \(2\) must equal num_gpus_per_engine \(1\) // pp_size \(1\)"),
        ([f"{SGLANG}.dp_size=2"], "policy.generation.sglang_cfg.dp_size=2: SGLang's data-parallel controller"),
    ],
)
def test_what_nemo_rl_or_the_library_refuses_for_sglang_is_named(sglang: list[str], words: list[str], refusal: str) -> None:
    with pytest.raises(PlacementConfigError, match=refusal):
        predict("nemo-rl", [*sglang, *words], cluster=Cluster(num_nodes=1, num_gpus_per_node=2))


def test_the_reward_model_takes_its_gpus_first_and_the_policy_the_rest_of_the_node(reward: list[str]) -> None:
    prediction = predict("nemo-rl", [*reward, "cluster.gpus_per_node=8", f"{RM}.gpus_per_node=2"], cluster=Cluster(num_nodes=1, num_gpus_per_node=8))
    assert prediction.roles == ["reward_model", "policy", "generation"]  # the order NeMo-RL starts them
    assert [(r.node, r.gpus[0], r.gpu_share, r.bundle) for r in prediction.of_role("reward_model")] == [(0, 0, 1.0, 0), (0, 1, 1.0, 1)]
    assert [r.gpus[0] for r in prediction.of_role("policy")] == [2, 3, 4, 5, 6, 7]
    assert not prediction.findings


def test_on_several_nodes_the_reward_model_takes_whole_nodes(reward: list[str]) -> None:
    prediction = predict("nemo-rl", [*reward, "cluster.num_nodes=3", "cluster.gpus_per_node=4", f"{RM}.gpus_per_node=4"], cluster=Cluster(num_nodes=3, num_gpus_per_node=4))
    assert {r.node for r in prediction.of_role("reward_model")} == {0}
    assert {r.node for r in prediction.of_role("policy")} == {1, 2}
    solution = improve("nemo-rl", [*reward, "cluster.num_nodes=3", "cluster.gpus_per_node=4", f"{RM}.gpus_per_node=4"], cluster=Cluster(num_nodes=3, num_gpus_per_node=4))
    assert set(solution.solution.placements_by_component()) == {"policy", "generation", "reward_model"}
    assert solution.arguments is not None and not solution.cannot_express  # the solver lists the reward model first, as NeMo-RL lands it


def test_a_reward_model_the_data_does_not_name_starts_nothing(reward: list[str]) -> None:
    prediction = predict("nemo-rl", [*reward, "data.default.env_name=math"], cluster=Cluster(num_nodes=1, num_gpus_per_node=2))
    assert "reward_model" not in prediction.roles
    assert [r.gpus[0] for r in prediction.of_role("policy")] == [0, 1]


@pytest.mark.parametrize(
    ("words", "refusal"),
    [
        ([f"{RM}.gpus_per_node=2"], "policy.generation.colocated.resources.gpus_per_node must be > 0 when cluster.num_nodes = 1, but got 0"),
        (["cluster.num_nodes=2", f"{RM}.num_nodes=2"], "policy_nodes must be > 0, but got policy_nodes:0 \\+ rm_nodes:2 = total_nodes:2"),
        ([f"{RM}.num_nodes=0"], "env.reward_model.resources.num_nodes=0: it must be a whole number of at least 1"),
    ],
)
def test_nemo_rl_s_reward_model_asserts_are_refused_in_its_words(reward: list[str], words: list[str], refusal: str) -> None:
    with pytest.raises(PlacementConfigError, match=refusal):
        predict("nemo-rl", [*reward, *words], cluster=Cluster(num_nodes=2, num_gpus_per_node=2))


def test_num_gpus_below_one_engine_starts_no_server_and_is_refused_with_one_engine_s_gpus(sglang: list[str]) -> None:
    asked = [*sglang, "cluster.num_nodes=1", "cluster.gpus_per_node=4", *engines(4, 2), f"{SGLANG}.sglang_server_config.num_gpus_per_engine=4"]
    with pytest.raises(PlacementConfigError, match=r"starts no SGLang engine .*num_gpus 2 // min\(num_gpus_per_engine 4, gpus_per_node 4\) = 0.*num_gpus=4$"):
        predict("nemo-rl", asked, cluster=Cluster(num_nodes=1, num_gpus_per_node=4))
    fixed = predict("nemo-rl", [*asked, f"{SGLANG}.sglang_server_config.num_gpus=4"], cluster=Cluster(num_nodes=1, num_gpus_per_node=4))
    assert [(r.node, r.gpus[0], r.engine) for r in fixed.of_role("generation")] == [(0, gpu, 0) for gpu in range(4)] and not fixed.errors
