"""``launch``: the Ray launch plan of FILE, or a real launch that checks where every process ran."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING

import click
from tabulate import tabulate

from solver_placement._cli.config_input import JobInput, job_arguments, read_job_input
from solver_placement._cli.exit_codes import ExitCode
from solver_placement._cli.options import ModelCommand, format_option, model_parallel_option, time_limit_option
from solver_placement._cli.output import document, echo_document
from solver_placement._cli.placing import place
from solver_placement._cli.progress import working
from solver_placement._cli.text import heading
from solver_placement._errors import counted
from solver_placement._solver.solution import Solution

if TYPE_CHECKING:  # the plan module is imported when a command needs it
    from solver_placement._ray_launch.launch_plan import RayLaunchPlan

PLAN_HEADERS = ["component", "rank", "node", "bundle", "anchor", "CUDA_VISIBLE_DEVICES", "RANK", "LOCAL_RANK", "NODE_RANK"]
LANDED_HEADERS = ["component", "rank", "node", "planned devices", "seen by the actor", "exact"]


@click.command("launch", cls=ModelCommand, short_help="Show the Ray launch plan of FILE, or launch it and check every process.")
@job_arguments
@click.option("--dry-run/--run", default=True, show_default=True, help="Only print the plan, or really launch on Ray.")
@format_option("table", "json", help="table for people; json: the document described above.")
@click.option("--timeout", type=float, default=120.0, show_default=True, help="Seconds to wait for the reservation and actors.")
@time_limit_option
@model_parallel_option
def launch_command(
    file: str, overrides: Sequence[str], dry_run: bool, fmt: str, timeout: float, time_limit: float | None, model_parallel: bool
) -> None:  # fmt: skip
    """Plan (--dry-run) or launch (--run) FILE on Ray, one probe actor per process.

    A dry run maps node ranks to Ray nodes as the cluster model describes them (with --ray or
    --local: to the live Ray nodes) and prints every process's bundle, node and environment, and
    how bundles find their nodes: by node labels, else (nodes without the
    solver-placement/node-rank label) by Ray node id and custom resources.
    --run reserves the whole plan at once on the Ray --ray or --local names, else on the Ray
    found as Ray users expect (RAY_ADDRESS, a cluster started with ray start) or an embedded local Ray
    shaped like the model; it starts a probe actor per process, checks it runs on the planned
    node with the planned devices, and releases everything (exit 5 if any process landed
    elsewhere). A terminal shows the stage (connecting, reserving, probing, starting actors).

    \b
    json prints one document: schema_version (1), command, file, overrides,
    run (false for a dry run); a dry run adds the plan: job_name, node_ids,
    node_ips, bundles (resources, label_selector, ...), processes {component:
    [rank, node_rank, bundle_index, env, ...]}, scheme (labels or resources),
    scheme_reason, placement_groups (bundles, strategy, topology_strategy,
    domain) and free_gpus_only; --run adds processes (component, rank, node_rank,
    planned_devices, seen_devices, on_planned_node, exact) and exact (count).

    \b
    Examples:
      solver-placement launch models/quickstart.yaml --dry-run
      solver-placement launch models/quickstart.yaml --format json
      solver-placement launch models/quickstart.yaml --run
      solver-placement launch models/quickstart.yaml --run --ray 10.0.0.1:6379
      solver-placement launch job.yaml --ray auto --group-by-label zone --dry-run
    """
    given = read_job_input(file, overrides)
    with working(f"solving {given.name}"):
        solution = place(given.job, time_limit, model_parallel).solution
    if dry_run:
        _dry_run(given, solution, fmt)
    else:
        _run(given, solution, fmt, timeout)


def _dry_run(given: JobInput, solution: Solution, fmt: str) -> None:
    plan = _live_plan(solution) if given.on_ray else _modelled_plan(solution)
    if fmt == "json":
        echo_document(document("launch", given, run=False, **plan.to_dict()), fmt)
        return
    rows = [
        [p.component, p.rank, p.node_rank, p.bundle_index, plan.bundles[p.bundle_index].item, p.env.get("CUDA_VISIBLE_DEVICES", ""),
         p.env["RANK"], p.env["LOCAL_RANK"], p.env["NODE_RANK"]]
        for processes in plan.processes.values() for p in processes
    ]  # fmt: skip
    groups = len(plan.placement_groups)
    reserved_in = "one placement group" if groups == 1 else f"{groups} placement groups"
    click.echo(f"{heading(given)}: {counted(len(plan.bundles), 'bundle')} in {reserved_in}, {counted(len(rows), 'process', 'processes')}")
    click.echo(f"scheme: {plan.scheme} ({plan.scheme_reason})")
    for group in plan.placement_groups if groups > 1 else ():
        how = f"topology_strategy {group.topology_strategy}" if group.topology_strategy else f"strategy {group.strategy}"
        click.echo(f"  {counted(len(group.bundles), 'bundle')} {how}" + (f" inside {group.domain}" if group.domain else ""))
    if plan.free_gpus_only:
        click.echo("free GPUs only: each GPU id stands for the device Ray gives its bundle when reserved")
    click.echo(tabulate(rows, headers=PLAN_HEADERS))


def _modelled_plan(solution: Solution) -> RayLaunchPlan:
    """The plan on Ray nodes as the cluster model describes them (Ray is imported only to ask
    whether it has ``topology_strategy``, when a required topology domain makes it matter)."""
    from solver_placement._ray_launch.domain_groups import required_domains
    from solver_placement._ray_launch.features import has_topology_strategy
    from solver_placement._ray_launch.launch_plan import stated_ray_nodes, to_ray

    required = required_domains(solution.spec)
    return to_ray(
        solution.placements_by_component(), solution.cluster, stated_ray_nodes(solution.cluster),
        required_domains=required, topology_strategy=bool(required) and has_topology_strategy(),
    )  # fmt: skip


def _live_plan(solution: Solution) -> RayLaunchPlan:
    """The plan on the live Ray nodes ``read_job_input`` connected to (nothing is reserved)."""
    from solver_placement._ray_launch.reserve import plan

    return plan(solution)


def _run(given: JobInput, solution: Solution, fmt: str, timeout: float) -> None:
    """Launch, report every process, and exit 5 if any landed off its planned node or devices.

    With --ray/--local, ``read_job_input`` already connected this process (and checked the model), so
    the reservation uses that connection."""
    from solver_placement._ray_launch.landing_check import launch_and_check

    with working("launching on Ray") as stage:
        _, landed = launch_and_check(solution, timeout_s=timeout, progress=stage)
    exact = sum(p.exact for p in landed)
    if fmt == "json":
        processes = [{**asdict(p), "exact": p.exact} for p in landed]
        echo_document(document("launch", given, run=True, processes=processes, exact=exact), fmt)
    else:
        if given.assumed_gpus_per_node is not None:
            click.echo(heading(given))
        rows = [[p.component, p.rank, p.node_rank, p.planned_devices, p.seen_devices, "yes" if p.exact else "NO"] for p in landed]
        click.echo(tabulate(rows, headers=LANDED_HEADERS))
        click.echo(f"{exact} of {counted(len(landed), 'process', 'processes')} ran on exactly their planned node and devices; reservation released")
    if exact < len(landed):
        sys.exit(ExitCode.LAUNCH_FAILED)
