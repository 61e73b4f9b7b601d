"""``solve --format layout``: the library's layout report under a heading, and errors as every format gives them."""

from __future__ import annotations

from helpers import MODELS, cli_runner

from solver_placement import layout_report, solve
from solver_placement._cli import main


def test_solve_format_layout_prints_the_report_and_refuses_an_unknown_component_alone() -> None:
    model = MODELS / "api_node_groups.yaml"
    result = cli_runner().invoke(main, ["solve", str(model), "--format", "layout", "-c", "env", "-c", "agent"])
    assert result.exit_code == 0, result.output
    heading = f"{model}: 4 nodes, GPUs per node [8, 8, 0, 0], custom hardware: robot; optimal"
    assert result.stdout == f"{heading}\n{layout_report(solve(model), ['env', 'agent'])}\n"
    assert result.stderr == ""
    unknown = cli_runner().invoke(main, ["solve", str(model), "--format", "layout", "-c", "nope"])
    assert unknown.exit_code == 2 and unknown.stdout == ""
    assert unknown.stderr == "error: unknown component 'nope'; known components: actor, rollout, env, agent\n"
