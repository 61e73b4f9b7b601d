"""Reserve a plan on Ray, check it, and start actors on exactly their hardware.

``reserve`` creates the plan's placement groups (one for the whole plan, or one per required
topology domain: ``domains``; all or nothing, under names no other reservation shares:
``placement_groups``), probes every bundle to confirm Ray handed it the planned node and GPU
(or, for a model of the free GPUs only, which device it holds: ``free_gpus``) and picks a
distinct free ``MASTER_PORT`` per component on the node of its rank 0 (``probe``).
``Reservation.launch`` starts one component's actors on it. Any failure, Ctrl-C included,
removes everything created so far: no placement group or actor is left behind.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

from solver_placement._cluster.cluster import Cluster
from solver_placement._cluster.ray_nodes import DEFAULT_CONNECT_TIMEOUT_S
from solver_placement._dispatch.fuse import fuse
from solver_placement._dispatch.parallel_layout import ParallelLayout
from solver_placement._dispatch.worker_group import WorkerGroup
from solver_placement._errors import LaunchError, agreeing, counted
from solver_placement._ray_api import PlacementGroup, PlacementGroupSchedulingStrategy, RayError, ray
from solver_placement._ray_launch.by_value import send_worker_code_by_value
from solver_placement._ray_launch.connect import ray_nodes
from solver_placement._ray_launch.cpu_binding import bound_class, needs_binding
from solver_placement._ray_launch.domain_groups import required_domains
from solver_placement._ray_launch.features import has_topology_strategy
from solver_placement._ray_launch.free_gpus import with_given_devices
from solver_placement._ray_launch.gpu_match import idle_gpus_for_next_attempt
from solver_placement._ray_launch.launch_plan import ProcessLaunch, RayLaunchPlan, to_ray
from solver_placement._ray_launch.placement_groups import create_groups, ray_error_line, remove_groups, wait_reserved
from solver_placement._ray_launch.probe import probe_bundles
from solver_placement._ray_launch.session import LocalRayCluster, ensure_ray
from solver_placement._records import Placement
from solver_placement._solver.solution import Solution

log = logging.getLogger(__name__)


class Reservation(AbstractContextManager):
    """A reserved plan: its placement groups, verified, ready to start components on."""

    def __init__(
        self,
        plan: RayLaunchPlan,
        placement_groups: Sequence[PlacementGroup],
        placements: Mapping[str, Sequence[Placement]],
        local: LocalRayCluster | None,
        solution: Solution | None = None,
    ) -> None:
        self.plan = plan
        #: Ray's placement groups of the reservation, in the order of ``plan.placement_groups``.
        self.placement_groups = list(placement_groups)
        self._slots = plan.slots()
        self.placements = dict(placements)
        #: The solved spec, when reserved from one: the source of each component's TP x PP layout.
        self.solution = solution
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
        ``tp_size`` groups ranks for the data-parallel dispatch modes; by default a reservation
        made from a Solution gives the group the spec's TP x PP layout (so MEGATRON_* modes see
        real pipeline stages), and records alone give one rank per data-parallel group.
        """
        if component not in self.plan.processes:
            raise LaunchError(f"component {component!r} is not in the plan; planned: {', '.join(self.plan.processes)}")
        started = bound_class(worker_cls) if needs_binding(self.plan.processes[component]) else worker_cls  # numa_bind
        plain_remote: Any = ray.remote(started)
        env_first_remote: Any = ray.remote(_env_first(started)) if env_in_constructor else None
        actors: list[Any] = []
        try:
            for process in self.plan.processes[component]:
                actors.append(self._start(process, plain_remote, env_first_remote, args, kwargs))
            _wait_ready(component, worker_cls, actors, timeout_s)
        except BaseException:
            for actor in actors:
                ray.kill(actor, no_restart=True)
            raise
        log.info("%s: %s started", component, counted(len(actors), f"{worker_cls.__name__} actor"))
        group = WorkerGroup(component, actors, self.placements[component], worker_cls, **self._layout(component, tp_size))
        self._groups.append(group)
        return group

    def _layout(self, component: str, tp_size: int | None) -> dict[str, Any]:
        """The WorkerGroup's ``tp_size`` and ``layout``: an explicit ``tp_size`` wins, else the
        solved spec's layout of the component, else no model parallelism."""
        if tp_size is not None:
            return {"tp_size": tp_size}
        if self.solution is not None and component in self.solution.spec.components:
            layout = ParallelLayout.of_component(self.solution, component)
            return {"tp_size": layout.tp_size, "layout": layout}
        return {"tp_size": 1}

    def _start(self, process: ProcessLaunch, plain_remote: Any, env_first_remote: Any, args: Any, kwargs: Any) -> Any:
        """Submit one process's actor; a Ray refusal (bad options, runtime env) names the rank.

        ``env_first_remote`` (the class applying the env in its constructor) is None unless asked
        for; a process with its own interpreter always goes through ``runtime_env``."""
        group, index = self._slots[process.bundle_index]
        options: dict[str, Any] = {
            "num_cpus": process.num_cpus,
            "num_gpus": 0,
            "scheduling_strategy": PlacementGroupSchedulingStrategy(self.placement_groups[group], placement_group_bundle_index=index),
        }
        if process.resources:
            options["resources"] = process.resources
        try:
            if env_first_remote is not None and not process.py_executable:
                return env_first_remote.options(**options).remote(process.env, *args, **kwargs)
            options["runtime_env"] = {"env_vars": process.env}
            if process.py_executable:
                options["runtime_env"]["py_executable"] = process.py_executable
            return plain_remote.options(**options).remote(*args, **kwargs)
        except (RayError, TypeError, ValueError) as error:
            raise LaunchError(f"{process.component} rank {process.rank}: Ray refused to start the worker: {ray_error_line(error)}") from None

    def launch_fused(
        self, component: str, role_classes: Mapping[str, type], role_args: Mapping[str, Any] | None = None, *, timeout_s: float = 120.0
    ) -> dict[str, WorkerGroup]:
        """One fused actor per process of ``component`` serving every role (verl's WorkDict);
        returns a worker-group view per role whose methods reach that role's instance."""
        fused = self.launch(component, fuse(role_classes), role_args or {}, timeout_s=timeout_s)
        return {
            role: WorkerGroup(component, fused.actors, fused.placements, cls, fused.tp_size, method_prefix=f"{role}_", layout=fused.layout)
            for role, cls in role_classes.items()
        }

    def release(self) -> None:
        """Kill every actor started on the reservation and remove its placement groups."""
        for group in self._groups:
            group.shutdown()
        self._groups = []
        remove_groups(self.placement_groups)
        if self._local is not None:
            local, self._local = self._local, None
            local.shutdown()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _wait_ready(component: str, worker_cls: type, actors: Sequence[Any], timeout_s: float) -> None:
    """Wait until every actor's constructor returned; a failure or a timeout names the ranks."""
    pending = {actor.__ray_ready__.remote(): rank for rank, actor in enumerate(actors)}
    deadline = time.monotonic() + timeout_s
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=max(0.0, deadline - time.monotonic()))
        if not ready:
            ranks = ", ".join(map(str, sorted(pending.values())))
            raise LaunchError(f"{component}: starting {worker_cls.__name__} failed: {agreeing(len(pending), 'rank')} {ranks} not ready within {timeout_s:g} s")
        rank = pending.pop(ready[0])
        try:
            ray.get(ready[0])
        except RayError as error:
            raise LaunchError(f"{component} rank {rank}: starting {worker_cls.__name__} failed: {ray_error_line(error)}") from None


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
    return to_ray(placements, cluster, ray_nodes(), job_name=job_name, cpus_per_process=cpus_per_process, **_rules(source))


