"""``plot``: solve FILE and draw it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from solver_placement._cli.config_input import job_arguments, read_job_input
from solver_placement._cli.exit_codes import ExitCode
from solver_placement._cli.options import ModelCommand, format_option, model_parallel_option, time_limit_option
from solver_placement._cli.output import document, echo_document, fail
from solver_placement._cli.placing import place
from solver_placement._cli.progress import working
from solver_placement._cli.text import heading


@click.command("plot", cls=ModelCommand)
@job_arguments
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
@format_option("text", "json", help='text: "wrote OUT"; json: the document described above.')
@time_limit_option
@model_parallel_option
def plot_command(
    file: str,
    overrides: Sequence[str],
    output: str,
    figure: str,
    component: Sequence[str],
    nodes: str | None,
    mode: str,
    actor: str,
    rollout: str,
    title: str | None,
    dpi: int,
    fmt: str,
    time_limit: float | None,
    model_parallel: bool,
) -> None:  # one parameter per option: click passes them by name
    """Solve FILE and draw it to OUT (PNG, SVG or PDF by suffix).

    \b
    json prints one document: schema_version (1), command, file, overrides,
    figure (layout or weight-sync) and written (the path of the figure).

    \b
    Examples:
      solver-placement plot models/quickstart.yaml -o layout.png
      solver-placement plot models/synthetic_1024x8.yaml -o big.svg            # like nodes merged
      solver-placement plot models/synthetic_128x8.yaml -o slice.png --nodes 0-15
      solver-placement plot models/modelparallel_collocated_tp8_tp2_1x8.yaml --figure weight-sync -o sync.png
    """
    folder = Path(output).parent
    if not folder.is_dir():  # before solving, which can take minutes
        fail(f"cannot write {output}: the directory {str(folder)!r} does not exist", ExitCode.IO)
    from solver_placement.plot import plot_layout, plot_weight_sync, save_figure  # matplotlib loads only when drawing

    given = read_job_input(file, overrides)
    with working(f"solving {given.name}"):
        placed = place(given.job, time_limit, model_parallel)
    figure_title = title or f"{'Layout' if figure == 'layout' else 'Weight sync'} of {given.name}"
    with working(f"drawing {output}"):
        if figure == "layout":
            drawn = plot_layout(placed.source, components=list(component) or None, nodes=nodes, mode=mode, title=figure_title, pools=placed.pools)
        else:
            drawn = plot_weight_sync(placed.source, actor=actor, rollout=rollout, mode=mode, title=figure_title)
        written = save_figure(drawn, output, dpi=dpi)
    if fmt == "json":
        echo_document(document("plot", given, figure=figure, written=str(written)), fmt)
    else:
        click.echo(f"wrote {written}" if given.assumed_gpus_per_node is None else f"wrote {written}: {heading(given)}")
