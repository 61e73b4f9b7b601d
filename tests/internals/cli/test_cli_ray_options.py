"""The live-cluster options of the commands that take a model, where no Ray is needed to refuse them."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from solver_placement._cli import main

COMPONENTS_ONLY = "cluster:\n  component_placement:\n    a: 0-1\n"
STATED = "cluster:\n  num_nodes: 1\n  num_gpus_per_node: 2\n  component_placement:\n    a: 0-1\n"


def run(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.parametrize("command", ["solve", "explain", "launch"])
def test_every_command_that_takes_a_model_offers_the_live_cluster_options(command: str) -> None:
    shown = " ".join(run(command, "--help").output.split())
    for option in ("--ray ADDRESS", "--local", "--connect-timeout", "--group-by-label KEY", "is checked against the live one"):
        assert option in shown


@pytest.mark.parametrize(
    ("text", "options", "message"),
    [
        (STATED, ["--group-by-label", "zone"], "--group-by-label only apply with --ray ADDRESS or --local"),
        (STATED, ["--connect-timeout", "3"], "--connect-timeout only apply with --ray ADDRESS or --local"),
        (STATED, ["--ray", "127.0.0.1:1", "--local"], "give --ray ADDRESS or --local, not both"),
        (STATED, ["--local", "--group-by-label", "zone"], "states its cluster (cluster.num_nodes); --group-by-label only shapes a cluster read from Ray"),
        (COMPONENTS_ONLY, ["--local"], "--local starts an embedded Ray shaped like the model, but"),
    ],
)
def test_option_combinations_that_cannot_work_are_refused_before_any_ray(tmp_path: Path, text: str, options: list[str], message: str) -> None:
    model = tmp_path / "m.yaml"
    model.write_text(text)
    result = run("solve", model, *options)
    assert result.exit_code == 2 and message in " ".join(result.output.split()), result.output


def test_a_dead_ray_address_is_a_launch_error_within_the_connect_timeout(tmp_path: Path) -> None:
    model = tmp_path / "m.yaml"
    model.write_text(COMPONENTS_ONLY)
    result = run("solve", model, "--ray", "127.0.0.1:1", "--connect-timeout", "2")
    assert result.exit_code == 5
    assert "error: no Ray answers at 127.0.0.1:1 (address='127.0.0.1:1') within 2 s" in result.output
