"""verl's trainer config on the command line: a pool the cluster cannot hold is no placement (exit
status 3, as for any infeasible placement), said in verl's own keys with a fix found by solving;
a config whose verl release cannot be told is bad input (status 2) naming ``verl_version``."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import ROOT, cli_runner

from solver_placement._cli import main

DATA = ROOT / "tests" / "data" / "verl"


def test_a_verl_pool_that_does_not_fit_exits_3_in_the_users_keys(tmp_path: Path) -> None:
    config = tmp_path / "ppo.yaml"
    config.write_text((DATA / "ppo_trainer_main.yaml").read_text() + "cluster: {num_nodes: 2, num_gpus_per_node: [8, 4]}\n")
    result = cli_runner().invoke(main, ["solve", str(config), "trainer.nnodes=2"])
    assert result.exit_code == 3, result.output
    assert "global_pool needs 2 placement groups of 8 GPUs" in result.stderr
    assert "trainer.nnodes=2: with trainer.nnodes=1 it places (checked by solving with it)" in result.stderr
    assert cli_runner().invoke(main, ["solve", str(config), "trainer.nnodes=1"]).exit_code == 0  # the fix, as offered


def test_a_config_no_release_can_be_told_for_exits_2_asking_for_verl_version(tmp_path: Path) -> None:
    config = tmp_path / "ppo.yaml"
    config.write_text("trainer: {nnodes: 1, n_gpus_per_node: 8}\nactor_rollout_ref: {}\n")
    result = cli_runner().invoke(main, ["solve", str(config)])
    assert result.exit_code == 2 and "state verl_version: one of 0.4.1, 0.5.0, 0.6.1, 0.7.1, 0.8.0, 0.9.0, 0.9.1, main" in result.stderr
    assert cli_runner().invoke(main, ["solve", str(config), "+verl_version=0.8.0"]).exit_code == 0


def test_solve_and_explain_state_verls_mapping_with_the_roles_it_never_starts() -> None:
    grpo = [str(DATA / "ppo_trainer_v0.4.1.yaml"), "algorithm.adv_estimator=grpo", "+verl_version=0.4.1"]
    line = "; verl 0.4.1 maps actor_rollout -> global_pool, critic -> global_pool (never started)"
    explained = cli_runner().invoke(main, ["explain", *grpo]).stdout
    assert explained.count("\n") == 1 and explained.endswith(f"8 of 8 GPUs in use; optimal{line}\n")
    assert cli_runner().invoke(main, ["solve", *grpo]).stdout.splitlines()[0].endswith(line)
    document = json.loads(cli_runner().invoke(main, ["solve", str(DATA / "ppo_trainer_main.yaml"), "--format", "json"]).stdout)
    assert document["verl"] == {
        "versions": ["0.9.0", "0.9.1", "main"], "mapping": {"actor_rollout": "global_pool", "critic": "global_pool", "rm": "global_pool"},
        "never_started": ["rm"],
    }  # fmt: skip
    assert "verl" not in json.loads(cli_runner().invoke(main, ["solve", str(ROOT / "models" / "quickstart.yaml"), "--format", "json"]).stdout)
