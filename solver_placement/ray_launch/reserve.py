"""Reserve a plan on Ray, check it, and start actors on exactly their hardware.

``reserve`` creates one placement group for the whole plan (all or nothing), probes every GPU
bundle to confirm Ray handed it the planned GPU and picks a free ``MASTER_PORT`` per component
on the node of its rank 0. ``Reservation.launch`` starts one component's actors on it. Any
failure removes everything created so far: no placement group or actor is left behind.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, RayError
from ray.util.placement_group import PlacementGroup, placement_group, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from solver_placement.cluster.cluster import Cluster
from solver_placement.errors import LaunchError
from solver_placement.ray_launch.plan import NODE_ID_LABEL, RayLaunchPlan, to_ray
from solver_placement.ray_launch.pools import fuse
from solver_placement.ray_launch.session import LocalRayCluster, ensure_ray, ray_nodes
from solver_placement.ray_launch.worker_group import WorkerGroup
from solver_placement.records import Placement
from solver_placement.solver.solution import Solution


@ray.remote(num_cpus=0)
def _probe() -> tuple[str, list[str], int]:
    """Runs inside a bundle: the node, the GPU ids Ray assigned, and a free TCP port."""
    with socket.socket() as sock:
        sock.bind(("", 0))
        port = sock.getsockname()[1]
    return ray.get_runtime_context().get_node_id(), [str(g) for g in ray.get_gpu_ids()], port


class Reservation(AbstractContextManager):
    """A reserved plan: its placement group, verified, ready to start components on."""

    def __init__(
        self,
        plan: RayLaunchPlan,
        pg: PlacementGroup,
        placements: Mapping[str, Sequence[Placement]],
        local: LocalRayCluster | None,
        tp_sizes: Mapping[str, int] | None = None,
    ) -> None:
        self.plan = plan
        self.pg = pg
        self.placements = dict(placements)
        self.tp_sizes = dict(tp_sizes or {})
        self._local = local
        self._groups: list[WorkerGroup] = []

    def launch(
        self,
        component: str,
        worker_cls: type,
        *args: Any,
        timeout_s: float = 120.0,
        tp_size: int | None = None,
        env_in_constructor: bool = False,
        **kwargs: Any,
    ) -> WorkerGroup:
        """Start ``worker_cls`` (a plain class) once per process of ``component``.

        By default each actor's env vars go through Ray's ``runtime_env`` (set before the worker
        process starts). ``env_in_constructor=True`` applies them as the first step of the
        actor's constructor instead, which starts actors about twice as fast (they can use Ray's
        prestarted workers) but is only safe if nothing initialises the GPU at import time.
        ``tp_size`` (default: the component's ``tensor_parallel_size``) groups ranks for the
        data-parallel dispatch modes.
        """
        if component not in self.plan.processes:
            raise LaunchError(f"component {component!r} is not in the plan; planned: {', '.join(self.plan.processes)}")
        remote_plain: Any = ray.remote(worker_cls)
        remote_env: Any = ray.remote(_env_first(worker_cls)) if env_in_constructor else None
        actors: list[Any] = []
        try:
            for process in self.plan.processes[component]:
                options: dict[str, Any] = {
                    "num_cpus": process.num_cpus,
                    "num_gpus": 0,
                    "scheduling_strategy": PlacementGroupSchedulingStrategy(self.pg, placement_group_bundle_index=process.bundle_index),
                }
                if process.resources:
                    options["resources"] = process.resources
                if remote_env is not None and not process.py_executable:
                    actors.append(remote_env.options(**options).remote(process.env, *args, **kwargs))
                    continue
                options["runtime_env"] = {"env_vars": process.env}
                if process.py_executable:
                    options["runtime_env"]["py_executable"] = process.py_executable
                actors.append(remote_plain.options(**options).remote(*args, **kwargs))
            ray.get([actor.__ray_ready__.remote() for actor in actors], timeout=timeout_s)
        except (RayError, GetTimeoutError) as error:
            for actor in actors:
                ray.kill(actor, no_restart=True)
            reason = _first_line(error) if not isinstance(error, GetTimeoutError) else f"not ready within {timeout_s} s"
            raise LaunchError(f"{component}: starting {worker_cls.__name__} failed: {reason}") from None
        tp = tp_size if tp_size is not None else self.tp_sizes.get(component, 1)
        group = WorkerGroup(component, actors, self.placements[component], worker_cls, tp)
        self._groups.append(group)
        return group

    def launch_fused(
        self, component: str, role_classes: Mapping[str, type], role_args: Mapping[str, Any] | None = None, *, timeout_s: float = 120.0
    ) -> dict[str, WorkerGroup]:
        """One fused actor per process of ``component`` serving every role (verl's WorkDict);
        returns a worker-group view per role whose methods reach that role's instance."""
        fused = self.launch(component, fuse(role_classes), role_args or {}, timeout_s=timeout_s)
        return {
            role: WorkerGroup(component, fused.actors, fused.placements, cls, fused.tp_size, method_prefix=f"{role}_")
            for role, cls in role_classes.items()
        }

    def release(self) -> None:
        """Kill every actor started on the reservation and remove the placement group."""
        for group in self._groups:
            group.shutdown()
        self._groups = []
        _remove(self.pg)
        if self._local is not None:
            local, self._local = self._local, None
            local.shutdown()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _env_first(worker_cls: type) -> type:
    """A subclass whose constructor applies the planned env vars before the user's runs."""

    def __init__(self: Any, planned_env: Mapping[str, str], *args: Any, **kwargs: Any) -> None:
        os.environ.update(planned_env)
        worker_cls.__init__(self, *args, **kwargs)  # type: ignore[misc]  # the user's class, called on its subclass

    return type(worker_cls.__name__, (worker_cls,), {"__init__": __init__, "__module__": worker_cls.__module__})


def plan(
    source: Solution | Mapping[str, Sequence[Placement]],
    cluster: Cluster | None = None,
    *,
    job_name: str = "solver-placement",
    cpus_per_process: float = 1.0,
) -> RayLaunchPlan:
    """The launch plan against the connected Ray cluster (nothing is reserved)."""
    placements, cluster = _placements_and_cluster(source, cluster)
    return to_ray(placements, cluster, ray_nodes(), job_name=job_name, cpus_per_process=cpus_per_process)


def reserve(
    source: Solution | Mapping[str, Sequence[Placement]],
    cluster: Cluster | None = None,
    *,
    timeout_s: float = 60.0,
    address: str | None = None,
    job_name: str = "solver-placement",
    cpus_per_process: float = 1.0,
) -> Reservation:
    """Connect to (or start) Ray, reserve the whole plan at once and verify it."""
    placements, cluster = _placements_and_cluster(source, cluster)
    local = ensure_ray(cluster, address)
    pg = None
    try:
        launch_plan = to_ray(placements, cluster, ray_nodes(), job_name=job_name, cpus_per_process=cpus_per_process)
        pg = placement_group(
            [bundle.resources for bundle in launch_plan.bundles],
            strategy="PACK",
            name=f"{job_name}-reservation",
            bundle_label_selector=[{NODE_ID_LABEL: bundle.node_id} for bundle in launch_plan.bundles],
        )
        if not pg.wait(timeout_s):
            raise LaunchError(_unfit_message(launch_plan, timeout_s))
        launch_plan = launch_plan.with_master_ports(_probe_bundles(launch_plan, pg, timeout_s))
    except BaseException:
        if pg is not None:
            _remove(pg)
        if local is not None:
            local.shutdown()
        raise
    tp_sizes = (
        {name: spec.constraints.tensor_parallel_size for name, spec in source.spec.components.items()}
        if isinstance(source, Solution)
        else {}
    )
    return Reservation(launch_plan, pg, placements, local, tp_sizes)


def launch(
    worker_cls: type,
    placements: Sequence[Placement],
    *args: Any,
    cluster: Cluster | None = None,
    timeout_s: float = 60.0,
    address: str | None = None,
    **kwargs: Any,
) -> WorkerGroup:
    """Start ``worker_cls`` once per placement (one component) on its own reservation.

    The group owns the reservation: ``group.shutdown()`` (or leaving its ``with``) frees it.
    """
    if not placements:
        raise LaunchError("launch needs at least one placement")
    component = placements[0].component
    reservation = reserve({component: list(placements)}, cluster, timeout_s=timeout_s, address=address)
    try:
        group = reservation.launch(component, worker_cls, *args, timeout_s=timeout_s, **kwargs)
    except BaseException:
        reservation.release()
        raise
    reservation._groups.remove(group)
    group._release = reservation.release
    return group


def _placements_and_cluster(
    source: Solution | Mapping[str, Sequence[Placement]], cluster: Cluster | None
) -> tuple[dict[str, list[Placement]], Cluster]:
    if isinstance(source, Solution):
        return source.placements_by_component(), cluster or source.cluster
    if cluster is None:
        raise LaunchError("launching placements needs the cluster model: pass cluster=... (or a Solution)")
    return {name: list(records) for name, records in source.items()}, cluster


def _probe_bundles(launch_plan: RayLaunchPlan, pg: PlacementGroup, timeout_s: float) -> dict[str, int]:
    """Check every GPU bundle holds its planned GPU on its planned node; find master ports."""
    probed: dict[int, Any] = {}
    for index, bundle in enumerate(launch_plan.bundles):
        options: dict[str, Any] = {"scheduling_strategy": PlacementGroupSchedulingStrategy(pg, placement_group_bundle_index=index)}
        options["num_gpus" if "GPU" in bundle.resources else "num_cpus"] = 0.0001
        probed[index] = _probe.options(**options).remote()
    try:
        answers = dict(zip(probed, ray.get(list(probed.values()), timeout=timeout_s)))
    except GetTimeoutError:
        raise LaunchError(f"probing the reserved bundles took longer than {timeout_s} s") from None
    for index, bundle in enumerate(launch_plan.bundles):
        node_id, gpu_ids, _ = answers[index]
        if node_id != bundle.node_id:
            raise LaunchError(f"bundle {index} ({bundle.item} of node {bundle.node_rank}) landed on Ray node {node_id[:12]}, not {bundle.node_id[:12]}")
        planned = bundle.item.split()[1]
        if "GPU" in bundle.resources and gpu_ids != [planned]:
            raise LaunchError(
                f"bundle {index} should hold GPU {planned} of node {bundle.node_rank} but Ray gave it GPU {','.join(gpu_ids) or '-'} "
                "(another job holds that GPU); free it or re-plan"
            )
    return {name: answers[processes[0].bundle_index][2] for name, processes in launch_plan.processes.items()}


def _unfit_message(launch_plan: RayLaunchPlan, timeout_s: float) -> str:
    from ray._private.state import available_resources_per_node

    available = available_resources_per_node()
    lacking = []
    for node_rank, node_id in enumerate(launch_plan.node_ids):
        wanted: dict[str, float] = {}
        for bundle in launch_plan.bundles:
            if bundle.node_rank == node_rank:
                for key, value in bundle.resources.items():
                    wanted[key] = wanted.get(key, 0.0) + value
        have = available.get(node_id, {})
        short = [f"{key} {value:g} (free {have.get(key, 0.0):g})" for key, value in sorted(wanted.items()) if have.get(key, 0.0) + 1e-9 < value]
        if short:
            items = [b.item for b in launch_plan.bundles if b.node_rank == node_rank]
            lacking.append(f"node {node_rank} bundles [{', '.join(items[:6])}{' ...' if len(items) > 6 else ''}] need {', '.join(short)}")
    detail = "; ".join(lacking) or "resources are held by other jobs or pending"
    return f"the reservation did not fit within {timeout_s} s: {detail}"


def _remove(pg: PlacementGroup) -> None:
    try:
        remove_placement_group(pg)
    except (RayError, ValueError):
        pass  # already removed


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    for line in reversed(text):
        if line.strip() and not line.startswith(" "):
            return line.strip()
    return type(error).__name__
