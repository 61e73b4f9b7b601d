"""The README's main command: the CLI solves the quickstart model (in-process through click's
runner; ``python -m`` and the installed entry point are started as processes in ``test_cli.py``
and ``test_cli_user.py``)."""

import contextlib
import json
from pathlib import Path

from click.testing import Result
from helpers import ROOT, cli_runner

from solver_placement._cli import main


def run_cli(*args: str) -> Result:
    """The command run from the repository root, as the README runs it; an escaped exception is raised."""
    with contextlib.chdir(ROOT):
        result = cli_runner().invoke(main, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def test_solve_quickstart_table() -> None:
    result = run_cli("solve", "models/quickstart.yaml")
    assert result.exit_code == 0, result.stderr
    assert "rollout" in result.stdout and "0,2" in result.stdout


def test_solve_json_one_component() -> None:
    result = run_cli("solve", "models/quickstart.yaml", "--component", "rollout", "--format", "json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)["components"]
    assert list(data) == ["rollout"]
    assert [p["local_hardware_ranks"] for p in data["rollout"][:4]] == [[0, 2], [1, 3], [4, 6], [5, 7]]


def test_error_is_one_line_and_nonzero(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("cluster:\n  num_nodes: 1\n  num_gpus_per_node: 4\n  component_placement:\n    actor: 0-1:0-4\n")
    result = run_cli("solve", str(bad))
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert 'actor: segment "0-1:0-4"' in result.stderr
