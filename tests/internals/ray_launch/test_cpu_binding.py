"""Binding a worker to its ``NUMA_CPUS``: every thread of the process moves, the plan's class is
wrapped only where a process is bound, and a CPU set the node refuses says why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from solver_placement import LaunchError
from solver_placement._ray_launch.cpu_binding import bind_to_cpus, bound_class, needs_binding
from solver_placement._ray_launch.launch_plan import ProcessLaunch

CPUS = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def _launch(env: dict[str, str]) -> ProcessLaunch:
    return ProcessLaunch("a", 0, 0, "node", 0, 1.0, {}, env, None, "job/a/0")


@pytest.mark.skipif(len(CPUS) < 2, reason="needs two CPUs to move threads between")
def test_every_thread_of_the_process_moves_to_the_cpus() -> None:
    script = textwrap.dedent(f"""
        import json, os, threading
        from solver_placement._ray_launch.cpu_binding import bind_to_cpus
        started, stop = threading.Event(), threading.Event()
        def work():
            started.set(); stop.wait()
        thread = threading.Thread(target=work); thread.start(); started.wait()
        bind_to_cpus("{CPUS[-1]}")
        later = []
        spawned = threading.Thread(target=lambda: later.append(sorted(os.sched_getaffinity(0)))); spawned.start(); spawned.join()
        print(json.dumps([sorted(os.sched_getaffinity(0)), sorted(os.sched_getaffinity(thread.native_id)), later[0]]))
        stop.set(); thread.join()
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(result.stdout) == [[CPUS[-1]]] * 3  # the caller, a thread running before, a thread started after


def test_a_cpu_the_node_does_not_offer_fails_naming_the_variable_and_its_source() -> None:
    with pytest.raises(LaunchError, match=r"NUMA_CPUS=16000 \(cluster.gpu_topology, numa_bind\): this node does not let the worker run there"):
        bind_to_cpus("16000")
    bind_to_cpus("")  # nothing to bind: nothing happens


def test_only_components_with_bound_processes_get_the_binding_constructor() -> None:
    class Worker:
        def __init__(self, value: int) -> None:
            self.value = value

    assert not needs_binding([_launch({"RANK": "0"})]) and needs_binding([_launch({}), _launch({"NUMA_CPUS": "0"})])
    wrapped = bound_class(Worker)
    assert wrapped.__name__ == "Worker" and issubclass(wrapped, Worker)
    assert wrapped(3).value == 3  # no NUMA_CPUS in this process's environment: the user's constructor only
