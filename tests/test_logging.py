"""What a solve logs for someone debugging it (sizes, the path that answered and why the others
declined, CP-SAT's statistics), and that the library prints nothing unless logging is configured."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest
from helpers import ROOT, config
from internals.solver.flat_model import counts_kept_out

from solver_placement import InfeasiblePlacementError, solve

QUICKSTART = ROOT / "models" / "quickstart.yaml"


def messages(caplog: pytest.LogCaptureFixture, logger: str) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == logger]


def test_a_solve_logs_its_size_the_path_that_answered_and_why_the_count_model_declined(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    with caplog.at_level(logging.INFO, logger="solver_placement"):
        solution = solve(QUICKSTART)
    said = messages(caplog, "solver_placement._solver.solve")
    assert said[0] == (
        "solving 4 components, 36 processes, 1 declarative with 128 candidate pairs, on 3 nodes with 19 hardware items "
        "(time limit 60 s, 1 worker)"
    )
    assert said[-1].startswith(f"placed by counts: OPTIMAL, objective {solution.objective}, bound {solution.bound}, in ")
    caplog.clear()
    counts_kept_out(monkeypatch)  # first fit's placement then meets the counting bound
    weighed = {"actor": {"placement": "0-3", "memory_gb": 10}, "rollout": {"processes": 4, "exclusive_with": ["actor"]}}
    with caplog.at_level(logging.INFO, logger="solver_placement"):
        solution = solve(config(2, 8, weighed))
    said = messages(caplog, "solver_placement._solver.solve")
    assert "the count model declined: kept out by the test" in said
    assert "first fit's placement meets the counting bound 10000: no search" in said
    assert said[-1].startswith(f"placed by first fit: OPTIMAL, objective {solution.objective}, bound {solution.bound}, in ")


#: With the count model kept out and contiguity weighed (no counting bound then accepts first
#: fit's placement), the exact model answers.
SEARCHED = {"actor": {"placement": "0-3", "memory_gb": 10}, "rollout": {"processes": 4, "exclusive_with": ["actor"]}}


def test_the_exact_model_logs_its_size_and_cp_sat_statistics(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    counts_kept_out(monkeypatch)
    with caplog.at_level(logging.DEBUG, logger="solver_placement"):
        solution = solve(config(2, 8, SEARCHED), objective={"contiguity": 5})
    said = messages(caplog, "solver_placement._solver.solve")
    assert "the count model declined: kept out by the test" in said
    built = [line for line in said if line.startswith("the exact model: ") and "variables" in line]
    solved = [line for line in said if line.startswith(f"the exact model: OPTIMAL, objective {float(solution.objective or 0)}, bound ")]
    assert len(built) == 1 and len(solved) == 1, said
    assert " s wall, " in solved[0] and " branches, " in solved[0] and solved[0].endswith(" conflicts")
    runs = messages(caplog, "solver_placement._solver.options")
    assert runs and all(run.startswith("CP-SAT run: ") for run in runs)
    assert said[-1].startswith("placed by search: OPTIMAL")


def test_a_refused_spec_logs_the_stage_that_refused_it(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="solver_placement"), pytest.raises(InfeasiblePlacementError):
        solve(config(1, 4, {"actor": "0-3", "rollout": {"processes": 4, "exclusive_with": ["actor"]}}))
    said = messages(caplog, "solver_placement._solver.solve")
    assert "the counting bounds prove the spec infeasible (4 statements): no further model is built" in said
    assert said[-1].startswith("no placement after ") and said[-1].endswith(" s: InfeasiblePlacementError")


def test_nothing_is_logged_below_the_level_asked_for(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="solver_placement"):
        solve(QUICKSTART, objective={"contiguity": 5})
    assert [record for record in caplog.records if record.name.startswith("solver_placement")] == []


def test_the_library_prints_nothing_unless_logging_is_configured() -> None:
    """In a fresh interpreter that configures no logging, a solve (every path up to the exact
    model) and even a warning of the library's own print nothing: the package's logger has a
    NullHandler, so Python's last-resort handler never prints its records."""
    program = (
        "import logging, solver_placement\n"
        f"solver_placement.solve({str(QUICKSTART)!r}, objective={{'contiguity': 5}})\n"
        "logging.getLogger('solver_placement._solver.solve').warning('a warning nobody asked to see')\n"
    )
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True)
    assert (run.stdout, run.stderr) == ("", "")
