"""Command line: ``solver-placement solve|plot|explain|launch|auto FILE`` (see ``solver-placement --help``).

A config that is invalid or infeasible prints one line, ``error: <what, where, which rule>``, to
stderr and exits with status 2; never a traceback. The group catches :class:`PlacementError` for
every subcommand, so subcommands added later get the same behaviour for free.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any, NoReturn

import click
import yaml
from tabulate import tabulate

from solver_placement.cluster.ranks import format_ranks
from solver_placement.constants import ACCELERATOR, VERSION
from solver_placement.diagnose import diagnose
from solver_placement.errors import InfeasiblePlacementError, InternalError, PlacementError
from solver_placement.records import Placement
from solver_placement.rlinf.component_placement import ModelParallelComponentPlacement
from solver_placement.solver.solution import Solution
from solver_placement.solver.solve import solve

TABLE_COLUMNS = (
    ("component", "component"),
    ("rank", "rank"),
    ("node", "cluster_node_rank"),
    ("group", "node_group_label"),
    ("type", "hardware_type"),
    ("hardware", "local_hardware_ranks"),
    ("visible", "visible_accelerators"),
    ("local rank", "local_rank"),
    ("local world", "local_world_size"),
)
#: Conflicts quoted in a one-line infeasibility error; ``explain`` lists them all.
QUOTED_CONFLICTS = 3
EXIT_INVALID = 2
EXIT_IO = 1
#: A bug in solver_placement, not in the input (sysexits' EX_SOFTWARE).
EXIT_INTERNAL = 70
_PROCESS = re.compile(r"\bprocess (\d+)\b")


class _Commands(click.Group):
    """A click group that turns a :class:`PlacementError` (or a failed write) into one line on stderr."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PlacementError as error:
            _fail(one_line(error), EXIT_INVALID)
        except OSError as error:
            _fail(f"{error.strerror or error}: {error.filename}" if error.filename else str(error), EXIT_IO)
        except InternalError as error:
            _fail(f"internal error (a bug in solver_placement; please report it with the config): {error}", EXIT_INTERNAL)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(VERSION, "-V", "--version", prog_name="solver-placement")
def main() -> None:
    """Decide where every process of a distributed RL job runs, draw it, or say why it cannot run.

    FILE is a YAML config with a cluster: section (num_nodes, num_gpus_per_node, node_groups,
    component_placement). An invalid or infeasible FILE prints one "error: ..." line and exits 2.

    \b
    Examples:
      solver-placement solve models/quickstart.yaml
      solver-placement solve models/quickstart.yaml -c rollout --format json
      solver-placement plot models/quickstart.yaml -o layout.png
      solver-placement plot models/quickstart.yaml -o sync.svg --figure weight-sync
      solver-placement explain models/invalid/not_multiple.yaml
      solver-placement launch models/quickstart.yaml --run
      solver-placement auto models/auto_reference_16x8.yaml
    """


def _model_parallel_option(command: Any) -> Any:
    return click.option(
        "--model-parallel",
        is_flag=True,
        help="Read FILE as RLinf's ModelParallelComponentPlacement (actor/rollout TP sizes, collocated or "
        "disaggregated mode) instead of placing component_placement as written.",
    )(command)


def _time_limit_option(command: Any) -> Any:
    return click.option("--time-limit", type=float, default=None, help="Solver time limit in seconds.")(command)


@main.command("solve")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--component", "-c", multiple=True, help="Only show this component (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "yaml"]), default="table", show_default=True)
@_time_limit_option
@_model_parallel_option
def solve_command(file: str, component: Sequence[str], fmt: str, time_limit: float | None, model_parallel: bool) -> None:
    """Solve FILE and print every process's placement.

    json and yaml print every Placement field, per component.

    \b
    Examples:
      solver-placement solve models/quickstart.yaml
      solver-placement solve models/api_node_groups.yaml -c env -c agent
      solver-placement solve models/quickstart.yaml --format yaml
      solver-placement solve models/modelparallel_collocated_tp4_tp2_1x8.yaml --model-parallel
    """
    solution, _ = _solve(file, time_limit, model_parallel)
    names = list(component) or solution.components
    records = {name: solution.placements(name) for name in names}
    if fmt != "table":
        data = {name: [asdict(p) for p in pls] for name, pls in records.items()}
        click.echo(json.dumps(data, indent=2) if fmt == "json" else yaml.safe_dump(data, sort_keys=False), nl=fmt == "json")
        return
    click.echo(f"{file}: {solution.cluster.describe()}; {solution.status.lower()} in {sum(solution.timings.values()):.3f} s")
    click.echo(format_table([p for pls in records.values() for p in pls]))


