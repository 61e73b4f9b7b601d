"""``predict FRAMEWORK``: where a framework's own code puts every rank, what would fail, and better.

The framework's input comes after ``--`` (its command-line flags) or from ``--input`` (a launch
script that runs it, or its YAML config). The cluster is ``--cluster FILE`` (a YAML config with a
``cluster:`` section, or a bare one), a live Ray cluster (``--ray ADDRESS``), or, by default, the
smallest the input describes. Errors in the predicted layout exit 3, after the table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import click

from solver_placement._cli.exit_codes import ExitCode
from solver_placement._cli.options import format_option
from solver_placement._cli.output import echo_document
from solver_placement._cli.progress import working
from solver_placement._cli.text import one_line
from solver_placement._cluster.cluster import Cluster
from solver_placement._cluster.ray_nodes import DEFAULT_CONNECT_TIMEOUT_S
from solver_placement._errors import PlacementError, counted
from solver_placement._job import load_job
from solver_placement._layout_report import layout_report
from solver_placement._prediction.frameworks import Improvement, framework_names
from solver_placement._prediction.launch_input import LaunchSource
from solver_placement._prediction.layout import Prediction
from solver_placement._prediction.predict import improve, predict


def prediction_inputs(verb: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The arguments and options ``predict`` and ``explain FRAMEWORK`` share (the framework, its
    words, ``--input``, ``--cluster``, ``--ray``, ``--release``); ``verb`` begins ``--ray``'s help."""

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        for decorator in reversed((
            click.argument("framework"),
            click.argument("arguments", nargs=-1, type=click.UNPROCESSED),
            click.option("--input", "input_file", type=click.Path(dir_okay=False, path_type=Path), help="A launch script that runs the framework, or its YAML config."),
            click.option("--cluster", "cluster_file", type=click.Path(dir_okay=False, path_type=Path), help="A YAML config whose cluster: section states the cluster."),
            click.option("--ray", "ray_address", default=None, help=f"{verb} on the live Ray cluster at ADDRESS (auto: the one this machine runs)."),
            click.option("--release", default=None, help="The framework release whose rules to read the input with (default: the one it shows, else the newest)."),
        )):  # fmt: skip
            command = decorator(command)
        return command

    return decorate


@click.command("predict", context_settings={"ignore_unknown_options": True})
@prediction_inputs("Predict")
@click.option("--better", is_flag=True, help="Also solve the job and print the solver's layout and the flags that ask the framework for it.")
@click.option(
    "-o", "--plot", "figure", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Also draw the predicted layout (.png, .svg or .pdf; needs the [plot] extra), the framework's roles as components.",
)
@format_option(
    "text", "json", "layout",
    help="text: every rank, then the findings; json: the prediction (and the improvement with --better); "
    "layout: a node-by-role table of the GPUs each role holds, then the findings.",
)
def predict_command(
    framework: str, arguments: Sequence[str], input_file: Path | None, cluster_file: Path | None, ray_address: str | None,
    release: str | None, better: bool, figure: Path | None, fmt: str,
) -> None:  # fmt: skip
    """Predict where FRAMEWORK's own code puts every rank of a job, check it node by node, and offer better.

    FRAMEWORK is one of the frameworks the library reads (see below). Its input is the flags
    after -- (as you would pass them to the framework) or --input FILE. Each rank is shown with
    its node, GPUs, what it sees in CUDA_VISIBLE_DEVICES, its GPU share and its engine;
    findings follow: a placement group Ray would never satisfy, an engine split across nodes,
    two ranks on one GPU, a rank told the wrong GPU (errors, exit 3), reserved GPUs left idle
    (warnings), each with a fix in the framework's own flags, checked by predicting it.

    \b
    Examples:
      solver-placement predict openrlhf -- --actor.num_nodes 1 --actor.num_gpus_per_node 8 --vllm.num_engines 2 --vllm.tensor_parallel_size 4
      solver-placement predict slime --input run-qwen3-4B.sh --cluster models/quickstart.yaml --better
    """
    source = prediction_source(framework, arguments, input_file)
    cluster = prediction_cluster(cluster_file, ray_address)
    with working(f"predicting {framework}'s layout"):
        prediction = predict(framework, source, cluster=cluster, release=release)
    better_layout: Improvement | str | None = None
    if better:
        with working("solving for a better layout"):
            better_layout = _better(framework, source, prediction)
    if fmt == "json":
        data = {"schema_version": 1, "command": "predict", **prediction.as_dict()}
        if better_layout is not None:
            data["better"] = {"error": better_layout} if isinstance(better_layout, str) else _improvement_document(better_layout)
        echo_document(data, "json")
    else:
        click.echo(_layout_text(prediction) if fmt == "layout" else prediction.report())
        if better_layout is not None:
            click.echo(f"\nno better layout: {better_layout}" if isinstance(better_layout, str) else _improvement_text(better_layout))
    if figure is not None:
        _draw(prediction, framework, figure)
    if prediction.errors:
        raise SystemExit(ExitCode.INFEASIBLE)


