"""Command line: ``solver-placement solve FILE [--component NAME] [--format table|json]``.

Errors print one line and exit with status 2, never a traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import asdict

import click
from tabulate import tabulate

from . import __version__
from .errors import PlacementError
from .records import Placement
from .solve import solve

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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="solver-placement")
def main() -> None:
    """Solve where every process of an RL job runs.

    \b
    Examples:
      solver-placement solve models/rlinf_collocated_2x8.yaml
      solver-placement solve models/rlinf_hetero_node_groups.yaml --component env --format json
    """


@main.command("solve")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--component", "-c", multiple=True, help="Only show this component (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--time-limit", type=float, default=None, help="Solver time limit in seconds.")
def solve_command(file: str, component: Sequence[str], fmt: str, time_limit: float | None) -> None:
    """Solve FILE (a YAML with a cluster: section) and print every component's placement."""
    try:
        solution = solve(file, time_limit_s=time_limit)
        names = list(component) or solution.components
        records = {name: solution.placements(name) for name in names}
    except PlacementError as error:
        _fail(error)
    if fmt == "json":
        click.echo(json.dumps({name: [asdict(p) for p in pls] for name, pls in records.items()}, indent=2))
        return
    click.echo(f"{file}: {solution.cluster.describe()}; {solution.status.lower()} in {sum(solution.timings.values()):.3f} s")
    click.echo(format_table([p for pls in records.values() for p in pls]))


def format_table(placements: Sequence[Placement]) -> str:
    """A plain-text table, one row per process."""
    rows = [[_cell(getattr(p, field)) for _, field in TABLE_COLUMNS] for p in placements]
    return tabulate(rows, headers=[header for header, _ in TABLE_COLUMNS], tablefmt="simple")


def _cell(value: object) -> object:
    return ",".join(map(str, value)) if isinstance(value, list) else value


def _fail(error: PlacementError) -> None:
    click.echo(f"error: {error}", err=True)
    sys.exit(2)
if __name__ == "__main__":
    main()
