"""``explain --explain-time-limit``: the fixes get their own budget, on top of the solve's."""

from __future__ import annotations

from click.testing import CliRunner
from helpers import MODELS

from solver_placement._cli.app import main

FAMILY = MODELS / "infeasible"


def test_explain_names_the_counting_conflict_and_a_checked_fix() -> None:
    result = CliRunner().invoke(main, ["explain", str(FAMILY / "tp_granularity.yaml"), "--explain-time-limit", "30"])
    assert result.exit_code == 3
    assert "  - counting: the cluster has 16 nodes x 4 GPUs = 64 GPUs; room for 0 of actor's 4 groups of 8 GPUs" in result.output
    assert "suggestion: actor: tensor_parallel_size 4 instead of 8 fits" in result.output


def test_a_spent_explain_budget_leaves_the_conflicts_without_fixes() -> None:
    result = CliRunner().invoke(main, ["explain", str(FAMILY / "counting_exclusive.yaml"), "--explain-time-limit", "0.001"])
    assert result.exit_code == 3
    assert "reward is exclusive with actor (no shared hardware)" in result.output
    assert "suggestion:" not in result.output


def test_the_explain_budget_must_be_positive() -> None:
    result = CliRunner().invoke(main, ["explain", str(FAMILY / "counting_exclusive.yaml"), "--explain-time-limit", "0"])
    assert result.exit_code == 2
