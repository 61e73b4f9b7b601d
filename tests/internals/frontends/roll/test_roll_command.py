"""``solver-placement predict roll``: a ROLL YAML (its Hydra ``defaults:`` composed as ROLL's start
scripts compose it) predicted from the command line, errors exiting 3, and ``--better``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import cli_runner

from solver_placement._cli import main
from solver_placement._prediction.predict import predict

SHARED_NODE = "cluster:\n  num_nodes: 2\n  num_gpus_per_node: [4, 32]\n"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_predict_prints_every_worker_and_exits_3_on_an_error(tmp_path: Path) -> None:
    config = write(tmp_path, "rlvr.yaml", "actor_train:\n  device_mapping: list(range(0,8))\n  strategy_args: {strategy_name: megatron_train}\n")
    cluster = write(tmp_path, "cluster.yaml", SHARED_NODE)
    result = cli_runner().invoke(main, ["predict", "roll", "--input", str(config), "--cluster", str(cluster)])
    assert result.exit_code == 3, result.output
    lines = result.output.splitlines()
    assert lines[0] == "ROLL 0.3.0 on 2 nodes, GPUs per node [4, 32]"
    assert lines[2].split() == ["actor_train", "0", "1", "0", "0", "0.01", "-"]
    assert lines[6].split() == ["actor_train", "4", "1", "4", "0", "0.01", "-"]
    assert any(line.startswith("error: actor_train (node 1): two ranks on one GPU") for line in lines)


def test_predict_better_offers_device_mappings_as_json(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        "rlvr.yaml",
        "actor_train:\n  device_mapping: list(range(0,12))\nactor_infer:\n  device_mapping: list(range(0,12))\n  strategy_args: {strategy_name: vllm, strategy_config: {tensor_parallel_size: 2}}\n",
    )
    result = cli_runner().invoke(main, ["predict", "roll", "--input", str(config), "--better", "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert [finding["kind"] for finding in document["findings"]] == ["reserved GPUs idle"]
    assert len(document["roles"]["actor_infer"]) == 6
    assert sorted(word.split("=")[0] for word in document["better"]["arguments"]) == ["actor_infer.device_mapping", "actor_train.device_mapping"]


def test_a_defaults_list_composes_as_rolls_hydra_does(tmp_path: Path) -> None:
    if not os.environ.get("SOLVER_PLACEMENT_REQUIRE_HYDRA"):
        pytest.importorskip("hydra")
    write(tmp_path, "config/envs.yaml", "rewards:\n  math:\n    world_size: 2\n")
    config = write(tmp_path, "demo/agentic.yaml", "defaults:\n  - ../config/envs@_here_\nactor_train:\n  device_mapping: list(range(0,4))\n")
    prediction = predict("roll", config)
    assert prediction.roles == ["rewards.math", "actor_train"]  # the group first: the primary's _self_ comes last
    assert [rank.node for rank in prediction.of_role("rewards.math")] == [0, 0]


def test_the_docs_example_prints_what_the_page_shows(tmp_path: Path) -> None:
    """docs/frameworks/roll.md's console block is the command's real output for the files it describes."""
    page = (Path(__file__).resolve().parents[4] / "docs" / "frameworks" / "roll.md").read_text()
    block = page.split("```console\n", 1)[1].split("```", 1)[0].splitlines()
    write(tmp_path, "rlvr.yaml", "actor_train:\n  device_mapping: list(range(0,8))\n  strategy_args:\n    strategy_name: megatron_train\n")
    write(tmp_path, "cluster.yaml", SHARED_NODE)
    command = block[0].removeprefix("$ solver-placement ").split()
    result = cli_runner().invoke(main, [word if not word.endswith(".yaml") else str(tmp_path / word) for word in command])
    assert result.exit_code == 3 and result.output.splitlines() == block[1:]
