"""The test side of ``driver_shared/forking_server.py``: one server per driver and source directory, started on
first use and stopped when the test session ends, and a call that runs one case through it and
returns what the driver printed, as a separate run of the driver would."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

#: Variables left out of a server's environment: pytest sets this one per test, and a server is
#: shared by the session's tests.
PER_TEST = ("PYTEST_CURRENT_TEST",)

#: The server script, with the drivers' shared modules.
SERVER = Path(__file__).parent / "driver_shared" / "forking_server.py"


@dataclass(frozen=True)
class DriverRun:
    """What one case's run of a driver gave: its exit status, stdout and stderr."""

    status: int
    stdout: str
    stderr: str


@dataclass(frozen=True)
class _Server:
    """One running server and the file its own stderr goes to (what an import that fails says)."""

    process: subprocess.Popen[str]
    log: Path


#: A server's key: its driver and its environment, per-test variables left out.
_Key = tuple[str, tuple[tuple[str, str], ...]]


class ServedDrivers:
    """Forking servers keyed by (driver, environment): a case sends its arguments and the
    variables that differ per case to the server of its driver and source."""

    def __init__(self) -> None:
        self._servers: dict[_Key, _Server] = {}
        self._files = tempfile.TemporaryDirectory(prefix="served-drivers-")
        self._cases = 0

    def run(self, driver: Path, env: Mapping[str, str], argv: Sequence[str], case_env: Mapping[str, str | None], timeout_s: float) -> DriverRun:
        """Run ``driver`` on ``argv`` in a child of the server started with ``env`` (the whole
        environment), with ``case_env`` set in that child alone (``None`` unsets). A server that
        does not answer in ``timeout_s`` is killed, so the next case starts a new one."""
        key = _key(driver, env)
        server = self._servers.get(key) or self._start(key)
        self._cases += 1
        out, err = (Path(self._files.name) / f"{self._cases}.{stream}" for stream in ("out", "err"))
        process = server.process
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps({"argv": list(argv), "env": dict(case_env), "out": str(out), "err": str(err)}) + "\n")
        process.stdin.flush()
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            answered = bool(selector.select(timeout_s))
        answer = process.stdout.readline() if answered else ""
        if not answer:
            del self._servers[key]
            _stop(process, wait_s=0)
            why = f"did not answer within {timeout_s:g} s" if not answered else f"ended (exit status {process.returncode})"
            raise RuntimeError(f"the server of {driver.name} {why}:\n{server.log.read_text()[-3000:]}")
        return DriverRun(json.loads(answer)["status"], out.read_text(), err.read_text())

    def _start(self, key: _Key) -> _Server:
        log = Path(self._files.name) / f"server{len(self._servers)}.err"
        with log.open("w") as errors:
            process = subprocess.Popen([sys.executable, str(SERVER), key[0]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, text=True, env=dict(key[1]), start_new_session=True)
        self._servers[key] = _Server(process, log)
        return self._servers[key]

    def close(self) -> None:
        """Stop every server (closing its stdin ends it) and remove the case files."""
        for server in self._servers.values():
            _stop(server.process, wait_s=30)
        self._servers.clear()
        self._files.cleanup()


def _key(driver: Path, env: Mapping[str, str]) -> _Key:
    return str(driver), tuple(sorted((name, value) for name, value in env.items() if name not in PER_TEST))


def _stop(process: subprocess.Popen[str], wait_s: float) -> None:
    """End a server: its stdin closed (it ends after the case it runs), else after ``wait_s`` it
    and the child it may still run are killed (the server leads a process group of its own)."""
    if process.stdin is not None and not process.stdin.closed:
        process.stdin.close()
    try:
        process.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
