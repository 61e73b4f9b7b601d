"""NeMo-RL's YAML read as ``nemo_rl/utils/config.py`` and ``grpo.setup`` read it (commit 7ea279ab):
``defaults:`` parents merged first, ``_override_`` replacing a section, ``key=value`` overrides after,
NeMo-RL's own refusals in its words, and what is not modelled refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest
from nemo_rl_configs import write_configs

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import PlacementConfigError
from solver_placement._frontends.nemo_rl.keys import read_nemo_rl
from solver_placement._prediction.launch_input import LaunchInput, launch_input
from solver_placement._prediction.predict import predict


def read(arguments: list[str]):  # type: ignore[no-untyped-def]
    return read_nemo_rl(launch_input(arguments), None)


def test_a_child_config_takes_its_parent_through_defaults_and_overrides_win(tmp_path: Path) -> None:
    child = write_configs(tmp_path)
    job = read(["--config", str(child)])
    assert (job.num_nodes, job.gpus_per_node, job.colocated, job.backend, job.engine_size) == (1, 8, True, "vllm", 1)
    job = read(["uv", "run", "examples/run_grpo.py", "--config", str(child), "cluster.num_nodes=2", "policy.generation.vllm_cfg.tensor_parallel_size=4", "cluster.num_nodes=3"])
    assert (job.num_nodes, job.engine_size, job.overrides[-1]) == (3, 4, "cluster.num_nodes=3")
    # argparse's prefix matching and --flag=value reach --config as run_grpo.py's parser does
    assert read(["--conf", str(child), "cluster.num_nodes=2"]).num_nodes == 2
    assert read([f"--config={child}"]).gpus_per_node == 8


def test_a_list_of_parents_merges_in_order_and_override_replaces_a_section(tmp_path: Path) -> None:
    write_configs(tmp_path)
    (tmp_path / "big.yaml").write_text("cluster: {gpus_per_node: 4, num_nodes: 2}\n")
    (tmp_path / "sub").mkdir()
    child = tmp_path / "sub" / "run.yaml"
    child.write_text("defaults:\n  - ../grpo_math_1B.yaml\n  - ../big.yaml\npolicy:\n  generation:\n    colocated:\n      _override_: true\n      enabled: false\n      resources: {num_nodes: 1, gpus_per_node: 4}\n")
    job = read(["--config", str(child)])
    assert (job.num_nodes, job.gpus_per_node, job.colocated, job.inference_nodes, job.inference_gpus_per_node) == (2, 4, False, 1, 4)


def test_a_yaml_file_given_directly_is_read_with_its_own_loader(tmp_path: Path) -> None:
    child = write_configs(tmp_path)
    prediction = predict("nemo-rl", child)
    assert prediction.cluster.describe() == "1 node, 8 GPUs each"
    assert [rank.gpus for rank in prediction.of_role("generation")] == [(gpu,) for gpu in range(8)]


@pytest.mark.parametrize(
    ("override", "words"),
    [
        ("++cluster.segment_size=0", "cluster.segment_size=0: it must be a whole number of at least 1, or null"),
        ("policy.generation.backend=trtllm", "policy.generation.backend='trtllm'"),
        ("policy.generation.backend=sglang", "policy.generation.sglang_cfg.sglang_server_config.num_gpus is not set"),
        ("++on_policy_distillation.enabled=true", "on_policy_distillation is set"),
        ("cluster.num_nodes=0", "cluster.num_nodes=0: it must be a whole number of at least 1"),
        ("policy.generation.colocated.enabled=maybe", "colocated.enabled is 'maybe'"),
    ],
)
def test_what_decides_placement_unread_or_invalid_is_refused_by_name(tmp_path: Path, override: str, words: str) -> None:
    child = write_configs(tmp_path)
    with pytest.raises(PlacementConfigError, match=words.replace("(", r"\(").replace(".", r"\.").replace("+", r"\+")):
        read(["--config", str(child), override])


def test_nemo_rl_s_own_asserts_are_refused_with_its_message(tmp_path: Path) -> None:
    child = write_configs(tmp_path)
    apart = ["--config", str(child), "policy.generation.colocated.enabled=false"]
    with pytest.raises(PlacementConfigError, match="gpus_per_node must be explicitly set to a value > 0 when policy_nodes = 1"):
        predict("nemo-rl", apart)
    with pytest.raises(PlacementConfigError, match="No enough GPUs for training"):
        predict("nemo-rl", [*apart, "policy.generation.colocated.resources.gpus_per_node=8"])
    with pytest.raises(PlacementConfigError, match="must be explicitly set and equal to cluster.gpus_per_node"):
        predict("nemo-rl", [*apart, "cluster.num_nodes=2", "policy.generation.colocated.resources.num_nodes=1", "policy.generation.colocated.resources.gpus_per_node=4"])
    with pytest.raises(PlacementConfigError, match="requires train_nodes > 0 and inference_nodes > 0"):
        predict("nemo-rl", [*apart, "cluster.num_nodes=2", "policy.generation.colocated.resources.num_nodes=2", "policy.generation.colocated.resources.gpus_per_node=8"])


def test_a_release_other_than_the_commit_read_is_refused(tmp_path: Path) -> None:
    child = write_configs(tmp_path)
    with pytest.raises(PlacementConfigError, match="reads its code at commit 7ea279ab only"):
        predict("nemo-rl", ["--config", str(child)], release="v0.4.0")
    assert predict("nemo-rl", ["--config", str(child)], release="7ea279abfbeb", cluster=Cluster(num_nodes=1, num_gpus_per_node=8)).release == "7ea279ab"


def test_defaults_that_cycle_stop_at_the_limit(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("defaults: b.yaml\n")
    (tmp_path / "b.yaml").write_text("defaults: a.yaml\n")
    with pytest.raises(PlacementConfigError, match="more than 32 files through defaults"):
        read_nemo_rl(LaunchInput(arguments=("--config", str(tmp_path / "a.yaml"))), None)


def test_sft_dpo_and_rm_configs_train_one_policy_on_whole_gpus_and_ppo_is_refused_by_name(tmp_path: Path) -> None:
    for algorithm in ("sft", "dpo", "rm"):
        config = tmp_path / f"{algorithm}.yaml"
        config.write_text(f"{algorithm}: {{max_num_steps: 1}}\npolicy: {{dtensor_cfg: {{tensor_parallel_size: 2}}}}\ncluster: {{num_nodes: 2, gpus_per_node: 4}}\n")
        prediction = predict("nemo-rl", ["uv", "run", f"examples/run_{algorithm}.py", "--config", str(config)])
        assert prediction.roles == ["policy"] and {r.gpu_share for r in prediction.ranks} == {1.0}
        assert [r.engine for r in prediction.of_role("policy")] == [rank // 2 for rank in range(8)]
        assert any(f"{algorithm}.setup" in note for note in prediction.notes)
    ppo = tmp_path / "ppo.yaml"
    ppo.write_text("ppo: {}\ncluster: {num_nodes: 1, gpus_per_node: 8}\n")
    with pytest.raises(PlacementConfigError, match=r"a ppo config .*ppo\.py lines 535-710.*does not model"):
        predict("nemo-rl", ["--config", str(ppo)])
