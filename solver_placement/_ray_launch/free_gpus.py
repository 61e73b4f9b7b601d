"""A plan on a model of the free GPUs only (``cluster.free_gpus_only``, what
``Cluster.from_ray(available=True)`` reads): the devices are the ones Ray gives.

Beside other jobs, which of a node's GPUs are free is not known before reserving: Ray counts
them but does not say which, and a placement group cannot ask for an id. So the model numbers a
node's free GPUs 0, 1, ...; the plan reserves a bundle for every id a process on the node sees;
once reserved, the probe tells which device each bundle holds, and that device replaces the id
in what the workers see: the device variable (``CUDA_VISIBLE_DEVICES``), ``LOCAL_HARDWARE_RANKS``
of GPU processes, and the EGL variables (without ``gpu_topology``, which ``free_gpus_only``
excludes, the EGL index is the CUDA id). Ray's bookkeeping and the workers' devices then agree
by construction, so no second attempt is needed (unlike ``gpu_match``). Pure functions of plain
data: no Ray import, tested without Ray.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from solver_placement._ray_launch.launch_plan import DEVICE_ENV, ProcessLaunch, RayLaunchPlan
from solver_placement._specification.environment import EGL_VARIABLES

DEVICE_VARIABLES = tuple(variable for variable, _ in DEVICE_ENV.values())


def given_devices(launch_plan: RayLaunchPlan, seen: Sequence[Sequence[str]]) -> dict[int, dict[str, str]]:
    """Per node, each planned GPU id and the device Ray gave its bundle (``seen``: per bundle, the ids Ray gave it)."""
    given: dict[int, dict[str, str]] = {}
    for bundle, ids in zip(launch_plan.bundles, seen):
        if "GPU" in bundle.resources:
            given.setdefault(bundle.node_rank, {})[bundle.item.split()[1]] = ids[0]
    return given


def with_given_devices(launch_plan: RayLaunchPlan, seen: Sequence[Sequence[str]]) -> RayLaunchPlan:
    """The plan whose workers see the devices Ray gave (the module docstring lists the variables)."""
    given = given_devices(launch_plan, seen)
    return launch_plan.with_env(
        {name: [_translated(launch_plan, p, given.get(p.node_rank, {})) for p in launches] for name, launches in launch_plan.processes.items()}
    )


def _translated(launch_plan: RayLaunchPlan, p: ProcessLaunch, devices: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``p`` that name GPU ids, with each id replaced by its device."""
    names = [*DEVICE_VARIABLES, *EGL_VARIABLES]
    if "GPU" in launch_plan.bundles[p.bundle_index].resources:
        names.append("LOCAL_HARDWARE_RANKS")
    return {name: ",".join(devices[gpu] for gpu in p.env[name].split(",") if gpu) for name in names if name in p.env}
