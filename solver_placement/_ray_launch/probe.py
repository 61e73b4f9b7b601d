"""Look inside a fresh reservation: did every bundle land on its planned node, which GPU does it
hold, and which rendezvous port can each component's rank 0 use?

Ray picks GPU instances itself (lowest free first), so only a task running inside a bundle can
tell which GPU the bundle really holds (``gpu_match`` decides what to do about it). The same tasks find the ``MASTER_PORT`` of every component:
all ports of one node are bound *at the same time* by one task, so components whose rank 0
share a node get distinct ports (a port bound and closed in one task can be handed out again
to the next). The ports are released before the workers start; another program could take
one in between, which the worker's bind then reports (``Address already in use``).
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from solver_placement._errors import LaunchError
from solver_placement._ray_api import GetTimeoutError, PlacementGroup, PlacementGroupSchedulingStrategy, RayError, ray
from solver_placement._ray_launch.launch_plan import RayLaunchPlan


@ray.remote(num_cpus=0)
def _probe(port_count: int) -> tuple[str, list[str], list[int]]:
    """Runs inside a bundle: its node, the GPU ids Ray assigned, and ``port_count`` free ports."""
    with ExitStack() as held:
        ports = []
        for _ in range(port_count):
            sock = held.enter_context(socket.socket())
            sock.bind(("", 0))
            ports.append(sock.getsockname()[1])
    return ray.get_runtime_context().get_node_id(), [str(g) for g in ray.get_gpu_ids()], ports


def port_requests(launch_plan: RayLaunchPlan) -> dict[int, list[str]]:
    """Per bundle: the components whose ports its probe finds (all of a node on its first bundle)."""
    first_bundle_of_node: dict[int, int] = {}
    for index, bundle in enumerate(launch_plan.bundles):
        first_bundle_of_node.setdefault(bundle.node_rank, index)
    requests: dict[int, list[str]] = {}
    for name, processes in launch_plan.processes.items():
        if processes:
            requests.setdefault(first_bundle_of_node[processes[0].node_rank], []).append(name)
    return requests


@dataclass(frozen=True)
class Probed:
    """What the probe found: a free port per component, and per bundle the GPU ids Ray gave it."""

    ports: dict[str, int]
    gpus: list[list[str]]


def probe_bundles(launch_plan: RayLaunchPlan, groups: Sequence[PlacementGroup], timeout_s: float) -> Probed:
    """Check every bundle is on its planned node; its GPUs (``gpu_match`` or ``free_gpus`` judges
    them) and the master ports. ``groups``: the plan's placement groups, in order."""
    requests = port_requests(launch_plan)
    pending: list[Any] = []
    for index, (bundle, (group, position)) in enumerate(zip(launch_plan.bundles, launch_plan.slots())):
        strategy = PlacementGroupSchedulingStrategy(groups[group], placement_group_bundle_index=position)
        options: dict[str, Any] = {"scheduling_strategy": strategy}
        options["num_gpus" if "GPU" in bundle.resources else "num_cpus"] = 0.0001
        pending.append(_probe.options(**options).remote(len(requests.get(index, []))))
    try:
        answers = ray.get(pending, timeout=timeout_s)
    except GetTimeoutError:
        raise LaunchError(f"probing the reserved bundles took longer than {timeout_s:g} s") from None
    except RayError as error:
        raise LaunchError(f"probing the reserved bundles failed: {str(error).strip().splitlines()[-1]}") from None
    for index, (node_id, _, _) in enumerate(answers):
        bundle = launch_plan.bundles[index]
        if node_id != bundle.node_id:
            raise LaunchError(f"bundle {index} ({bundle.item} of node {bundle.node_rank}) landed on Ray node {node_id[:12]}, not {bundle.node_id[:12]}")
    ports = {name: port for index, names in requests.items() for name, port in zip(names, answers[index][2])}
    return Probed(ports, [gpu_ids for _, gpu_ids, _ in answers])
