"""Ctrl-C at any moment of ``launch --run --local``: nothing of the embedded Ray is left, the
machine's ``ray start`` record is as it was, and the exit status is 130 (issue 35 item 10).

Each run is a real ``solver-placement`` process in a session of its own, sent SIGINT to its process
group as a terminal sends Ctrl-C: while the embedded Ray starts (its first session dir appeared),
while the driver connects (its core worker's log appeared), while the reservation stands (``-v`` logged the placement group), and right after the result is
printed (the embedded Ray is being stopped). Every run gets its own Ray temp dir (``RAY_TMPDIR``),
so the record and the Ray processes are the test's alone; whatever a run leaves is killed by
process id afterwards, even when an assertion failed. No Ray process left means no placement
group either: the embedded cluster holds them all.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest
from helpers import ROOT

from solver_placement._cli.exit_codes import ExitCode

pytestmark = pytest.mark.ray

#: Two simulated nodes, so the start has a head and a worker node to interrupt.
MODEL = "cluster:\n  num_nodes: 2\n  num_gpus_per_node: 2\n  component_placement:\n    a: 0-3\n"
#: What a user's earlier ``ray start`` wrote (no Ray answers there; only the text must survive).
USERS_RECORD = "127.0.0.1:6379"


class Run:
    """One ``launch --run`` process, its output lines collected as they come (from threads, so
    waiting for a line never blocks on the other stream)."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "solver_placement", *args],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self._readers = [threading.Thread(target=_collect, args=pair) for pair in ((self.process.stdout, self.stdout), (self.process.stderr, self.stderr))]
        for reader in self._readers:
            reader.start()

    def ctrl_c_when(self, moment: Callable[[], bool], timeout_s: float = 300.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not moment():
            assert self.process.poll() is None, f"ended before the moment:\n{''.join(self.stderr)}{''.join(self.stdout)}"
            assert time.monotonic() < deadline, "the moment never came"
            time.sleep(0.05)
        os.killpg(self.process.pid, signal.SIGINT)

    def wait(self, timeout_s: float = 300.0) -> int:
        code = self.process.wait(timeout=timeout_s)
        for reader in self._readers:
            reader.join()
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.wait()


def _collect(stream: IO[str], lines: list[str]) -> None:
    for line in stream:
        lines.append(line)


@pytest.fixture
def ray_tmpdir() -> Iterator[Path]:
    """A short private Ray temp dir (Ray's socket paths must stay short); every process whose
    command line names it is killed afterwards, then the dir is removed."""
    tmp = Path(tempfile.mkdtemp(prefix="sp", dir="/tmp"))
    try:
        yield tmp
    finally:
        for pid in processes_naming(str(tmp)):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue  # ended between the scan and the kill
        shutil.rmtree(tmp, ignore_errors=True)


def processes_naming(text: str) -> list[int]:
    """Ids of the processes whose command line contains ``text`` (every Ray process names its temp dir)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if text in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    pids.append(int(entry.name))
            except OSError:
                continue  # ended while scanned
    return pids


def gone(tmp: Path, timeout_s: float = 30.0) -> list[int]:
    """The Ray processes of ``tmp`` still alive after ``timeout_s`` (a raylet's workers end
    shortly after it, not with it)."""
    deadline = time.monotonic() + timeout_s
    while (left := processes_naming(str(tmp))) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left


def environment(tmp: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
    return env | {"RAY_TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)}


def starting(run: Run, tmp: Path) -> bool:
    """The embedded Ray's head has made its session dir: its processes are starting."""
    return any((tmp / "ray").glob("session_2*"))


def connecting(run: Run, tmp: Path) -> bool:
    """The driver's core worker has made its log: ``ray.init`` on the embedded Ray is under way."""
    return any((tmp / "ray").glob("session_2*/logs/python-core-driver-*"))


def reserved(run: Run, tmp: Path) -> bool:
    """``-v`` logged the placement group: the reservation stands, probe actors are next."""
    return any(re.search(r"placement groups? made", line) for line in run.stderr)


def printed(run: Run, tmp: Path) -> bool:
    """The result is out; what is left is stopping the embedded Ray."""
    return any("reservation released" in line for line in run.stdout)


@pytest.mark.parametrize(
    "moment", [starting, connecting, reserved, printed], ids=["while-ray-starts", "while-connecting", "while-reserved", "after-the-result"]
)
def test_ctrl_c_leaves_no_ray_process_and_the_ray_start_record_as_it_was(moment: Callable[[Run, Path], bool], ray_tmpdir: Path) -> None:
    record = ray_tmpdir / "ray" / "ray_current_cluster"
    record.parent.mkdir()
    record.write_text(USERS_RECORD)
    model = ray_tmpdir / "small.yaml"
    model.write_text(MODEL)
    run = Run(["-v", "launch", str(model), "--run", "--local"], environment(ray_tmpdir))
    try:
        run.ctrl_c_when(lambda: moment(run, ray_tmpdir))
        code = run.wait()
    finally:
        run.kill()
    assert code == ExitCode.INTERRUPTED, "".join(run.stderr)
    assert run.stderr[-1] == "error: interrupted\n" and not any("Traceback" in line for line in run.stderr), "".join(run.stderr)
    assert gone(ray_tmpdir) == []
    assert record.read_text() == USERS_RECORD


def test_after_ctrl_c_the_next_launch_starts_its_own_embedded_ray(ray_tmpdir: Path) -> None:
    """The issue's sequence: Ctrl-C right after ``launch --run --local`` printed, then the README's
    first command (no --local: it attaches to a recorded ``ray start`` cluster if there is one)."""
    model = ray_tmpdir / "small.yaml"
    model.write_text(MODEL)
    env = environment(ray_tmpdir)
    interrupted = Run(["launch", str(model), "--run", "--local"], env)
    try:
        interrupted.ctrl_c_when(lambda: printed(interrupted, ray_tmpdir))
        assert interrupted.wait() == ExitCode.INTERRUPTED, "".join(interrupted.stderr)
    finally:
        interrupted.kill()
    assert not (ray_tmpdir / "ray" / "ray_current_cluster").exists()
    again = subprocess.run([sys.executable, "-m", "solver_placement", "launch", str(model), "--run"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "4 of 4 processes ran on exactly their planned node and devices; reservation released" in again.stdout
    assert gone(ray_tmpdir) == [] and not (ray_tmpdir / "ray" / "ray_current_cluster").exists()


#: Ctrl-C a few milliseconds into ``ray.init`` on the embedded Ray (``ensure_ray``, as ``reserve``
#: and ``--local`` start it); prints what is left once the interrupt comes out: the connection and
#: the embedded heads still running (their processes' exit is asynchronous, their Node objects not).
CONNECT_INTERRUPTED = """
import os, signal, sys, threading
import ray
from solver_placement import Cluster
from solver_placement._ray_launch.session import LocalRayCluster, ensure_ray

heads = []

def local_heads():
    return sum(local._cluster.head_node is not None for local in heads)

def connect_with_ctrl_c(local):  # the real connect, with Ctrl-C 50 ms into it
    heads.append(local)
    threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)).start()
    connect(local)

connect, LocalRayCluster.connect = LocalRayCluster.connect, connect_with_ctrl_c
try:
    ensure_ray(Cluster(num_nodes=2, num_gpus_per_node=2), address="local")
except KeyboardInterrupt:
    print("interrupted; connected:", ray.is_initialized(), "head:", local_heads(), flush=True)
sys.exit(130)
"""


def test_ctrl_c_inside_ray_init_stops_the_embedded_ray_before_exit_without_a_segfault(ray_tmpdir: Path) -> None:
    """Cut short, ``ray.init`` left a driver that ``ray.is_initialized()`` denied but the head
    still counted as connected, and the embedded Ray was never stopped; at exit the nodes' own
    ``atexit`` hooks (registered after Ray's ``ray.shutdown`` hook, so run before it) killed them
    under the live core worker: a segmentation fault (exit -11) on Ray 2.60. Now the first Ctrl-C
    waits for ``ray.init`` and everything is stopped before the interrupt comes out."""
    done = subprocess.run([sys.executable, "-c", CONNECT_INTERRUPTED], cwd=ROOT, env=environment(ray_tmpdir), capture_output=True, text=True, timeout=300)
    assert done.returncode == ExitCode.INTERRUPTED, done.stderr
    assert done.stdout == "interrupted; connected: False head: 0\n"
    assert gone(ray_tmpdir) == []
