"""``solver-placement -v``: the library's log on stderr, stdout unchanged, nothing without it."""

from __future__ import annotations

import contextlib
import io
import logging
import re

from click.testing import Result
from helpers import ROOT, cli_runner

from solver_placement._cli import main
from solver_placement._cli.app import _CurrentStderr

QUICKSTART = str(ROOT / "models" / "quickstart.yaml")
#: The one part of the answer that differs from run to run: its wall time.
ELAPSED = re.compile(r"in \d+\.\d+ s")


def run(*args: str) -> Result:
    return cli_runner().invoke(main, list(args))


def test_without_verbose_nothing_is_logged() -> None:
    result = run("solve", QUICKSTART, "+cluster.solver.objective.contiguity=5")
    assert result.exit_code == 0 and result.stderr == ""


def test_verbose_logs_stages_and_statistics_on_stderr_and_leaves_stdout_as_it_was() -> None:
    quiet = run("solve", QUICKSTART, "--format", "json")
    loud = run("-v", "solve", QUICKSTART, "--format", "json")
    assert loud.exit_code == 0 and ELAPSED.sub("", loud.stdout) == ELAPSED.sub("", quiet.stdout)
    lines = loud.stderr.splitlines()
    assert lines[0].startswith("INFO solver_placement._solver.solve: solving 4 components, 36 processes")
    assert lines[-1].startswith("INFO solver_placement._solver.solve: placed by counts: OPTIMAL")
    assert not any(line.startswith("DEBUG") for line in lines)


def test_twice_verbose_adds_every_cp_sat_run() -> None:
    """Every CP-SAT run of the call (here the count model's three: two tensor-parallel groups
    stacked on one node's GPUs; the quickstart is placed without a model)."""
    result = run("-vv", "solve", str(ROOT / "models" / "modelparallel_collocated_tp4_tp2_1x8.yaml"))
    assert result.exit_code == 0
    runs = [line for line in result.stderr.splitlines() if line.startswith("DEBUG solver_placement._solver.options: CP-SAT run: ")]
    assert runs and all(" branches, " in line for line in runs)
    assert "INFO solver_placement._solver.solve: placed by counts: OPTIMAL" in result.stderr


def test_the_log_handler_ends_with_the_command() -> None:
    package = logging.getLogger("solver_placement")
    before = (list(package.handlers), package.level)
    assert run("-vv", "solve", QUICKSTART).exit_code == 0
    assert (list(package.handlers), package.level) == before
    assert run("solve", QUICKSTART).stderr == ""


def test_log_lines_follow_stderr_where_the_spinner_redirects_it() -> None:
    """The spinner (rich) swaps ``sys.stderr`` for a proxy that prints above it; the handler
    writes to whatever ``sys.stderr`` is at each record, so log lines do not cut through it."""
    handler = _CurrentStderr()
    redirected = io.StringIO()
    with contextlib.redirect_stderr(redirected):
        handler.emit(logging.LogRecord("solver_placement._solver.solve", logging.INFO, __file__, 1, "while the spinner runs", None, None))
    assert redirected.getvalue() == "while the spinner runs\n"
