"""OpenRLHF's layout checked node by node: each finding it can produce, with a fix in its own flags
that ``predict`` keeps only after predicting it, and the findings no flag fixes."""

from __future__ import annotations

import pytest
from helpers import ROOT, cli_runner
from openrlhf_cases import MODELS_0_11, MODELS_FLAT, groups

from solver_placement import Cluster, FindingKind, FrameworkLayoutError, predict
from solver_placement._cli import main
from solver_placement._prediction.findings import fix_text
from solver_placement._prediction.flags import with_flags

#: Every group on its own GPUs: 4 + 4 (actor, ref) + 4 + 4 (critic, reward) + 4 (vLLM) = 20 GPUs.
SEPARATE = [
    "--vllm.num_engines",
    "2",
    "--vllm.tensor_parallel_size",
    "2",
    *groups(("actor", 4), ("ref", 4), ("critic", 4), ("reward", 4)),
    *MODELS_0_11,
]


def _fixed_clears(flags: list[str], cluster: Cluster, kind: FindingKind) -> tuple[str, ...]:
    """The checked fix of the one ``kind`` finding, after showing the fixed flags clear it."""
    prediction = predict("openrlhf", flags, cluster=cluster)
    [finding] = [finding for finding in prediction.findings if finding.kind is kind]
    assert finding.fix, finding.describe()
    after = predict("openrlhf", list(with_flags(flags, finding.fix)), cluster=cluster)
    assert not [other for other in after.findings if other.kind is kind] and not after.errors
    return tuple(fix_text(finding.fix).split())


def test_a_group_that_cannot_fit_is_pending_forever_and_colocation_fixes_it() -> None:
    cluster = Cluster(num_nodes=2, num_gpus_per_node=8)
    prediction = predict("openrlhf", SEPARATE, cluster=cluster)
    [pending] = prediction.errors
    assert (pending.kind, pending.role, pending.node, pending.count) == (FindingKind.PENDING, "reward", None, 4)
    assert "0 GPUs free (node 0: 0, node 1: 0)" in pending.message and "waits in pg.ready() forever" in pending.message
    assert _fixed_clears(SEPARATE, cluster, FindingKind.PENDING) == ("--train.colocate_actor_ref",)
    with pytest.raises(FrameworkLayoutError, match="reward: pending forever"):
        prediction.check()


def test_a_default_size_ref_that_cannot_fit_is_fixed_by_colocating_it_at_the_actor_s_size() -> None:
    # the ref keeps OpenRLHF's default 8 GPUs; the actor (4) and vLLM (4) take both 4-GPU nodes
    flags = ["--vllm.num_engines", "2", "--vllm.tensor_parallel_size", "2", *groups(("actor", 4)), "--algo.kl.init_coef", "0.01", *MODELS_0_11]
    cluster = Cluster(num_nodes=2, num_gpus_per_node=4)
    pending = [finding for finding in predict("openrlhf", flags, cluster=cluster).errors if finding.role == "ref"]
    assert [(finding.kind, finding.count) for finding in pending] == [(FindingKind.PENDING, 8)]
    fix = _fixed_clears(flags, cluster, FindingKind.PENDING)
    assert "--ref.num_gpus_per_node" in fix and fix[fix.index("--ref.num_gpus_per_node") + 1] == "4", fix


def test_a_pending_group_stalls_every_group_after_it() -> None:
    prediction = predict("openrlhf", SEPARATE, cluster=Cluster(num_nodes=1, num_gpus_per_node=6))
    assert [finding.role for finding in prediction.errors] == ["actor"]  # vLLM took 4 of 6; the actor's 4 never fit
    assert {rank.role for rank in prediction.ranks if rank.node is None} == {"actor", "ref", "critic", "reward"}
    assert "so the ref, critic, reward groups never start" in prediction.errors[0].message


