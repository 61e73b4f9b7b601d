"""``predict("skyrl", ...)`` and ``improve``: SkyRL 0.4.0's ``main_base`` overrides read as Hydra
and SkyRL read them, its placement groups and engines rank by rank, findings with fixes checked
by predicting them, the solver's layout, and SkyRL's own example scripts (their placement
overrides at skyrl_train-v0.4.0 are in ``examples_v0_4_0.yaml``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from solver_placement import Cluster, FindingKind, improve, predict
from solver_placement._cli.app import main
from solver_placement._errors import InfeasiblePlacementError, PlacementError

EXAMPLES = yaml.safe_load((Path(__file__).parent / "examples_v0_4_0.yaml").read_text())
COLOCATED_4 = ["trainer.placement.policy_num_gpus_per_node=4", "trainer.placement.ref_num_gpus_per_node=4", "generator.num_inference_engines=2", "generator.inference_engine_tensor_parallel_size=2"]
APART_8 = [
    "trainer.placement.colocate_all=false", "trainer.placement.policy_num_gpus_per_node=8", "trainer.placement.ref_num_gpus_per_node=8",
    "generator.num_inference_engines=8",
]  # fmt: skip
#: A 6-GPU policy and ref with batch sizes SkyRL's batch-size rule accepts over 6 ranks (its defaults it refuses).
SIX_GPUS = ["trainer.placement.policy_num_gpus_per_node=6", "trainer.placement.ref_num_gpus_per_node=6", "trainer.train_batch_size=48", "trainer.policy_mini_batch_size=12"]


def _where(prediction: object, role: str) -> list[tuple[int | None, tuple[int, ...], float, int | None]]:
    return [(rank.node, rank.gpus, rank.gpu_share, rank.engine) for rank in prediction.of_role(role)]  # type: ignore[attr-defined]


def test_defaults_are_skyrls_one_gpu_colocated_policy_ref_and_engine() -> None:
    prediction = predict("skyrl", [])
    assert prediction.release == "0.4.0" and prediction.roles == ["rollout", "policy", "ref"]
    assert all(_where(prediction, role) == [(0, (0,), 0.2, 0 if role == "rollout" else None)] for role in prediction.roles)
    assert not prediction.findings


def test_colocate_all_shares_every_gpu_at_a_fifth_and_engines_take_consecutive_bundles() -> None:
    prediction = predict("skyrl", ["python", "-m", "skyrl_train.entrypoints.main_base", *COLOCATED_4, "data.train_data=['x']"])
    assert _where(prediction, "rollout") == [(0, (0,), 0.2, 0), (0, (1,), 0.2, 0), (0, (2,), 0.2, 1), (0, (3,), 0.2, 1)]
    assert [rank.visible_devices for rank in prediction.of_role("policy")] == [("0",), ("1",), ("2",), ("3",)]
    assert _where(prediction, "ref") == _where(prediction, "policy") == [(0, (gpu,), 0.2, None) for gpu in range(4)]


def test_training_ranks_follow_the_node_sorted_bundles_while_engines_keep_ray_order() -> None:
    """SkyRL#338: Ray packs the freest node first; training ranks re-sort by node, engines do not."""
    overrides = [*SIX_GPUS, "generator.num_inference_engines=3", "generator.inference_engine_tensor_parallel_size=2"]
    prediction = predict("skyrl", overrides, cluster=Cluster(num_nodes=2, num_gpus_per_node=[2, 4]))
    assert [rank.node for rank in prediction.of_role("rollout")] == [1, 1, 1, 1, 0, 0]
    assert [rank.node for rank in prediction.of_role("policy")] == [0, 0, 1, 1, 1, 1]
    assert not prediction.errors


