"""Ctrl-C right after ``launch --run --local`` prints its result must not break the next command.

Ray's test cluster writes its head into Ray's record of the last ``ray start`` (``ray_current_cluster``
in Ray's temp dir) and deletes it only at the very end of its shutdown, so a Ctrl-C during the
teardown used to leave the record naming a dead head, and the README's own first command then
exited 5 ("no Ray answers at ... (the address `ray start` recorded on this machine)"). Each run
gets its own Ray temp dir (``RAY_TMPDIR``), so the record and the Ray processes are this test's
alone, and whatever the run leaves is killed by process id even when an assertion fails.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.ray

ROOT = Path(__file__).resolve().parents[3]
COMMAND = [sys.executable, "-m", "solver_placement", "launch", "models/quickstart.yaml", "--run"]


@pytest.fixture
def ray_tmpdir() -> Iterator[Path]:
    """A short private Ray temp dir (Ray's socket paths must stay short); every process whose
    command line names it is killed afterwards, then the dir is removed."""
    tmp = Path(tempfile.mkdtemp(prefix="sp", dir="/tmp"))
    try:
        yield tmp
    finally:
        for pid in _pids_naming(str(tmp)):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue  # ended between the scan and the kill
        shutil.rmtree(tmp, ignore_errors=True)


def _pids_naming(text: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if text in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    pids.append(int(entry.name))
            except OSError:
                continue  # ended while scanned
    return pids


def _interrupted_local_launch(env: dict[str, str]) -> None:
    """``launch --run --local``, Ctrl-C (SIGINT to its process group, as a terminal sends it) as
    soon as it prints that the reservation is released."""
    run = subprocess.Popen(
        [*COMMAND, "--local"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True
    )
    try:
        printed = []
        for line in run.stdout or ():
            printed.append(line)
            if "reservation released" in line:
                os.killpg(run.pid, signal.SIGINT)
                break
        assert any("reservation released" in line for line in printed), "".join(printed)
        run.wait(timeout=120)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()


def test_ctrl_c_after_a_local_launch_leaves_the_next_launch_working(ray_tmpdir: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
    env |= {"RAY_TMPDIR": str(ray_tmpdir), "PYTHONPATH": str(ROOT)}
    record = ray_tmpdir / "ray" / "ray_current_cluster"
    _interrupted_local_launch(env)
    assert not record.exists(), f"the embedded Ray left its record: {record.read_text()}"
    again = subprocess.run(COMMAND, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "reservation released" in again.stdout and not record.exists()
