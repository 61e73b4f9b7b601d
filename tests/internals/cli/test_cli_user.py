"""The command line driven as a user drives it: overrides, stdin, every ``--format``, each exit
status (in-process through click's runner, which reads the same streams and exit status without a
Python start per call), and, in a subprocess, what only a real process shows: a closed pipe, a
terminal, ``python -m``."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from helpers import INFEASIBLE, ROOT, cli_runner

from solver_placement._cli import main
from solver_placement._errors import InternalError, LaunchError

QUICKSTART = "models/quickstart.yaml"
AUTO = "models/auto_reference_16x8.yaml"
#: Feasible but slow to prove: four mutually exclusive components of 12 processes on 64 GPUs.
HARD = {
    "cluster": {
        "num_nodes": 8,
        "num_gpus_per_node": 8,
        "component_placement": {f"c{i}": {"processes": 12, "exclusive_with": [f"c{j}" for j in range(4) if j != i]} for i in range(4)},
    }
}
#: The RLinf trap: TP sizes without runner.task_type.
RLINF_TP = """
cluster:
  num_nodes: 1
  num_gpus_per_node: 8
  component_placement:
    actor,rollout,reward: all
actor:
  model:
    tensor_model_parallel_size: 4
rollout:
  tensor_parallel_size: 2