def test_policy_and_ref_share_whole_node_bundles_at_three_quarters_and_a_quarter() -> None:
    overrides = [
        "trainer.placement.colocate_all=false", "trainer.placement.policy_num_gpus_per_node=4", "trainer.placement.ref_num_gpus_per_node=4",
        "trainer.critic.model.path=critic", "trainer.placement.critic_num_nodes=2", "generator.num_inference_engines=2",
    ]  # fmt: skip
    prediction = predict("skyrl", overrides, cluster=Cluster(num_nodes=2, num_gpus_per_node=4))
    assert _where(prediction, "rollout") == [(0, (0,), 1.0, 0), (0, (1,), 1.0, 1)]
    assert _where(prediction, "policy") == [(1, (gpu,), 0.75, None) for gpu in range(4)]  # the freest node takes the whole-node bundle
    assert _where(prediction, "ref") == [(1, (gpu,), 0.25, None) for gpu in range(4)]
    assert _where(prediction, "critic") == [(0, (2,), 1.0, None), (0, (3,), 1.0, None)]  # one GPU per node: no group, lone actors
    assert not prediction.findings


def test_a_whole_node_bundle_wider_than_the_nodes_is_pending_and_the_checked_fix_reshapes_it() -> None:
    prediction = predict("skyrl", APART_8, cluster=Cluster(num_nodes=4, num_gpus_per_node=4))
    [finding] = prediction.errors
    assert finding.kind == FindingKind.PENDING and finding.role == "policy"
    assert all(rank.node is None for role in ("policy", "ref") for rank in prediction.of_role(role))
    assert dict(finding.fix) == {
        "trainer.placement.policy_num_nodes": "2", "trainer.placement.policy_num_gpus_per_node": "4",
        "trainer.placement.ref_num_nodes": "2", "trainer.placement.ref_num_gpus_per_node": "4",
    }  # fmt: skip
    fixed = predict("skyrl", [*APART_8, *(f"{key}={value}" for key, value in finding.fix)], cluster=Cluster(num_nodes=4, num_gpus_per_node=4))
    assert not fixed.errors and {rank.node for rank in fixed.of_role("policy")} == {2, 3}


def test_colocate_all_on_too_few_gpus_is_pending_with_no_fix() -> None:
    prediction = predict("skyrl", COLOCATED_4, cluster=Cluster(num_nodes=1, num_gpus_per_node=2))
    [finding] = prediction.errors
    assert finding.kind == FindingKind.PENDING and finding.fix == ()
    assert all(rank.node is None for rank in prediction.ranks)


def test_a_lone_actor_with_no_free_gpu_waits_forever() -> None:
    overrides = ["trainer.placement.colocate_all=false", "trainer.placement.colocate_policy_ref=false", "trainer.placement.policy_num_nodes=2", "generator.num_inference_engines=2"]
    prediction = predict("skyrl", overrides, cluster=Cluster(num_nodes=1, num_gpus_per_node=4))
    assert [(finding.kind, finding.role, finding.count) for finding in prediction.errors] == [(FindingKind.PENDING, "ref", 1)]
    assert [rank.node for rank in prediction.of_role("ref")] == [None]


def test_an_engine_across_two_nodes_is_found_and_fixed_with_a_smaller_tensor_size() -> None:
    overrides = [*SIX_GPUS, "generator.num_inference_engines=3", "generator.inference_engine_tensor_parallel_size=2"]
    prediction = predict("skyrl", overrides, cluster=Cluster(num_nodes=2, num_gpus_per_node=3))
    [finding] = prediction.errors
    assert finding.kind == FindingKind.SPLIT_ENGINE and finding.node == 0
    assert finding.fix == (("generator.inference_engine_tensor_parallel_size", "1"), ("generator.num_inference_engines", "6"))


def test_an_engine_larger_than_any_node_spans_nodes_by_design() -> None:
    overrides = ["trainer.placement.colocate_all=false", "trainer.placement.colocate_policy_ref=false", "trainer.algorithm.use_kl_loss=false", "generator.inference_engine_tensor_parallel_size=16"]
    prediction = predict("skyrl", overrides, cluster=Cluster(num_nodes=3, num_gpus_per_node=8))
    assert not prediction.errors and any("by design" in note for note in prediction.notes)