@main.command("plot")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--output", "-o", required=True, metavar="OUT", type=click.Path(dir_okay=False), help="Where to write: .png, .svg or .pdf.")
@click.option(
    "--figure",
    type=click.Choice(["layout", "weight-sync"]),
    default="layout",
    show_default=True,
    help="layout: hardware cells per node; weight-sync: the CUDA IPC pairing of actor and rollout ranks.",
)
@click.option("--component", "-c", multiple=True, help="layout: only draw this component (repeatable).")
@click.option("--nodes", default=None, help='layout: only draw these nodes, e.g. "0-15" or "0,4-7".')
@click.option(
    "--mode",
    type=click.Choice(["auto", "cells", "aggregate"]),
    default="auto",
    show_default=True,
    help="cells: a row per node; aggregate: a row per run of like nodes; auto: cells up to 128 nodes.",
)
@click.option("--actor", default="actor", show_default=True, help="weight-sync: the training component.")
@click.option("--rollout", default="rollout", show_default=True, help="weight-sync: the generation component.")
@click.option("--title", default=None, help="Figure title (default: names FILE).")
@click.option("--dpi", type=click.IntRange(30, 600), default=150, show_default=True, help="PNG resolution.")
@_time_limit_option
@_model_parallel_option
def plot_command(
    file: str,
    output: str,
    figure: str,
    component: Sequence[str],
    nodes: str | None,
    mode: str,
    actor: str,
    rollout: str,
    title: str | None,
    dpi: int,
    time_limit: float | None,
    model_parallel: bool,
) -> None:
    """Solve FILE and draw it to OUTPUT (PNG, SVG or PDF by suffix).

    \b
    Examples:
      solver-placement plot models/quickstart.yaml -o layout.png
      solver-placement plot models/synthetic_1024x8.yaml -o big.svg            # like nodes merged
      solver-placement plot models/synthetic_128x8.yaml -o slice.png --nodes 0-15
      solver-placement plot models/modelparallel_collocated_tp8_tp2_1x8.yaml --model-parallel \\
          --figure weight-sync -o sync.png
    """
    from solver_placement.plot import plot_layout, plot_weight_sync, save_figure  # matplotlib loads only when drawing

    _, source = _solve(file, time_limit, model_parallel)
    heading = title or f"{'Layout' if figure == 'layout' else 'Weight sync'} of {file}"
    if figure == "layout":
        drawn = plot_layout(source, components=list(component) or None, nodes=nodes, mode=mode, title=heading)
    else:
        drawn = plot_weight_sync(source, actor=actor, rollout=rollout, mode=mode, title=heading)
    written = save_figure(drawn, output, dpi=dpi)
    click.echo(f"wrote {written}")


@main.command("explain", short_help="Say why FILE cannot be placed, or summarise it in one line.")
@click.argument("file", type=click.Path(dir_okay=False))
@_time_limit_option
@_model_parallel_option
def explain_command(file: str, time_limit: float | None, model_parallel: bool) -> None:
    """Say why FILE is invalid or infeasible, or summarise it in one line if it is fine.

    An infeasible FILE lists every statement in the smallest conflicting set CP-SAT found (exit 2).

    \b
    Examples:
      solver-placement explain models/quickstart.yaml
      solver-placement explain models/invalid/process_spans_nodes_gpu.yaml
    """
    try:
        solution, source = _solve(file, time_limit, model_parallel)
    except InfeasiblePlacementError as error:
        conflicts = compact_conflicts(error.conflicts)
        fixes = [] if model_parallel else diagnose(file).suggestions
        tips = "".join(f"\nsuggestion: {fix}" for fix in fixes)
        if len(conflicts) > 1 or fixes:
            listed = "".join(f"\n  - {conflict}" for conflict in conflicts)
            _fail(f"no placement exists; these statements cannot all hold:{listed}{tips}", EXIT_INVALID)
        raise
    click.echo(f"{file}: {summary(solution, source)}")


