"""Running cases in a few long-lived worker processes (``worker.py``), restarting a worker that
crashed or hung and recording that case as a failure.

One subprocess per case would cost an interpreter and an OR-Tools import (about a second) each;
a pool of ``workers`` processes pays it once per worker.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

WORKER = Path(__file__).resolve().parent / "worker.py"
#: A case still running after this long is killed and recorded as ``hung``.
KILL_AFTER_S = 60.0


@dataclass(frozen=True)
class Result:
    """What one case did."""

    kind: str
    index: int
    outcome: str
    seconds: float
    peak_bytes: int
    #: The error's message when the case was refused (cut), else "".
    message: str = ""


class _Worker:
    def __init__(self) -> None:
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        self.process = subprocess.Popen(
            [sys.executable, str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
        )
        ready = self.process.stdout.readline() if self.process.stdout else ""
        if not ready:
            raise RuntimeError("hostile worker did not start")
        self.case: tuple[str, int] | None = None
        self.started = 0.0

    def send(self, kind: str, index: int) -> None:
        assert self.process.stdin is not None
        self.case, self.started = (kind, index), time.perf_counter()
        self.process.stdin.write(f"{kind} {index}\n")
        self.process.stdin.flush()

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def run_cases(cases: list[tuple[str, int]], workers: int = 2) -> list[Result]:
    """Run every ``(kind, index)`` case; a crash or a hang is a result too (the worker restarts)."""
    pending = list(reversed(cases))
    results: list[Result] = []
    pool = [_Worker() for _ in range(min(workers, len(cases)))]
    selector = selectors.DefaultSelector()
    for worker in pool:
        selector.register(worker.process.stdout, selectors.EVENT_READ, worker)  # type: ignore[arg-type]
        if pending:
            worker.send(*pending.pop())
    try:
        while any(worker.case is not None for worker in pool):
            for key, _ in selector.select(timeout=1.0):
                worker = key.data
                results.append(_answer(worker, worker.process.stdout.readline()))
                worker = _next(worker, pending, selector, pool)
            for worker in list(pool):
                if worker.case is not None and time.perf_counter() - worker.started > KILL_AFTER_S:
                    worker.process.kill()  # the next select reads EOF and records it as hung
    finally:
        for worker in pool:
            worker.stop()
    return results


def _answer(worker: _Worker, line: str) -> Result:
    assert worker.case is not None
    kind, index = worker.case
    elapsed = time.perf_counter() - worker.started
    if not line:
        code = worker.process.wait()
        outcome = f"hung (killed after {KILL_AFTER_S:.0f} s)" if elapsed >= KILL_AFTER_S else f"crashed: exit status {code}"
        return Result(kind, index, outcome, elapsed, 0)
    answer = json.loads(line)
    return Result(kind, index, answer["outcome"], answer["seconds"], answer["peak_bytes"], answer["message"])


def _next(worker: _Worker, pending: list[tuple[str, int]], selector: selectors.BaseSelector, pool: list[_Worker]) -> _Worker:
    """Give ``worker`` its next case, replacing it first if it died."""
    if worker.process.poll() is not None:
        selector.unregister(worker.process.stdout)  # type: ignore[arg-type]
        pool.remove(worker)
        worker = _Worker()
        pool.append(worker)
        selector.register(worker.process.stdout, selectors.EVENT_READ, worker)  # type: ignore[arg-type]
    worker.case = None
    if pending:
        worker.send(*pending.pop())
    return worker
