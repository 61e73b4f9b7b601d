"""``solver-placement launch`` (dry run and a real run) and ``explain`` with suggestions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import ROOT

from solver_placement.cli import main

pytestmark = pytest.mark.ray



def run(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_dry_run_prints_the_plan_without_ray() -> None:
    result = run("launch", ROOT / "models" / "quickstart.yaml", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "20 bundles in one placement group, 36 processes" in result.output
    plan = json.loads(run("launch", ROOT / "models" / "quickstart.yaml", "--format", "json").output)
    rollout = plan["processes"]["rollout"]
    assert [p["env"]["CUDA_VISIBLE_DEVICES"] for p in rollout[:4]] == ["0,2", "1,3", "4,6", "5,7"]
    assert {p["env"]["RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"] for p in rollout} == {"1"}
    assert [p["env"]["CUDA_VISIBLE_DEVICES"] for p in plan["processes"]["env"]] == [""] * 4
    assert len(plan["bundles"]) == 20 and plan["bundles"][0]["resources"] == {"CPU": 4.0, "GPU": 1.0}  # actor 0, rollout 0, reward 0-1


def test_run_launches_on_an_embedded_ray_and_checks_every_process(tmp_path: Path) -> None:
    model = tmp_path / "small.yaml"
    model.write_text(
        "cluster:\n  num_nodes: 2\n  num_gpus_per_node: [2, 0]\n  component_placement:\n"
        "    rollout:\n      resources: all\n      hardware_per_process: 2\n"
        "    env:\n      node_group: node\n      placement: '1:0-1'\n"
    )
    result = run("launch", model, "--run")
    assert result.exit_code == 0, result.output
    assert "3 of 3 processes ran on exactly their planned node and devices; reservation released" in result.output
    assert "0,1" in result.output


def test_explain_suggests_a_checked_fix(tmp_path: Path) -> None:
    model = tmp_path / "tight.yaml"
    model.write_text(
        "cluster:\n  num_nodes: 2\n  num_gpus_per_node: 4\n  component_placement:\n"
        "    actor: 0-3\n    rollout:\n      processes: 6\n      exclusive_with: [actor]\n"
    )
    result = CliRunner().invoke(main, ["explain", str(model)])
    assert result.exit_code == 3
    assert "rollout is exclusive with actor" in result.output
    assert "suggestion: rollout: processes 4 instead of 6 fits" in result.output


def test_auto_prints_the_reference_split_and_a_ready_block() -> None:
    result = run("auto", ROOT / "models" / "auto_reference_16x8.yaml", "--top-k", "2")
    assert result.exit_code == 0, result.output
    assert "disaggregated, predicted 289.096 s per iteration (proven optimal)" in result.output
    assert "  rollout: 0-79\n  inference: 80-95\n  actor: 96-127" in result.output
    block = run("auto", ROOT / "models" / "auto_reference_16x8.yaml", "--format", "yaml").output
    assert "component_placement:\n    rollout: 0-79" in block