def test_the_last_override_wins_and_plus_adds_a_key_skyrl_never_reads() -> None:
    prediction = predict("skyrl", ["generator.num_inference_engines=3", "generator.num_inference_engines=1", "+generator.retokenize_chat_history=true"])
    assert len(prediction.of_role("rollout")) == 1


@pytest.mark.parametrize(
    ("overrides", "says"),
    [
        (["trainer.placement.reward_num_nodes=2"], "Key 'reward_num_nodes' is not in struct"),
        (["generator.num_engines=2"], "did you mean"),
        (["+trainer.placement.colocate_all=false"], "Could not append"),
        (["~trainer.placement.colocate_all"], "deletes trainer.placement.colocate_all"),
        (["--config-name", "other"], "another base config"),
        (["--foo"], "unrecognized arguments"),
        (["trainer.placement.colocate_all=no"], "takes as true whatever it says"),
        (["trainer.placement.policy_num_nodes=0"], "from 1 to"),
        (["trainer.placement.policy_num_gpus_per_node=2"], "num_rollout_gpus (1) must be the same"),
        (["trainer.placement.colocate_all=false", "trainer.placement.policy_num_nodes=2"], "colocating policy and ref"),
        (["generator.backend=sglang", "generator.inference_engine_data_parallel_size=2", "trainer.placement.colocate_all=false"], "SGLang"),
        (["trainer.algorithm.advantage_estimator=gae"], "critic.model.path"),
        (["trainer.strategy=deepspeed"], "Unknown strategy type"),
    ],
)
def test_what_hydra_or_skyrl_refuses_is_refused_with_their_reason(overrides: list[str], says: str) -> None:
    with pytest.raises(PlacementError, match=None) as caught:
        predict("skyrl", overrides)
    assert says in str(caught.value)


def test_another_release_is_refused_by_name() -> None:
    with pytest.raises(PlacementError, match="reads skyrl-train 0.3.1 and 0.4.0"):
        predict("skyrl", [], release="0.3.0")


def test_release_0_3_1_defaults_to_four_gpus_and_a_tensor_4_engine() -> None:
    prediction = predict("skyrl", [], release="0.3.1")
    assert prediction.release == "0.3.1" and len(prediction.of_role("policy")) == 4
    assert {rank.engine for rank in prediction.of_role("rollout")} == {0}
    with pytest.raises(PlacementError, match="SkyRL 0.3.1's generator has no such key"):
        predict("skyrl", ["generator.served_model_name=x"], release="0.3.1")