def test_an_engine_split_across_nodes_is_found_and_fewer_engines_fix_it() -> None:
    flags = ["--vllm.num_engines", "3", "--vllm.tensor_parallel_size", "4", *groups(("actor", 4)), "--reward.remote_url", "r", "--algo.kl.init_coef", "0",
             "--algo.advantage.estimator", "rloo", "--rollout.n_samples_per_prompt", "2", "--actor.model_name_or_path", "m"]  # fmt: skip
    cluster = Cluster(num_nodes=3, num_gpus_per_node=6)
    prediction = predict("openrlhf", flags, cluster=cluster)
    [split] = prediction.errors
    assert (split.kind, split.role, split.node, split.count) == (FindingKind.SPLIT_ENGINE, "vllm", 0, 4)
    assert split.message == "engine 1 (4 ranks) spans nodes 0, 1"
    assert _fixed_clears(flags, cluster, FindingKind.SPLIT_ENGINE) == ("--vllm.num_engines", "1")


def test_hybrid_engines_are_fixed_by_a_smaller_tensor_parallel_size_that_keeps_the_gpus() -> None:
    flags = ["--actor.num_nodes", "2", *groups(("actor", 6)), "--vllm.num_engines", "3", "--vllm.tensor_parallel_size", "4", "--train.colocate_all",
             "--reward.remote_url", "r", "--algo.kl.init_coef", "0", "--algo.advantage.estimator", "rloo", "--rollout.n_samples_per_prompt", "2",
             "--actor.model_name_or_path", "m"]  # fmt: skip
    fix = _fixed_clears(flags, Cluster(num_nodes=2, num_gpus_per_node=6), FindingKind.SPLIT_ENGINE)
    assert fix == ("--vllm.tensor_parallel_size", "2", "--vllm.num_engines", "6")  # hybrid engines must fill the actor's 12 GPUs


def test_a_reward_group_without_a_model_holds_gpus_idle_a_warning_with_no_fix() -> None:
    flags = [
        *groups(("actor", 2), ("ref", 2), ("reward", 2)),
        "--vllm.num_engines",
        "2",
        "--algo.advantage.estimator",
        "reinforce",
        "--actor.model_name_or_path",
        "m",
    ]
    prediction = predict("openrlhf", flags, cluster=Cluster(num_nodes=1, num_gpus_per_node=8))
    [idle] = prediction.warnings
    assert (idle.kind, idle.role, idle.node, idle.count, idle.fix) == (FindingKind.IDLE_GPUS, "reward", 0, 2, ())
    assert "GPUs 6,7 are held by reward ranks that load no model" in idle.message
    prediction.check()  # a warning: the job runs


def test_0_7_0_engines_beyond_sixteen_bundles_split_by_ray_order_and_no_flag_fixes_it() -> None:
    flags = ["--vllm_num_engines", "12", "--vllm_tensor_parallel_size", "2", "--actor_num_nodes", "3", "--colocate_all_models",
             "--ref_num_nodes", "3", "--critic_num_nodes", "3", "--reward_num_nodes", "3", "--rollout_batch_size", "96", *MODELS_FLAT]  # fmt: skip
    cluster = Cluster(num_nodes=3, num_gpus_per_node=8)
    old = predict("openrlhf", flags, cluster=cluster, release="0.7.0")
    [split] = old.errors
    assert (split.kind, split.role, split.node, split.count, split.fix) == (FindingKind.SPLIT_ENGINE, "vllm", None, 12, ())
    assert "OpenRLHF#889" in split.message and "get_bundle_indices" in split.message
    assert predict("openrlhf", flags, cluster=cluster, release="0.10.1.post2").errors == ()


def test_the_cli_prints_the_table_findings_and_fix_and_exits_3() -> None:
    result = cli_runner().invoke(main, ["predict", "openrlhf", "--cluster", str(ROOT / "models" / "quickstart.yaml"), "--", *SEPARATE])
    assert result.exit_code == 3, result.output
    assert "error: reward: pending forever" in result.stdout and "fix: --train.colocate_actor_ref" in result.stdout
