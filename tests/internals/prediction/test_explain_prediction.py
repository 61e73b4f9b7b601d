"""``Prediction.explain()`` and ``solver-placement explain FRAMEWORK``: the rule behind every rank,
and every finding as cause -> effect -> checked fix, for each framework the library predicts.

Each case is a job that goes wrong on its cluster in a way users of that framework meet: a group
left pending (OpenRLHF), an engine split across nodes (NeMo-RL, SkyRL), two ranks on one GPU
(AReaL, ROLL), a server told another node's host and GPUs left idle (slime). The explanation must
cover every rank with a rule of that framework cited at the release read, name where the ranks
are exactly as the prediction has them, and give each finding a cause, the effect of its kind and
a fix that, applied to the input and predicted again, clears that finding.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from helpers import ROOT, cli_runner

from solver_placement import Cluster, Finding, FindingKind, PredictedRank, Prediction, PredictionExplanation, predict
from solver_placement._cli.app import main
from solver_placement._prediction.explanation import EFFECTS, where_ranks_are
from solver_placement._prediction.findings import fix_text
from solver_placement._prediction.frameworks import framework_named
from solver_placement._prediction.launch_input import launch_input

FRAMEWORKS = ROOT / "docs" / "frameworks"


@dataclass(frozen=True)
class Case:
    framework: str
    arguments: tuple[str, ...]
    gpus_per_node: tuple[int, ...] | None
    #: The finding the case is about: (kind, role), and whether a checked fix must exist.
    kind: FindingKind
    role: str
    fixed: bool = True
    #: Words every reason of the case cites (the release read).
    release_word: str = ""
    input_file: str | None = None


OPENRLHF_PENDING = (
    "--actor.num_gpus_per_node", "2", "--ref.num_gpus_per_node", "2", "--critic.num_gpus_per_node", "2", "--reward.num_gpus_per_node", "2",
    "--vllm.num_engines", "1", "--vllm.tensor_parallel_size", "2", "--actor.model_name_or_path", "m", "--reward.model_name_or_path", "rm",
)  # fmt: skip

CASES = {
    "openrlhf pending group": Case("openrlhf", OPENRLHF_PENDING, (8,), FindingKind.PENDING, "reward", release_word="OpenRLHF 0.11.2"),
    "slime host of another node": Case(
        "slime", ("--actor-num-gpus-per-node", "4", "--rollout-num-gpus", "8", "--rollout-num-gpus-per-engine", "4"), (4, 4, 4),
        FindingKind.WRONG_DEVICE, "rollout", release_word="slime 624b824a",
    ),
    "slime idle rollout GPUs": Case(
        "slime", ("--actor-num-gpus-per-node", "4", "--rollout-num-gpus", "6", "--rollout-num-gpus-per-engine", "4", "--num-gpus-per-node", "4"), (4, 4, 4),
        FindingKind.IDLE_GPUS, "rollout", release_word="slime 624b824a",
    ),
    "roll two node ranks on one node": Case(
        "roll", (), (4, 32), FindingKind.SHARED_GPU, "actor_train", fixed=False, release_word="ROLL 0.3.0", input_file=str(FRAMEWORKS / "roll_rlvr.yaml")
    ),
    "areal shared GPU": Case(
        "areal", ("examples/math/gsm8k_rl.py", "--config", str(ROOT / "tests/data/areal/gsm8k_grpo.yaml"), "scheduler.type=local", "rollout.backend=sglang:d4t2"),
        None, FindingKind.SHARED_GPU, "actor", release_word="AReaL 1.0.4",
    ),
    "nemo-rl split engine": Case(
        "nemo-rl", ("--config", str(FRAMEWORKS / "nemo_rl_grpo.yaml"), "cluster.num_nodes=1", "cluster.gpus_per_node=6", "policy.generation.vllm_cfg.tensor_parallel_size=3"), (4, 4),
        FindingKind.SPLIT_ENGINE, "generation", release_word="NeMo-RL 7ea279ab",
    ),
    "skyrl split engine": Case(
        "skyrl", ("trainer.placement.policy_num_gpus_per_node=6", "trainer.train_batch_size=48", "trainer.policy_mini_batch_size=12", "trainer.placement.ref_num_gpus_per_node=6", "generator.num_inference_engines=2",
                  "generator.inference_engine_tensor_parallel_size=3"), (4, 4, 4),
        FindingKind.SPLIT_ENGINE, "rollout", release_word="SkyRL 0.4.0",
    ),
}  # fmt: skip


def _cluster(case: Case) -> Cluster | None:
    return None if case.gpus_per_node is None else Cluster(num_nodes=len(case.gpus_per_node), num_gpus_per_node=list(case.gpus_per_node))


def _source(case: Case) -> list[str] | str:
    return case.input_file if case.input_file is not None else list(case.arguments)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_rank_is_placed_by_a_cited_rule_of_its_framework(name: str) -> None:
    case = CASES[name]
    prediction = predict(case.framework, _source(case), cluster=_cluster(case))
    explanation = prediction.explain()
    assert isinstance(explanation, PredictionExplanation)
    covered: dict[str, list[int]] = {}
    for entry in explanation.ranks:
        covered.setdefault(entry.role, []).extend(entry.ranks)
        assert entry.rule.startswith(case.release_word), (entry.role, entry.rule)  # a rule of the release read, never the fallback
        assert ".py" in entry.rule, entry.rule  # a file of the framework's code
        assert entry.where == where_ranks_are([rank for rank in prediction.of_role(entry.role) if rank.rank in entry.ranks])
    assert {role: sorted(ranks) for role, ranks in covered.items()} == {role: [rank.rank for rank in prediction.of_role(role)] for role in prediction.roles}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_finding_is_a_chain_of_cause_effect_and_a_fix_that_clears_it(name: str) -> None:
    case = CASES[name]
    prediction = predict(case.framework, _source(case), cluster=_cluster(case))
    chains = [chain for chain in prediction.explain().chains if (chain.finding.kind, chain.finding.role) == (case.kind, case.role)]
    assert chains, [f.describe() for f in prediction.findings]
    chain = chains[0]
    assert chain.rule.startswith(case.release_word) and chain.cause != chain.finding.message
    assert chain.effect == EFFECTS[case.kind]
    assert bool(chain.fix) == case.fixed
    if not case.fixed:
        return
    assert chain.fix.startswith(fix_text(chain.finding.fix)) and "checked" in chain.fix
    framework = framework_named(case.framework)
    fixed = framework.fixed(launch_input(_source(case), framework.reads_yaml), chain.finding.fix)
    again = predict(case.framework, list(fixed.arguments), cluster=prediction.cluster)
    assert (case.kind, case.role) not in {(finding.kind, finding.role) for finding in again.findings}


def test_openrlhf_names_each_vllm_engines_bundles_grouped_by_node() -> None:
    prediction = predict(
        "openrlhf",
        ["--actor.num_gpus_per_node", "8", "--vllm.num_engines", "2", "--vllm.tensor_parallel_size", "4", "--actor.model_name_or_path", "m", "--reward.remote_url", "http://rm"],
        cluster=Cluster(num_nodes=2, num_gpus_per_node=8),
    )
    engines = [entry for entry in prediction.explain().ranks if entry.role == "vllm"]
    assert [entry.ranks for entry in engines] == [(0, 1, 2, 3), (4, 5, 6, 7)]
    assert engines[1].why.startswith("vLLM engine 1 takes bundles 4-7 of vLLM's own PACK placement group") and "grouped by node" in engines[1].why
    assert "get_bundle_indices" in engines[1].rule


def test_openrlhf_070_says_engines_take_consecutive_bundles() -> None:
    prediction = predict(
        "openrlhf",
        ["--actor_num_gpus_per_node", "4", "--vllm_num_engines", "2", "--vllm_tensor_parallel_size", "2", "--pretrain", "m", "--remote_rm_url", "http://rm", "--advantage_estimator", "reinforce_baseline", "--n_samples_per_prompt", "2"],
        release="0.7.0",
    )
    engine = next(entry for entry in prediction.explain().ranks if entry.role == "vllm")
    assert "consecutive" in engine.why and engine.rule == "OpenRLHF 0.7.0 openrlhf/trainer/ray/vllm_engine.py:159 create_vllm_engines"


def test_text_lists_roles_then_chains_and_json_holds_the_same() -> None:
    case = CASES["openrlhf pending group"]
    explanation = predict(case.framework, _source(case), cluster=_cluster(case)).explain()
    text = explanation.text()
    assert text.splitlines()[0] == "OpenRLHF 0.11.2 on 1 node, 8 GPUs each"
    assert "reward:\n  - ranks 0-1 -> pending (never placed): " in text
    assert "error: reward: pending forever:" in text and "\n  cause: " in text and "\n  effect: " in text and "\n  fix: --train.colocate_actor_ref (checked: " in text
    document = explanation.as_dict()
    assert [finding["kind"] for finding in document["findings"]] == ["pending forever"]
    assert document["findings"][0]["fix_flags"] == [["--train.colocate_actor_ref", ""]]
    assert {entry["role"] for entry in document["ranks"]} == {"vllm", "actor", "ref", "critic", "reward"}


def test_a_layout_without_findings_has_no_chains_and_exits_0() -> None:
    arguments = ["--actor.num_gpus_per_node", "4", "--vllm.num_engines", "4", "--actor.model_name_or_path", "m", "--reward.remote_url", "http://rm"]
    result = cli_runner().invoke(main, ["explain", "openrlhf", "--", *arguments])
    assert result.exit_code == 0, result.stderr
    assert "error:" not in result.stdout and "warning:" not in result.stdout
    assert "vllm:\n  - ranks 0-3 -> node 0, GPUs 0-3: engine i takes bundle i of vLLM's own PACK placement group" in result.stdout


def test_cli_explains_a_framework_in_json_and_exits_3_on_errors() -> None:
    case = CASES["skyrl split engine"]
    cluster = ["--cluster", str(FRAMEWORKS / "cluster_3x4.yaml")]
    result = cli_runner().invoke(main, ["explain", "SkyRL", *cluster, "--format", "json", "--", *case.arguments])
    assert result.exit_code == 3, result.stderr
    document = json.loads(result.stdout)
    assert document["command"] == "explain" and document["framework"] == "SkyRL" and document["cluster"] == "3 nodes, 4 GPUs each"
    split = [finding for finding in document["findings"] if finding["kind"] == "engine split across nodes"]
    assert split and split[0]["fix"].startswith("generator.inference_engine_tensor_parallel_size=1")


def test_cli_explain_of_a_config_file_is_unchanged() -> None:
    result = cli_runner().invoke(main, ["explain", str(ROOT / "models" / "quickstart.yaml")])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("quickstart.yaml") or "quickstart" in result.stdout.splitlines()[0]


def test_cli_explain_of_a_framework_needs_its_input() -> None:
    result = cli_runner().invoke(main, ["explain", "slime"])
    assert result.exit_code == 2
    assert "give slime's flags after -- or a file with --input" in result.stderr


def test_roll_says_where_a_node_rank_landed_and_what_its_workers_are_told() -> None:
    case = CASES["roll two node ranks on one node"]
    entries = [entry for entry in predict(case.framework, _source(case), cluster=_cluster(case)).explain().ranks if entry.role == "actor_train"]
    assert [(entry.ranks, entry.where) for entry in entries] == [
        ((0, 1, 2, 3), "node 1, GPUs 0-3"),
        ((4, 5, 6, 7), "node 1, GPUs 4-7 (CUDA_VISIBLE_DEVICES 0,1,2,3)"),
    ]
    assert "first device is on node rank 1" in entries[1].why and "roll/distributed/executor/cluster.py:115-139" in entries[1].rule


def test_ranks_and_findings_a_front_end_gives_no_rule_for_are_still_explained() -> None:
    """A framework without ``explain`` (or a role its rules skip): every rank gets a plain reason
    with where it landed, and each finding its own message as the cause."""
    ranks = (PredictedRank("trainer", 0, 0, (0,), ("0",)), PredictedRank("trainer", 1, 1, (0,), ("0",)), PredictedRank("trainer", 2, None, (), ()))
    finding = Finding(FindingKind.PENDING, "trainer", None, 1, "rank 2 waits for a GPU")
    explanation = Prediction("Toy", "1.0", Cluster(num_nodes=2, num_gpus_per_node=1), ranks, (finding,)).explain()
    assert [(entry.ranks, entry.where, entry.rule) for entry in explanation.ranks] == [((0, 1, 2), "node 0, GPU 0; node 1, GPU 0; 1 rank pending", "")]
    assert "Toy's own code" in explanation.ranks[0].why and "  - ranks 0-2 -> node 0, GPU 0; node 1, GPU 0; 1 rank pending: placed by Toy's own code (the front end states no rule for these ranks)\n" in explanation.text()
    assert [(chain.cause, chain.rule, chain.fix) for chain in explanation.chains] == [("rank 2 waits for a GPU", "", "")]
    assert explanation.errors == explanation.chains
    assert "  fix: none found in the framework's own flags or keys that clears it when predicted again" in explanation.text()


def test_a_fix_is_called_checked_only_when_predict_checked_it() -> None:
    """A front end's own prediction proposes fixes; only ``predict`` checks them, and the chain says which."""
    case = CASES["openrlhf pending group"]
    framework = framework_named(case.framework)
    job = framework.read(launch_input(list(case.arguments)), None)
    proposed = framework.predict(job, Cluster(num_nodes=1, num_gpus_per_node=8)).explain()
    checked = predict(case.framework, list(case.arguments), cluster=Cluster(num_nodes=1, num_gpus_per_node=8)).explain()
    assert [chain.fix for chain in proposed.chains] == ["--train.colocate_actor_ref (proposed, not checked: solver_placement.predict checks every fix before it keeps it)"]
    assert [chain.fix.split(" (")[1][:8] for chain in checked.chains] == ["checked:"]


def test_cli_explains_a_yaml_input_on_a_stated_cluster() -> None:
    arguments = ["explain", "roll", "--input", str(FRAMEWORKS / "roll_rlvr.yaml"), "--cluster", str(FRAMEWORKS / "cluster_4_32.yaml")]
    result = cli_runner().invoke(main, arguments)
    assert result.exit_code == 3, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == ["ROLL 0.3.0 on 2 nodes, GPUs per node [4, 32]", "actor_train:"]
    assert lines[3].startswith("  - ranks 4-7 -> node 1, GPUs 4-7 (CUDA_VISIBLE_DEVICES 0,1,2,3): worker r takes device numbers")
    assert [line.split(":")[0] for line in lines if line.startswith(("error", "warning"))] == ["error", "error"]