def _layout_text(prediction: Prediction) -> str:
    """The node-by-role table of the placed ranks, then what :meth:`Prediction.report` says after its rank table."""
    pending = sum(rank.node is None for rank in prediction.ranks)
    never = [f"note: {counted(pending, 'rank')} never placed (pending), not in the table"] if pending else []
    table = layout_report(prediction) if prediction.components else "no rank is placed"
    return "\n".join([f"{prediction.framework} {prediction.release} on {prediction.cluster.describe()}", table, *never, *prediction.said()])


def _draw(prediction: Prediction, framework: str, figure: Path) -> None:
    from solver_placement.plot import plot_layout, save_figure  # matplotlib loads only when drawing

    title = f"{prediction.framework} {prediction.release}: its own layout"
    drawn = plot_layout(prediction.placements_by_component(), cluster=prediction.cluster, title=title)
    click.echo(f"wrote {save_figure(drawn, figure)}", err=True)


def _better(framework: str, source: LaunchSource, prediction: Prediction) -> Improvement | str:
    """The solver's layout for the job, or why there is none: the prediction is the answer the
    user asked for first, so a job the solver cannot place still gets it printed."""
    try:
        return improve(framework, source, cluster=prediction.cluster, release=prediction.release)
    except PlacementError as error:
        return one_line(error)


def prediction_source(framework: str, arguments: Sequence[str], input_file: Path | None) -> LaunchSource:
    """The framework's input: the flags after ``--`` or the ``--input`` file, exactly one of them."""
    if not arguments and input_file is None:
        raise click.UsageError(f"give {framework}'s flags after -- or a file with --input (frameworks: {', '.join(framework_names())})")
    if arguments and input_file is not None:
        raise click.UsageError("give the framework's flags after -- or --input FILE, not both")
    return input_file if input_file is not None else list(arguments)


def prediction_cluster(cluster_file: Path | None, ray_address: str | None) -> Cluster | None:
    """The cluster ``--cluster FILE`` or ``--ray ADDRESS`` names (None: the input's own), attached
    to Ray for the rest of the command when it is a live one."""
    if cluster_file is not None and ray_address is not None:
        raise click.UsageError("give --cluster FILE or --ray ADDRESS, not both")
    if cluster_file is not None:
        return load_job(cluster_file).stated_cluster
    if ray_address is None:
        return None
    from solver_placement._ray_launch.session import attach  # Ray loads only when asked for

    with working(f"connecting to Ray at {ray_address}"):
        click.get_current_context().call_on_close(attach(None, ray_address, DEFAULT_CONNECT_TIMEOUT_S))
    return Cluster.from_ray()


def _improvement_document(improvement: Improvement) -> dict[str, object]:
    return {
        "components": {name: [p.local_hardware_ranks for p in improvement.solution.placements(name)] for name in improvement.solution.components},
        "nodes": {name: [p.cluster_node_rank for p in improvement.solution.placements(name)] for name in improvement.solution.components},
        "arguments": None if improvement.arguments is None else list(improvement.arguments),
        "cannot_express": list(improvement.cannot_express),
    }


def _improvement_text(improvement: Improvement) -> str:
    lines = ["", "The solver's layout:", layout_report(improvement.solution)]
    if improvement.arguments is not None:
        lines.append("Flags that make the framework place it so: " + " ".join(improvement.arguments))
    lines += [f"cannot be asked for: {reason}" for reason in improvement.cannot_express]
    return "\n".join(lines)
