"""Launch a solution's processes as tiny probe actors and check they landed where planned.

Used by ``solver-placement launch FILE --run``: the real launch path (reservation, probe,
per-process env), with a worker that only reports its Ray node and device environment, so the
README's main command shows an actual launch on an embedded local Ray.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from solver_placement._ray_api import ray
from solver_placement._ray_launch.launch_plan import DEVICE_ENV, RayLaunchPlan
from solver_placement._ray_launch.reserve import reserve
from solver_placement._solver.solution import Solution

REPORTED_ENV = ("CUDA_VISIBLE_DEVICES", "RANK", "WORLD_SIZE", "LOCAL_RANK", "NODE_RANK", "MASTER_ADDR", "MASTER_PORT")


class PlacementProbe:
    """A worker that says where it runs."""

    def where(self) -> tuple[str, dict[str, str | None]]:
        return ray.get_runtime_context().get_node_id(), {key: os.environ.get(key) for key in REPORTED_ENV}


@dataclass(frozen=True)
class LandedProcess:
    """One process: where the plan put it and what the running actor saw."""

    component: str
    rank: int
    node_rank: int
    planned_devices: str
    seen_devices: str | None
    on_planned_node: bool

    @property
    def exact(self) -> bool:
        return self.on_planned_node and self.planned_devices == self.seen_devices


def launch_and_check(
    solution: Solution, timeout_s: float = 120.0, address: str | None = None, progress: Callable[[str], None] | None = None
) -> tuple[RayLaunchPlan, list[LandedProcess]]:
    """Reserve the plan, start a probe actor per process, compare, and release everything.

    ``progress`` is told each stage as it starts (the reservation's, then each component's actors)."""
    landed: list[LandedProcess] = []
    with reserve(solution, timeout_s=timeout_s, address=address, cpus_per_process=0.1, progress=progress) as reservation:
        plan = reservation.plan
        for position, (component, processes) in enumerate(plan.processes.items(), start=1):
            if progress is not None:
                progress(f"starting {len(processes)} probe actor(s) of {component} (component {position} of {len(plan.processes)})")
            group = reservation.launch(component, PlacementProbe, timeout_s=timeout_s)
            for process, (node_id, env) in zip(processes, group.execute_all("where")):
                device_var = next(var for var, _ in DEVICE_ENV.values() if var in process.env)
                landed.append(
                    LandedProcess(component, process.rank, process.node_rank, process.env[device_var], env.get(device_var), node_id == process.node_id)
                )
            group.shutdown()
    return plan, landed
