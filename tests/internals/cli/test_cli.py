"""The CLI on every model: valid ones solve, plot and explain; invalid ones fail in one line with status 2
(bad input) or 3 (proven infeasible)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import Result
from helpers import INFEASIBLE, ROOT, cli_runner

from solver_placement import Statement, __version__
from solver_placement._cli import main
from solver_placement._solver.conflicts import compact_conflicts

VALID = sorted((ROOT / "models").glob("*.yaml"))
INVALID = sorted((ROOT / "models" / "invalid").glob("*.yaml"))
#: Models whose solve, plot and explain take seconds each: run with the slow tests (CI); the fast
#: tier solves them in the digest test and draws 128 nodes in ``tests/internals/plot``.
AT_SCALE = {"synthetic_128x8.yaml", "synthetic_1024x8.yaml"}


def run(*args: str) -> Result:
    return cli_runner().invoke(main, [str(arg) for arg in args])


def assert_one_line_error(result: Result, code: int = 2) -> str:
    assert result.exit_code == code, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr


def test_every_model_is_there() -> None:
    assert len(VALID) >= 20 and len(INVALID) >= 18


@pytest.mark.parametrize("model", [pytest.param(path, marks=[pytest.mark.slow] if path.name in AT_SCALE else []) for path in VALID], ids=lambda p: p.name)
def test_valid_models_solve_plot_and_explain(model: Path, tmp_path: Path) -> None:
    solved = run("solve", model)
    assert solved.exit_code == 0, solved.stderr
    assert solved.stdout.splitlines()[1].split()[:3] == ["component", "rank", "node"]
    plotted = run("plot", model, "-o", tmp_path / "layout.png", "--dpi", "30")
    assert plotted.exit_code == 0, plotted.stderr
    assert plotted.stdout == f"wrote {tmp_path / 'layout.png'}\n" and (tmp_path / "layout.png").stat().st_size > 1000
    explained = run("explain", model)
    assert explained.exit_code == 0, explained.stderr
    assert explained.stdout.count("\n") == 1 and explained.stdout.startswith(f"{model}: valid")


@pytest.mark.parametrize("model", INVALID, ids=lambda p: p.name)
def test_invalid_models_fail_in_one_line_with_status_2_or_3(model: Path, tmp_path: Path) -> None:
    code = 3 if "no placement exists" in run("solve", model).stderr else 2
    messages = {assert_one_line_error(run(*command), code) for command in (
        ("solve", model), ("plot", model, "-o", tmp_path / "x.png"), ("explain", model),
    )}  # fmt: skip
    assert len(messages) == 1  # every subcommand gives the same reason and status
    assert not (tmp_path / "x.png").exists()


def test_explain_names_what_is_valid() -> None:
    result = run("explain", ROOT / "models" / "quickstart.yaml")
    assert result.stdout.endswith(
        "valid; 4 components, 36 processes (actor 16, rollout 8, reward 8, env 4) on 3 of 3 nodes, 16 of 16 GPUs in use; optimal\n"
    )


def test_explain_lists_every_conflict_of_an_infeasible_config(tmp_path: Path) -> None:
    config = tmp_path / "infeasible.yaml"
    config.write_text(INFEASIBLE)
    result = run("explain", config)
    assert result.exit_code == 3 and result.stdout == ""
    first, *lines = result.stderr.splitlines()
    assert first == "error: no placement exists; these statements cannot all hold:"
    listed = [line for line in lines if not line.startswith("suggestion: ")]
    assert listed == [  # grouped under each component with the keys the statements rest on, the arithmetic last
        "  actor (placement):",
        '    - actor: placement "0-3" uses 4 GPUs',
        "  rollout (processes, hardware_per_process, exclusive_with):",
        "    - rollout needs 2 processes x 2 GPUs",
        "    - rollout is exclusive with actor (no shared hardware)",
        "  - counting: the cluster has 1 node x 4 GPUs; together they need 8",
    ]
    assert "suggestion: one more node like node 0 (4 GPUs, in cluster) fits" in lines
    one_line = assert_one_line_error(run("solve", config), 3)
    assert one_line.startswith("error: no placement exists; these statements conflict: ")
    assert "; rollout is exclusive with actor" in one_line


def test_compact_conflicts_merges_per_process_statements_only() -> None:
    """Statements that say the same (``of_each``) of different processes merge; others, and plain
    sentences, are kept as they are (nothing is read back out of a sentence)."""
    def of(component: str, process: int, said: str) -> Statement:
        return Statement(f"{component}: process {process} {said}", component, ("placement",), "per_process", (process, process), of_each=said)

    assert compact_conflicts([of("a", 0, "x"), of("a", 1, "x"), of("a", 3, "x"), of("b", 0, "y"), "c: process 0 x", "c: process 1 x"]) == [
        "a: process 0 x (likewise processes 1,3)",
        "b: process 0 y",
        "c: process 0 x",
        "c: process 1 x",
    ]


def test_solve_yaml_and_json_carry_the_same_placement_fields() -> None:
    model = ROOT / "models" / "quickstart.yaml"
    as_json = json.loads(run("solve", model, "--format", "json").stdout)
    as_yaml = yaml.safe_load(run("solve", model, "--format", "yaml").stdout)
    assert as_json == as_yaml and list(as_yaml["components"]) == ["actor", "rollout", "reward", "env"]
    components = as_yaml["components"]
    assert components["rollout"][1]["local_hardware_ranks"] == [1, 3] and components["env"][0]["hardware_type"] == "node"


def test_task_type_and_model_parallel_read_tp_sizes_and_plot_the_weight_sync(tmp_path: Path) -> None:
    model = ROOT / "models" / "modelparallel_collocated_tp8_tp2_1x8.yaml"
    by_task = json.loads(run("solve", model, "-c", "rollout", "--format", "json").stdout)
    forced = json.loads(run("solve", model, "-c", "rollout", "--format", "json", "--model-parallel").stdout)
    assert by_task == forced and by_task["placement_class"] == "ModelParallelComponentPlacement"
    assert [p["local_hardware_ranks"] for p in by_task["components"]["rollout"]] == [[0, 4], [1, 5], [2, 6], [3, 7]]
    out = tmp_path / "sync.svg"
    result = run("plot", model, "--figure", "weight-sync", "-o", out)
    assert result.exit_code == 0, result.stderr
    svg = out.read_text()
    assert ">0 · GPU 0,4<" in svg and "actor tensor-parallel group of 8" in svg
    assert "in collocated mode" in run("explain", model, "--model-parallel").stdout


def test_plot_options_reach_the_figure(tmp_path: Path) -> None:
    out = tmp_path / "slice.svg"
    result = run("plot", ROOT / "models" / "synthetic_128x8.yaml", "-o", out, "--nodes", "96-99", "-c", "inference", "--title", "serve")
    assert result.exit_code == 0, result.stderr
    svg = out.read_text()
    assert ">serve<" in svg and ">node 96<" in svg and ">node 100<" not in svg and "actor" not in svg


@pytest.mark.parametrize(
    ("args", "message", "code"),
    [
        (("-o", "layout.txt"), "cannot save a figure as 'layout.txt'", 2),
        (("-o", "missing/dir/layout.png"), "cannot write missing/dir/layout.png: the directory 'missing/dir' does not exist", 74),
        (("-o", "x.png", "--nodes", "0-7"), 'nodes "0-7" is out of range; valid ranks are 0-2', 2),
        (("-o", "x.png", "--figure", "weight-sync", "--rollout", "critic"), "unknown component 'critic'", 2),
    ],
)
def test_plot_errors_are_one_line(args: tuple[str, ...], message: str, code: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert message in assert_one_line_error(run("plot", ROOT / "models" / "quickstart.yaml", *args), code)


def test_missing_file_is_one_line() -> None:
    assert "does not exist" in assert_one_line_error(run("explain", "models/nope.yaml"))


def test_version_and_help_with_examples() -> None:
    assert run("--version").stdout == f"solver-placement, version {__version__}\n"
    top = run("--help").stdout
    for text in ("solve", "plot", "explain", "Examples:", "solver-placement plot models/quickstart.yaml -o layout.png"):
        assert text in top
    for command in ("solve", "plot", "explain"):
        assert "Examples:" in run(command, "--help").stdout


def test_the_installed_entry_point_never_prints_a_traceback(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "solver_placement._cli", "plot", "models/invalid/process_spans_nodes_gpu.yaml", "-o", tmp_path / "x.png"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert result.returncode == 3 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(
        'error: no placement exists: actor: segment "6-9:0" (process 0) must have all its GPUs on one node, '
        "but its ranks lie on nodes 0, 1"
    )