def _rules(source: Solution | Mapping[str, Sequence[Placement]]) -> dict[str, Any]:
    """What the plan needs of the solved spec beyond the records (required topology domains),
    and whether Ray can hold them itself (``topology_strategy``)."""
    required = required_domains(source.spec) if isinstance(source, Solution) else {}
    return {"required_domains": required, "topology_strategy": has_topology_strategy()}


def reserve(
    source: Solution | Mapping[str, Sequence[Placement]],
    cluster: Cluster | None = None,
    *,
    timeout_s: float = 60.0,
    address: str | None = None,
    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
    job_name: str = "solver-placement",
    cpus_per_process: float = 1.0,
    progress: Callable[[str], None] | None = None,
) -> Reservation:
    """Connect to Ray (see ``session.ensure_ray``; ``address="local"`` forces the embedded
    one), reserve the whole plan at once and verify it.

    Records without ``cluster=`` (and not a Solution) are planned against the live cluster alone.
    ``progress`` is told each stage as it starts (connecting, reserving, probing), for a display.
    """
    stage = progress or _no_display
    placements, cluster = _placements_and_cluster(source, cluster)
    send_worker_code_by_value()
    stage("connecting to Ray")
    local = ensure_ray(cluster, address, connect_timeout_s)
    try:
        nodes = ray_nodes()

        rules = _rules(source)

        def plan_with(idle: Mapping[int, frozenset[int]]) -> RayLaunchPlan:
            return to_ray(placements, cluster, nodes, job_name=job_name, cpus_per_process=cpus_per_process, idle_gpus=idle, **rules)

        launch_plan, groups = _reserve_exactly(plan_with, timeout_s, stage)
    except BaseException:
        if local is not None:
            local.shutdown()
        raise
    return Reservation(launch_plan, groups, placements, local, source if isinstance(source, Solution) else None)