"""
ENVELOPE = ["schema_version", "command", "file", "overrides"]


@dataclass(frozen=True)
class Ran:
    """What one command did, in the terms a finished process reports."""

    returncode: int
    stdout: str
    stderr: str


def cli(*args: object, stdin: str | None = None) -> Ran:
    """``solver-placement ARGS`` run in-process from the repository root (relative model paths as a
    user types them). An exception the command let escape is raised here, as a process would print
    its traceback."""
    with contextlib.chdir(ROOT):
        result = cli_runner().invoke(main, [str(arg) for arg in args], input=stdin)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Ran(result.exit_code, result.stdout, result.stderr)


def assert_error(result: Ran, code: int, text: str) -> None:
    assert result.returncode == code, result.stderr
    assert result.stdout == "" and result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert text in result.stderr


def test_overrides_merge_like_from_dotlist_before_interpolations_resolve(tmp_path: Path) -> None:
    result = cli("solve", QUICKSTART, "cluster.component_placement.reward.placement=0-7", "--format", "json")
    data = json.loads(result.stdout)
    assert data["overrides"] == ["cluster.component_placement.reward.placement=0-7"]
    assert [p["local_hardware_ranks"] for p in data["components"]["reward"]] == [[g] for g in range(8)]
    model = tmp_path / "interpolated.yaml"
    model.write_text("nodes: 1\ncluster:\n  num_nodes: ${nodes}\n  num_gpus_per_node: 2\n  component_placement:\n    actor: all\n")
    data = json.loads(cli("solve", model, "nodes=3", "--format", "json").stdout)
    assert len(data["components"]["actor"]) == 6


def test_stdin_is_read_for_a_dash() -> None:
    from_file = json.loads(cli("solve", QUICKSTART, "--format", "json").stdout)
    from_stdin = json.loads(cli("solve", "-", "--format", "json", stdin=(ROOT / QUICKSTART).read_text()).stdout)
    assert from_stdin["file"] == "<stdin>" and from_stdin["components"] == from_file["components"]


@pytest.mark.parametrize(
    ("args", "keys"),
    [
        (("solve", QUICKSTART), ["status", "placement_class", "placement_mode", "components", "notes"]),
        (("explain", QUICKSTART), ["feasible", "summary", "status", "placement_class", "placement_mode", "processes",
                                   "nodes_used", "nodes", "gpus_used", "gpus", "components", "notes"]),
        (("auto", AUTO, "--top-k", "2"), ["task", "num_gpus", "proven_optimal", "gap", "solves", "wall_time_s",
                                          "component_placement", "candidates"]),
        (("launch", QUICKSTART), ["run", "job_name", "node_ids", "node_ips", "bundles", "processes", "scheme", "scheme_reason",
                                  "placement_groups", "free_gpus_only"]),
        (("plot", QUICKSTART, "-o", "{tmp}/layout.svg"), ["figure", "written"]),
    ],
    ids=lambda value: value[0] if isinstance(value, tuple) else None,
)  # fmt: skip
def test_every_command_prints_its_documented_json(args: tuple[str, ...], keys: list[str], tmp_path: Path) -> None:
    result = cli(*(arg.format(tmp=tmp_path) for arg in args), "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert list(data) == ENVELOPE + keys and data["schema_version"] == 1 and data["command"] == args[0]


@pytest.mark.parametrize(
    ("args", "first_line"),
    [
        (("solve", QUICKSTART), "models/quickstart.yaml: 3 nodes, GPUs per node [8, 8, 0]; optimal in "),
        (("solve", QUICKSTART, "--format", "yaml"), "schema_version: 1"),
        (("explain", QUICKSTART), "models/quickstart.yaml: valid; 4 components, 36 processes"),
        (("auto", AUTO, "--top-k", "2"), "models/auto_reference_16x8.yaml: disaggregated, predicted 289.096 s per iteration"),
        (("auto", AUTO, "--format", "yaml"), "# auto placement (reasoning, 128 GPUs): disaggregated"),
        (("launch", QUICKSTART), "models/quickstart.yaml: 20 bundles in one placement group, 36 processes"),
        (("plot", QUICKSTART, "-o", "{tmp}/layout.png", "--dpi", "30"), "wrote {tmp}/layout.png"),
    ],
    ids=lambda value: "-".join(value[:1] + value[2:4]) if isinstance(value, tuple) else None,
)
def test_every_human_format(args: tuple[str, ...], first_line: str, tmp_path: Path) -> None:
    result = cli(*(arg.format(tmp=tmp_path) for arg in args))
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert result.stdout.startswith(first_line.format(tmp=tmp_path))


def test_explain_json_of_an_infeasible_model_lists_conflicts_and_fixes_and_exits_3() -> None:
    result = cli("explain", "-", "--format", "json", stdin=INFEASIBLE)
    assert result.returncode == 3 and result.stderr == ""
    data = json.loads(result.stdout)
    assert data["feasible"] is False and "rollout is exclusive with actor (no shared hardware)" in data["conflicts"]
    assert "one more node like node 0 (4 GPUs, in cluster) fits" in data["suggestions"]


def test_a_closed_pipe_ends_the_command_quietly() -> None:
    reader = subprocess.Popen(
        [sys.executable, "-m", "solver_placement", "solve", "models/synthetic_1024x8.yaml", "--format", "json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip
    assert reader.stdout is not None and reader.stderr is not None
    assert reader.stdout.readline() == b"{\n"
    reader.stdout.close()  # as `| head -1` does: the output is far larger than a pipe's buffer
    assert reader.wait(timeout=300) == 0
    assert reader.stderr.read() == b""


def test_ctrl_c_exits_130_with_one_line() -> None:
    """A real SIGINT while ``solve -`` waits on stdin: one ``error: interrupted`` line and 130
    (click alone prints "Aborted!" and exits 1, which a script cannot tell from a failure)."""
    waiting = subprocess.Popen([sys.executable, "-m", "solver_placement", "solve", "-"], stdin=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while not _reading_stdin(waiting.pid):  # the command itself is reading: past the imports
            assert waiting.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        waiting.send_signal(signal.SIGINT)
        # stdin stays open until the command has ended: ``communicate`` would close it at once,
        # and a command slow to take the signal (a loaded machine) would read end-of-input first
        waiting.wait(timeout=60)
        stderr = waiting.stderr.read() if waiting.stderr else b""
    finally:
        waiting.kill()
    assert (waiting.returncode, stderr) == (130, b"error: interrupted\n")


def _reading_stdin(pid: int) -> bool:
    """Whether the process is blocked in read(2) on descriptor 0 (read is syscall 0 on x86-64,
    63 on arm64)."""
    try:
        number, descriptor = Path(f"/proc/{pid}/syscall").read_text().split()[:2]
    except PermissionError:  # a kernel that hides other processes' system calls
        pytest.skip("/proc/PID/syscall is not readable here: cannot tell when the command waits on stdin")
    except (FileNotFoundError, ValueError):  # ended, or running ("running" has no fields to split)
        return False
    return number in ("0", "63") and int(descriptor, 16) == 0


@pytest.mark.parametrize(
    ("args", "stdin", "code", "text"),
    [
        (("solve", QUICKSTART, "cluster.num_nodes"), None, 2, "override 'cluster.num_nodes' is not KEY=VALUE"),
        (("solve", QUICKSTART, "models/strategy_node.yaml"), None, 2, "give one FILE (already 'models/quickstart.yaml')"),
        (("solve", "models/nope.yaml"), None, 2, "config file 'models/nope.yaml' does not exist"),
        (("solve", "-"), "- 1\n", 2, "config file '<stdin>' must hold a mapping at the top level"),
        (("solve", "-"), RLINF_TP, 2, "rollout.tensor_parallel_size: 2 but no runner.task_type"),
        (("auto", QUICKSTART), None, 2, "models/quickstart.yaml has no auto_placement: section"),
        (("solve", "-"), INFEASIBLE, 3, "no placement exists; these statements conflict: "),
        (("solve", "-", "--time-limit", "0.001"), yaml.safe_dump(HARD), 4, "time_limit_s=0.001 s"),  # whichever step ran out
        (("plot", QUICKSTART, "-o", "missing_dir/x.png"), None, 74, "cannot write missing_dir/x.png: the directory 'missing_dir' does not exist"),
    ],
    ids=["not-key-value", "two-files", "missing-file", "not-a-mapping", "rlinf-ambiguous", "auto-without-section",
         "infeasible", "timeout", "missing-output-dir"],
)  # fmt: skip
def test_each_exit_status(args: tuple[str, ...], stdin: str | None, code: int, text: str) -> None:
    assert_error(cli(*args, stdin=stdin), code, text)


def test_a_usage_error_exits_2() -> None:
    result = cli("solve", QUICKSTART, "--format", "xml")
    # click words the usage error ("Invalid value for '--format': 'xml' is not one of ..." today):
    # check only that it names the option and the value, not click's phrasing
    assert result.returncode == 2 and "--format" in result.stderr and "xml" in result.stderr, result.stderr


@pytest.mark.parametrize(("error", "code"), [(InternalError("boom"), 70), (LaunchError("no GPU bundle fits"), 5)])
def test_internal_and_launch_failures_have_their_own_status(error: Exception, code: int, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> None:
        raise error

    monkeypatch.setattr("solver_placement._cli.solve_commands.place", broken)
    result = cli_runner().invoke(main, ["solve", str(ROOT / QUICKSTART)])
    assert result.exit_code == code and result.stderr.startswith("error: ") and str(error) in result.stderr


def test_rlinf_task_type_places_two_gpu_engines() -> None:
    data = json.loads(cli("solve", "-", "+runner.task_type=reasoning", "-c", "rollout", "--format", "json", stdin=RLINF_TP).stdout)
    assert data["placement_class"] == "ModelParallelComponentPlacement" and data["placement_mode"] == "collocated"
    assert [p["local_hardware_ranks"] for p in data["components"]["rollout"]] == [[0, 2], [1, 3], [4, 6], [5, 7]]


def test_help_documents_exit_statuses_completion_and_plain_text() -> None:
    top = cli("--help").stdout
    for line in ("0   done", "2   bad input", "3   infeasible", "4   timeout", "5   launch failed", "70  internal error", "74  I/O error", "130 interrupted"):
        assert line in top
    assert "_SOLVER_PLACEMENT_COMPLETE=bash_source solver-placement" in top
    auto = cli("auto", "--help").stdout
    assert "``" not in auto and "auto_placement: section" in auto and "Exit status:" in auto
    assert subprocess.run([sys.executable, "-m", "solver_placement._cli", "--help"], capture_output=True, cwd=ROOT).returncode == 0


def test_a_terminal_sees_a_progress_display_and_a_pipe_does_not() -> None:
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "solver_placement", "solve", QUICKSTART, "-c", "env"],
        stdout=terminal, stderr=terminal, cwd=ROOT, env={**os.environ, "TERM": "xterm"},
    )  # fmt: skip
    os.close(terminal)
    shown = b""
    while chunk := _read(controller):
        shown += chunk
    assert process.wait(timeout=300) == 0
    assert b"solving models/quickstart.yaml" in shown and b"env" in shown
    piped = cli("solve", QUICKSTART, "-c", "env")
    assert "solving" not in piped.stdout + piped.stderr


def _read(descriptor: int) -> bytes:
    """The next bytes from a pseudo-terminal; empty once the other side has closed (EIO on Linux)."""
    try:
        return os.read(descriptor, 65536)
    except OSError:
        return b""


def test_resource_pools_reach_every_command(tmp_path: Path) -> None:
    pools = "models/verl_pools_2x8.yaml"
    solved = json.loads(cli("solve", pools, "--format", "json").stdout)
    assert list(solved["components"]) == ["actor_rollout+critic", "rm"]  # verl fuses a pool's roles: one worker per GPU
    assert [p["local_hardware_ranks"] for p in solved["components"]["actor_rollout+critic"]] == [[g] for g in range(8)] * 2
    grown = json.loads(cli("solve", pools, "resource_pools.resource_pool_spec.reward_pool.process_on_nodes=[8]", "--format", "json").stdout)
    assert len(grown["components"]["rm"]) == 8
    planned = json.loads(cli("launch", pools, "--format", "json").stdout)
    assert {name: len(processes) for name, processes in planned["processes"].items()} == {"actor_rollout+critic": 16, "rm": 4}
    assert cli("plot", pools, "-o", tmp_path / "pools.svg").returncode == 0
    assert "resource pool global_pool (actor_rollout+critic)" in (tmp_path / "pools.svg").read_text()
    assert_error(cli("solve", pools, "--model-parallel"), 2, "this config states resource_pools: instead")
    assert_error(cli("explain", pools, "resource_pools.mapping.critic=other"), 2, "role 'critic' is mapped to unknown resource pool 'other'")


@pytest.mark.parametrize("command", ["", "solve", "plot", "explain", "auto", "launch", "export"])
def test_help_is_plain_text_without_markup(command: str) -> None:
    shown = cli(*[command] if command else [], "--help")
    assert shown.returncode == 0 and "`" not in shown.stdout and ":class:" not in shown.stdout, shown.stdout
