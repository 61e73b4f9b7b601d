"""Start a NUMA-bound worker on the CPUs its record names (``NUMA_CPUS``, from ``numa_bind``).

Ray has no option for a CPU set, so the worker binds itself, first thing in its constructor:
every thread of the process is moved to the CPUs (as ``taskset -a`` would), so the threads the
worker starts afterwards (PyTorch's pools, data loaders, NCCL's proxies) inherit them, and Linux's
default local allocation then places the memory they touch on those CPUs' NUMA node. A strict
memory policy (``numactl --membind``) is not applied: Python has no portable call for it; the
worker finds the node in ``NUMA_NODES`` if it wants one. A CPU set the node cannot honour (a
container's cpuset without those CPUs) fails the worker's start with the reason, naming the
variable and where its value came from.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

from solver_placement._ray_launch.launch_plan import ProcessLaunch

#: The variable the worker binds to (a Linux CPU list, ``"0-31,64-95"``).
CPU_VARIABLE = "NUMA_CPUS"


def needs_binding(processes: Sequence[ProcessLaunch]) -> bool:
    """Whether any process of a component is to be bound (its component set ``numa_bind``)."""
    return any(CPU_VARIABLE in process.env for process in processes)


def bound_class(worker_cls: type) -> type:
    """A subclass of ``worker_cls`` whose constructor binds the process to ``NUMA_CPUS`` (when
    its environment has it) before the user's constructor runs."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        bind_to_cpus(os.environ.get(CPU_VARIABLE, ""))
        worker_cls.__init__(self, *args, **kwargs)  # type: ignore[misc]  # the user's class, called on its subclass

    return type(worker_cls.__name__, (worker_cls,), {"__init__": __init__, "__module__": worker_cls.__module__})


def bind_to_cpus(cpu_list: str) -> None:
    """Move every thread of this process to the CPUs of ``cpu_list`` (nothing when empty).

    Runs inside the worker, sent by value (``by_value.py``): the package's own helpers are
    imported only on a failure's branch."""
    if not cpu_list:
        return
    cpus = _cpus_of(cpu_list)
    if not hasattr(os, "sched_setaffinity"):
        from solver_placement._errors import LaunchError

        raise LaunchError(f"{CPU_VARIABLE}={cpu_list}: binding a process to CPUs needs Linux (numa_bind)")
    try:
        os.sched_setaffinity(0, cpus)
    except OSError as error:
        from solver_placement._errors import LaunchError

        allowed = ",".join(map(str, sorted(os.sched_getaffinity(0))))
        raise LaunchError(
            f"{CPU_VARIABLE}={cpu_list} (cluster.gpu_topology, numa_bind): this node does not let the worker run there "
            f"({error.strerror}); it may use CPUs {allowed}"
        ) from None
    for thread in _other_threads():
        try:
            os.sched_setaffinity(thread, cpus)
        except OSError:
            pass  # the thread ended meanwhile, or is not ours to move


def _cpus_of(cpu_list: str) -> set[int]:
    """The CPUs of a Linux CPU list as the plan writes it (``"0-31,64-95"``); anything else is
    read, and refused by name, by the rank-list grammar the records were checked with."""
    try:
        cpus: set[int] = set()
        for piece in cpu_list.split(","):
            first, _, last = piece.partition("-")
            low, high = int(first), int(last or first)
            if not 0 <= low <= high:
                raise ValueError(piece)
            cpus.update(range(low, high + 1))
        return cpus
    except ValueError:
        from solver_placement._cluster.ranks import parse_rank_list

        return set(parse_rank_list(cpu_list, "CPU list", CPU_VARIABLE).tolist())


def _other_threads() -> list[int]:
    """Ids of this process's threads other than the calling one (Linux's ``/proc/self/task``)."""
    try:
        threads = [int(name) for name in os.listdir("/proc/self/task")]
    except OSError:
        return []
    return [thread for thread in threads if thread != threading.get_native_id()]