def _reserve_exactly(
    plan_with: Callable[[Mapping[int, frozenset[int]]], RayLaunchPlan], timeout_s: float, stage: Callable[[str], None]
) -> tuple[RayLaunchPlan, list[PlacementGroup]]:
    """Reserve and probe until every GPU bundle holds its planned GPU (``gpu_match``: at most two
    attempts on a clean node), or, on a model of the free GPUs only, once (the devices are what
    Ray gave: ``free_gpus``); the plan, with its master ports, and its placement groups. Nothing
    of an attempt is left behind when it is retried or fails, Ctrl-C included."""
    idle: Mapping[int, frozenset[int]] = {}
    while True:
        launch_plan = plan_with(idle)
        stage(f"reserving {counted(len(launch_plan.bundles), 'bundle')} on {counted(len({b.node_rank for b in launch_plan.bundles}), 'node')}")
        groups = create_groups(launch_plan)
        try:
            wait_reserved(groups, launch_plan, timeout_s)
            stage("probing the reserved bundles: nodes, GPUs and rendezvous ports")
            probed = probe_bundles(launch_plan, groups, timeout_s)
            if launch_plan.free_gpus_only:
                return with_given_devices(launch_plan, probed.gpus).with_master_ports(probed.ports), groups
            more_idle = idle_gpus_for_next_attempt(launch_plan, probed.gpus, idle)
        except BaseException:
            remove_groups(groups)
            raise
        if more_idle is None:
            log.info("every bundle holds its planned node and GPU")
            return launch_plan.with_master_ports(probed.ports), groups
        log.info("Ray handed some GPU bundles other GPUs than planned: reserving again around the idle GPUs it showed")
        remove_groups(groups)
        idle = more_idle


def _no_display(stage: str) -> None:
    """The stage report when nobody asked for one."""


def launch(
    worker_cls: type,
    placements: Sequence[Placement],
    *args: Any,
    cluster: Cluster | None = None,
    timeout_s: float = 60.0,
    address: str | None = None,
    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
    **kwargs: Any,
) -> WorkerGroup:
    """Start ``worker_cls`` once per placement (one component) on its own reservation.

    Without ``cluster=`` the records are launched on the running Ray cluster as it is (its
    node-rank labels, else its nodes in IP order). The group owns the reservation:
    ``group.shutdown()`` (or leaving its ``with``) frees it.
    """
    if not placements:
        raise LaunchError("launch needs at least one placement")
    component = placements[0].component
    reservation = reserve(
        {component: list(placements)}, cluster, timeout_s=timeout_s, address=address, connect_timeout_s=connect_timeout_s
    )
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
) -> tuple[dict[str, list[Placement]], Cluster | None]:
    if isinstance(source, Solution):
        return source.placements_by_component(), cluster or source.cluster
    return {name: list(records) for name, records in source.items()}, cluster