@main.command("auto", short_help="Choose collocation or a disaggregated GPU split from measured costs.")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--top-k", type=click.IntRange(1, 100), default=None, help="How many ranked candidates to show (default: the file's top_k, else 5).")
@click.option("--reward-with", default=None, help="Add reward on the GPUs of this component in the output block.")
@click.option("--format", "fmt", type=click.Choice(["table", "yaml"]), default="table", show_default=True)
@_time_limit_option
def auto_command(file: str, top_k: int | None, reward_with: str | None, fmt: str, time_limit: float | None) -> None:
    """Search the cost model of FILE's ``auto_placement:`` section (docs/cost_model.md) with CP-SAT.

    Prints the proven-best mode and GPU split with its predicted iteration time, the next-best
    candidates, and a ready ``component_placement`` block.

    \b
    Examples:
      solver-placement auto models/auto_reference_16x8.yaml
      solver-placement auto models/auto_reference_16x8.yaml --format yaml --reward-with actor
    """
    from solver_placement.auto import auto_place

    result = auto_place(file, top_k=top_k, time_limit_s=time_limit)
    if fmt == "yaml":
        click.echo(result.to_yaml(reward_with), nl=False)
        return
    proof = "proven optimal" if result.stats.proven_optimal else f"gap {100 * result.stats.gap:.2f}% at the time limit"
    click.echo(f"{file}: {result.mode}, predicted {result.time_s:.3f} s per iteration ({proof})")
    click.echo(result.table())
    click.echo("component_placement:")
    for key, value in result.to_component_placement(reward_with).items():
        click.echo(f"  {key}: {value}")


@main.command("launch", short_help="Show the Ray launch plan of FILE, or launch it and check every process.")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--dry-run/--run", default=True, show_default=True, help="Only print the plan, or really launch on Ray.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True, help="dry run: plan as a table or JSON.")
@click.option("--address", default=None, help="Ray address (default: the running Ray, else an embedded local one).")
@click.option("--timeout", type=float, default=120.0, show_default=True, help="Seconds to wait for the reservation and actors.")
@_time_limit_option
def launch_command(file: str, dry_run: bool, fmt: str, address: str | None, timeout: float, time_limit: float | None) -> None:
    """Plan (--dry-run) or launch (--run) FILE on Ray, one probe actor per process.

    A dry run maps node ranks to Ray nodes as the cluster model describes them and prints every
    process's bundle, node and environment. --run reserves the whole plan at once on the running
    Ray (or starts an embedded local Ray shaped like the model), starts a probe actor per
    process, checks it runs on the planned node with the planned devices, and releases
    everything (exit 2 if any process landed elsewhere).

    \b
    Examples:
      solver-placement launch models/quickstart.yaml --dry-run
      solver-placement launch models/quickstart.yaml --run
    """
    solution = solve(file, time_limit_s=time_limit)
    if dry_run:
        from solver_placement.ray_launch.plan import modelled_nodes, to_ray

        plan = to_ray(solution.placements_by_component(), solution.cluster, modelled_nodes(solution.cluster))
        if fmt == "json":
            click.echo(json.dumps(plan.to_dict(), indent=2))
            return
        rows = [
            [p.component, p.rank, p.node_rank, p.bundle_index, plan.bundles[p.bundle_index].item, p.env.get("CUDA_VISIBLE_DEVICES", ""),
             p.env["RANK"], p.env["LOCAL_RANK"], p.env["NODE_RANK"]]
            for processes in plan.processes.values() for p in processes
        ]
        click.echo(f"{file}: {len(plan.bundles)} bundles in one placement group, {len(rows)} processes")
        click.echo(tabulate(rows, headers=["component", "rank", "node", "bundle", "anchor", "CUDA_VISIBLE_DEVICES", "RANK", "LOCAL_RANK", "NODE_RANK"]))
        return
    from solver_placement.ray_launch.landing_check import launch_and_check

    plan, landed = launch_and_check(solution, timeout_s=timeout, address=address)
    rows = [[p.component, p.rank, p.node_rank, p.planned_devices, p.seen_devices, "yes" if p.exact else "NO"] for p in landed]
    click.echo(tabulate(rows, headers=["component", "rank", "node", "planned devices", "seen by the actor", "exact"]))
    wrong = [p for p in landed if not p.exact]
    click.echo(f"{len(landed) - len(wrong)} of {len(landed)} processes ran on exactly their planned node and devices; reservation released")
    if wrong:
        sys.exit(EXIT_INVALID)


