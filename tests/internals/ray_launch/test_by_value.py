"""The library's code that runs inside Ray workers reaches them by value: a worker that
unpickles it never imports solver_placement (whose import, with OR-Tools and pandas, costs a
launched worker about 1.6 s of CPU), nor does a user's class whose methods are marked for
dispatch, and what it unpickles still works there."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import ray

from solver_placement._dispatch.fuse import fuse
from solver_placement._dispatch.modes import Dispatch, register
from solver_placement._ray_launch.by_value import send_worker_code_by_value
from solver_placement._ray_launch.cpu_binding import bound_class
from solver_placement._ray_launch.landing_check import PlacementProbe
from solver_placement._ray_launch.probe import _probe

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

#: Unpickles what the test sends and builds the workers, as a Ray worker would; prints whether
#: solver_placement was imported by any of it (the probe task's body needs a live Ray to run).
WORKER = textwrap.dedent("""
    import os, pickle, sys
    os.environ["NUMA_CPUS"] = ",".join(map(str, sorted(os.sched_getaffinity(0))))
    probe, bound, fused, probe_task = pickle.loads(sys.stdin.buffer.read())
    assert bound(3).value == 3 and fused({"role": ((4,), {})}).role_plus(1) == 5
    print(probe.__name__, "solver_placement" in sys.modules)
""")


class Role:
    def __init__(self, value: int) -> None:
        self.value = value

    @register(dispatch_mode=Dispatch.DP_COMPUTE_SPLIT)  # a user's marked method travels with its class
    def plus(self, other: int) -> int:
        return self.value + other


def test_the_code_workers_run_is_sent_without_the_package() -> None:
    send_worker_code_by_value()
    payload = ray.cloudpickle.dumps((PlacementProbe, bound_class(Role), fuse({"role": Role}), _probe._function))
    run = subprocess.run([sys.executable, "-c", WORKER], input=payload, capture_output=True, timeout=120, check=False, cwd="/")
    assert run.returncode == 0, run.stderr.decode()
    assert run.stdout.decode().split() == ["PlacementProbe", "False"]