def test_a_script_with_assigning_defaults_is_read(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text(': "${NUM_GPUS:=2}"\nuv run --isolated -m skyrl_train.entrypoints.main_base \\\n  trainer.placement.policy_num_gpus_per_node=$NUM_GPUS \\\n'
                      '  trainer.placement.ref_num_gpus_per_node=$NUM_GPUS \\\n  generator.num_inference_engines=$NUM_GPUS $@\necho done\n')  # fmt: skip
    assert len(predict("skyrl", script).of_role("policy")) == 2


#: SkyRL 0.4.0's examples that SkyRL itself refuses at that tag (their scripts ran on other releases).
REFUSED_EXAMPLES = {
    "lora/run_qwen2_5_0.5b_gsm8k_ppo_lora.sh": "num_critic_gpus must be the same",
    "text_to_sql/run_sql_fsdp_2node.sh": "Key 'reward_num_nodes' is not in struct",
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_example_script_is_read_or_refused_with_skyrls_reason(name: str) -> None:
    if name in REFUSED_EXAMPLES:
        with pytest.raises(PlacementError) as caught:
            predict("skyrl", EXAMPLES[name])
        assert REFUSED_EXAMPLES[name] in str(caught.value)
        return
    prediction = predict("skyrl", EXAMPLES[name])
    assert not prediction.errors  # on the cluster they state, SkyRL's own examples run
    assert all(rank.node is not None for rank in prediction.ranks)


def test_improve_offers_the_users_overrides_when_skyrl_already_lands_the_solvers_layout() -> None:
    offered = improve("skyrl", COLOCATED_4, cluster=Cluster(num_nodes=1, num_gpus_per_node=4))
    assert offered.arguments == tuple(COLOCATED_4) and not offered.cannot_express
    assert set(offered.solution.components) == {"policy", "ref", "rollout"}


def test_improve_says_why_skyrl_cannot_be_asked_for_the_solvers_layout() -> None:
    """The solver puts the policy on node 0 and the engines on node 1; SkyRL's keys name no node,
    and Ray gives the engines (asked first) node 0: the offered overrides are dropped, with why."""
    overrides = ["trainer.placement.colocate_all=false", "trainer.placement.policy_num_gpus_per_node=4", "trainer.placement.ref_num_gpus_per_node=4", "generator.num_inference_engines=4"]
    offered = improve("skyrl", overrides, cluster=Cluster(num_nodes=2, num_gpus_per_node=4))
    assert offered.arguments is None
    assert {sentence.split(":")[0] for sentence in offered.cannot_express} == {"SkyRL would not place it so"}
    assert {p.cluster_node_rank for p in offered.solution.placements("policy")} == {0}


def test_improve_on_a_cluster_with_no_placement_says_so() -> None:
    overrides = [*SIX_GPUS, "generator.num_inference_engines=3", "generator.inference_engine_tensor_parallel_size=2"]
    with pytest.raises(InfeasiblePlacementError, match="room for 2 of rollout's 3 groups"):
        improve("skyrl", overrides, cluster=Cluster(num_nodes=2, num_gpus_per_node=3))


def test_the_command_line_predicts_skyrl_as_json() -> None:
    result = CliRunner().invoke(main, ["predict", "SkyRL", "--format", "json", "--", *APART_8])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["framework"] == "SkyRL" and len(document["roles"]["rollout"]) == 8 and len(document["roles"]["policy"]) == 8


def test_skyrls_batch_size_rule_refuses_a_six_gpu_policy_with_its_defaults_and_offers_sizes_that_split() -> None:
    six = ["trainer.placement.policy_num_gpus_per_node=6", "trainer.placement.ref_num_gpus_per_node=6", "generator.num_inference_engines=6"]
    with pytest.raises(PlacementError, match=r"policy 6, ref 6 .*AssertionError: normalized policy_train_batch_size_per_gpu .* 853 should be divisible by .* 213; with (.*) the batches") as refused:
        predict("skyrl", six)
    fix = str(refused.value).split("; with ", 1)[1].split(" the batches", 1)[0].split()
    assert fix == ["trainer.train_batch_size=1032", "trainer.policy_mini_batch_size=258"]
    assert len(predict("skyrl", [*six, *fix]).of_role("policy")) == 6  # the fix is read and placed


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        (["trainer.micro_train_batch_size_per_gpu=3"], r"1280 should be divisible by micro_train_batch_size_per_gpu 3; with trainer\.train_batch_size=1020 trainer\.policy_mini_batch_size=255"),
        (["trainer.policy_mini_batch_size=0"], r"policy_mini_batch_size must be greater than 0"),
        (["trainer.train_batch_size=100", "trainer.policy_mini_batch_size=40"], r"train_batch_size 100 should be divisible by policy_mini_batch_size 40"),
        (["trainer.policy.sequence_parallel_size=2"], r"policy_dp_size = 1 // 2, which is 0 \(ZeroDivisionError\)"),
        (["trainer.strategy=megatron", "trainer.policy.megatron_config.tensor_model_parallel_size=2"], r"policy_world_size 1 should be divisible by \(pp \* cp \* tp\) 2"),
        (["trainer.train_batch_size=1.5"], r"trainer\.train_batch_size=1\.5: SkyRL computes batch splits with it; give a whole number up to 16777216"),
    ],
)
def test_the_other_batch_size_asserts_are_skyrls_in_its_words(overrides: list[str], words: str) -> None:
    with pytest.raises(PlacementError, match=words):
        predict("skyrl", overrides)