def _solve(file: str, time_limit: float | None, model_parallel: bool) -> tuple[Solution, Solution | ModelParallelComponentPlacement]:
    """The solution, and what to draw it from (the model-parallel placement keeps its weight-sync map)."""
    if not model_parallel:
        solution = solve(file, time_limit_s=time_limit)
        return solution, solution
    if time_limit is not None:
        raise click.UsageError("--time-limit applies to plain solves; with --model-parallel set cluster.solver.time_limit_s in FILE")
    placement = ModelParallelComponentPlacement(file)
    return placement.solution, placement


def summary(solution: Solution, source: Solution | ModelParallelComponentPlacement) -> str:
    """One line on a valid config: components, processes, nodes and GPUs in use, solver status."""
    records = solution.placements_by_component()
    counts = ", ".join(f"{name} {len(pls)}" for name, pls in records.items())
    flat = [p for pls in records.values() for p in pls]
    nodes = len({p.cluster_node_rank for p in flat})
    gpus = len({(p.cluster_node_rank, g) for p in flat if p.hardware_type == ACCELERATOR for g in p.local_hardware_ranks})
    cluster = solution.cluster
    placement_mode = source.placement_mode if isinstance(source, ModelParallelComponentPlacement) else None
    mode = f" in {placement_mode.name.lower()} mode" if placement_mode is not None else ""
    return (
        f"valid{mode}; {len(records)} components, {len(flat)} processes ({counts}) on {nodes} of {cluster.num_nodes} "
        f"nodes, {gpus} of {cluster.num_accelerators} GPUs in use; {solution.status.lower()}"
    )


def one_line(error: PlacementError) -> str:
    """The error as one line: an infeasibility quotes its first conflicts and points to ``explain``."""
    conflicts = compact_conflicts(error.conflicts) if isinstance(error, InfeasiblePlacementError) else []
    if len(conflicts) <= 1:
        return " ".join(line.strip() for line in str(error).splitlines())
    quoted = "; ".join(conflicts[:QUOTED_CONFLICTS])
    more = (
        f"; and {len(conflicts) - QUOTED_CONFLICTS} more (solver-placement explain FILE lists them all)"
        if len(conflicts) > QUOTED_CONFLICTS
        else ""
    )
    return f"no placement exists; these statements conflict: {quoted}{more}"


def compact_conflicts(conflicts: Sequence[str]) -> list[str]:
    """Merge statements that differ only in a process number, which CP-SAT reports one process at a time.

    ``actor: segment "0-3" (process 0) needs 1 GPUs`` and the same for processes 1-3 become
    ``actor: segment "0-3" (process 0) needs 1 GPUs (likewise processes 1-3)``.
    """
    processes: dict[str, list[int]] = {}
    for conflict in conflicts:
        match = _PROCESS.search(conflict)
        key = conflict if match is None else f"{conflict[:match.start()]}process {{}}{conflict[match.end():]}"
        processes.setdefault(key, []).extend([] if match is None else [int(match.group(1))])
    merged = []
    for key, numbers in processes.items():
        if not numbers:
            merged.append(key)
            continue
        noun = "process" if len(numbers) == 2 else "processes"
        likewise = f" (likewise {noun} {format_ranks(numbers[1:])})" if len(numbers) > 1 else ""
        merged.append(key.replace("process {}", f"process {numbers[0]}", 1) + likewise)
    return merged


def format_table(placements: Sequence[Placement]) -> str:
    """A plain-text table, one row per process."""
    rows = [[_cell(getattr(p, field)) for _, field in TABLE_COLUMNS] for p in placements]
    return tabulate(rows, headers=[header for header, _ in TABLE_COLUMNS], tablefmt="simple")


def _cell(value: object) -> object:
    return ",".join(map(str, value)) if isinstance(value, list) else value


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


if __name__ == "__main__":
    main()
