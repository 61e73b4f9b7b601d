"""A long-lived process that runs hostile cases one by one under a memory cap.

Started by ``pool.py``; reads ``hostile N`` or ``mutated N`` lines on stdin and answers one JSON
line per case: the outcome (``placed``, ``refused:<PlacementError subclass>`` or
``escaped:<other exception>``), the wall time and the peak resident memory of the case (the
peak is reset before each case through ``/proc/self/clear_refs``). A crash or a hang is seen by
the pool, which restarts the worker. The address space is capped at ``CAP_BYTES`` so a runaway
case fails here rather than on the machine, and the library's memory budget is set below it,
as a service reading configs from others would set it.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

#: Address-space cap of a worker (virtual memory: the imports alone map ~300 MB).
CAP_BYTES = 2 << 30
#: The library's memory budget inside a worker: a case's model must fit well under 1 GiB.
BUDGET_BYTES = 512 << 20
#: The size limits of a service that must answer within seconds (a valid spec of 80,000 GPUs
#: takes longer than that to build, which is not what this suite is about; copying the default
#: 4 M values of a mapping takes about 4 s, 250,000 still hold an explicit list of 100,000 processes).
SERVICE_LIMITS = {"max_nodes": 4_096, "max_processes": 100_000, "max_copied_values": 250_000}
#: CP-SAT's time limit for a case that is valid and hard.
SOLVE_LIMIT_S = 3.0


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")


def _peak_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def _outcome(source: Any) -> tuple[str, str]:
    """What the case ended in, and the error's message (cut) when it was refused."""
    from surfaces import Run

    from solver_placement import PlacementError, solve, verify

    try:
        if isinstance(source, Run):
            source.action()
        else:
            solution = solve(source, time_limit_s=SOLVE_LIMIT_S)
            verify(solution.spec, solution.placements_by_component())
    except PlacementError as error:
        return f"refused:{type(error).__name__}", str(error)[:2_000]
    except BaseException as error:  # noqa: BLE001 - anything else is what the suite looks for
        return f"escaped:{type(error).__name__}: {str(error)[:300]!r}", ""
    return "placed", ""


def main() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP_BYTES, CAP_BYTES))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import corpus

    from solver_placement import limits

    limits.configure(memory_budget_bytes=BUDGET_BYTES, **SERVICE_LIMITS)
    cases = corpus.hostile_cases()
    print(json.dumps({"ready": len(cases)}), flush=True)
    for line in sys.stdin:
        kind, index = line.split()
        _reset_peak()
        started = time.process_time()
        message = ""
        try:
            source = cases[int(index)][2]() if kind == "hostile" else corpus.mutated(int(index))
            started = time.process_time()  # the library's time, not the time to build the case
            outcome, message = _outcome(source)
        except BaseException as error:  # noqa: BLE001 - building the case failed: report, keep serving
            outcome = f"escaped:{type(error).__name__} while building: {str(error)[:200]!r}"
        # CPU seconds of this process (every thread): the work the input made the library do,
        # which a loaded machine or a second test worker beside it does not inflate; a case that
        # hangs (waits without working) is caught by the pool's wall-clock kill instead.
        seconds = time.process_time() - started
        print(json.dumps({"outcome": outcome, "message": message, "seconds": seconds, "peak_bytes": _peak_bytes()}), flush=True)


if __name__ == "__main__":
    main()
