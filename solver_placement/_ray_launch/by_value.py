"""The library's code that runs inside launched workers is sent to Ray by value.

Ray sends a class or a function by reference when its module can be imported by name, and the
worker then imports that module, and with it solver_placement's package: OR-Tools, pandas and
numpy, about 1.6 s of CPU in every worker beyond Ray's own 0.8 s (measured on 2 cores: 8
NUMA-bound actors took 20 s to start, 11 s once sent by value). The modules of
:data:`RUN_IN_WORKERS` hold what a worker runs (the probe task, the landing check's actor, the
NUMA-binding constructor, verl's fused worker); cloudpickle sends their functions and classes
whole, so a worker imports only what those name: the standard library and Ray. That code names
the package's own helpers only inside a failure branch (a malformed CPU list, a CPU set the node
refuses), imported there, where the cost does not matter.
"""

from __future__ import annotations

import importlib

from solver_placement._ray_api import ray

#: The modules whose functions and classes run inside Ray workers.
RUN_IN_WORKERS = (
    "solver_placement._ray_launch.probe",
    "solver_placement._ray_launch.cpu_binding",
    "solver_placement._ray_launch.landing_check",
    "solver_placement._dispatch.fuse",
)


def send_worker_code_by_value() -> None:
    """Have Ray send :data:`RUN_IN_WORKERS`' code by value (once is enough; again is harmless)."""
    for name in RUN_IN_WORKERS:
        ray.cloudpickle.register_pickle_by_value(importlib.import_module(name))


__all__ = ["RUN_IN_WORKERS", "send_worker_code_by_value"]
