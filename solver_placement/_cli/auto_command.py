"""``auto``: choose collocation or a disaggregated GPU split from measured costs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from solver_placement._auto import auto_place
from solver_placement._auto.result import AutoPlacement
from solver_placement._cli.config_input import JobInput, job_arguments, read_job_input
from solver_placement._cli.options import ModelCommand, format_option, time_limit_option
from solver_placement._cli.output import document, echo_document
from solver_placement._cli.progress import working
from solver_placement._cli.text import heading
from solver_placement._errors import PlacementConfigError


@click.command("auto", cls=ModelCommand, short_help="Choose collocation or a disaggregated GPU split from measured costs.")
@job_arguments
@click.option("--top-k", type=click.IntRange(1, 100), default=None, help="How many ranked candidates to show (default: the file's top_k, else 5).")
@click.option("--reward-with", default=None, help="Add reward on the GPUs of this component in the output block.")
@format_option("table", "yaml", "json", help="table for people; yaml: a ready cluster: block; json: the document described above.")
@time_limit_option
def auto_command(file: str, overrides: Sequence[str], top_k: int | None, reward_with: str | None, fmt: str, time_limit: float | None) -> None:
    """Search the measured costs in FILE's auto_placement: section (docs/cost_model.md) with CP-SAT.

    Prints the proven-best mode and GPU split with its predicted iteration time, the next-best
    candidates, and a ready component_placement block.

    \b
    json prints one document: schema_version (1), command, file, overrides,
    task, num_gpus, proven_optimal, gap, solves, wall_time_s,
    component_placement (the best candidate's block) and candidates (best
    first; each with mode, gpus, ranges, time_s and batch_times_s).

    \b
    Examples:
      solver-placement auto models/auto_reference_16x8.yaml
      solver-placement auto models/auto_reference_16x8.yaml --format yaml --reward-with actor
      solver-placement auto models/auto_reference_16x8.yaml cluster.num_nodes=32 --format json
    """
    given = read_job_input(file, overrides)
    if "auto_placement" not in given.job.config and "cluster" in given.job.config:
        raise PlacementConfigError(
            f"{given.name} has no auto_placement: section, so there are no measured costs to search; add one "
            f"(docs/cost_model.md lists its keys), or place the component_placement as written with: solver-placement solve {file}"
        )
    with working(f"searching the placements of {given.name}"):
        result = auto_place(given.job, top_k=top_k, time_limit_s=time_limit)
    if fmt == "json":
        echo_document(_result_document(given, result, reward_with), fmt)
    elif fmt == "yaml":
        if given.assumed_gpus_per_node is not None:  # a comment, so the block still pastes as it is
            click.echo(f"# {heading(given)}")
        click.echo(result.to_yaml(reward_with), nl=False)
    else:
        proof = "proven optimal" if result.stats.proven_optimal else f"gap {100 * result.stats.gap:.2f}% at the time limit"
        click.echo(f"{heading(given)}: {result.mode}, predicted {result.time_s:.3f} s per iteration ({proof})")
        click.echo(result.table())
        click.echo("component_placement:")
        for key, value in result.to_component_placement(reward_with).items():
            click.echo(f"  {key}: {value}")


def _result_document(given: JobInput, result: AutoPlacement, reward_with: str | None) -> dict[str, Any]:
    stats = result.stats
    candidates = [
        {"mode": c.mode, "gpus": dict(c.gpus), "ranges": {name: list(bounds) for name, bounds in c.ranges.items()},
         "time_s": c.time_s, "batch_times_s": dict(c.batch_times_s)}
        for c in result.candidates
    ]  # fmt: skip
    return document(
        "auto", given, task=result.problem.task, num_gpus=result.problem.num_gpus, proven_optimal=stats.proven_optimal,
        gap=stats.gap, solves=stats.solves, wall_time_s=stats.wall_time_s,
        component_placement=result.to_component_placement(reward_with), candidates=candidates,
    )  # fmt: skip
