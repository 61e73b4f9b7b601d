"""``export --to verl``: FILE's solved layout as verl's resource pools and trainer overrides."""

from __future__ import annotations

from collections.abc import Sequence

import click
import yaml

from solver_placement._cli.config_input import job_arguments, read_job_input
from solver_placement._cli.options import ModelCommand, format_option, model_parallel_option, time_limit_option
from solver_placement._cli.output import document, echo_document
from solver_placement._cli.placing import place
from solver_placement._cli.progress import working
from solver_placement._frontends.verl import verl_pools
from solver_placement._frontends.verl.export import VERSIONS, export_verl
from solver_placement._frontends.verl.versions import VERL_TRAINER


@click.command("export", cls=ModelCommand)
@job_arguments
@click.option("--to", "target", type=click.Choice(["verl"]), required=True, help="Whose config to state the layout in.")
@click.option(
    "--verl-version", type=click.Choice(VERSIONS), default=None,
    help="The verl whose keys to write (default: FILE's, when it is verl's trainer config; else main).",
)  # fmt: skip
@format_option("text", "json", "yaml", help="text for people; json and yaml print the document described above.")
@time_limit_option
@model_parallel_option
def export_command(
    file: str, overrides: Sequence[str], target: str, verl_version: str | None, fmt: str, time_limit: float | None, model_parallel: bool
) -> None:
    """Solve FILE and print the verl config that starts the same workers on the same GPUs.

    Prints verl's resource_pool_spec and mapping as a resource_pools: section (which
    places the same layout when read back), then, as a comment line so the whole output
    stays YAML, the overrides of verl's trainer config that make its driver build those
    pools (trainer.nnodes=..., reward.reward_model.*=...).
    A layout verl cannot state is refused, naming the component and the rule: a process
    on several GPUs or none, components sharing part of their GPUs, unequal GPUs per
    node, GPUs of their own for a role verl's trainer runs on global_pool, or nodes and
    rank orders other than those Ray and verl would give (verl's config cannot choose).

    \b
    json and yaml print one document: schema_version (1), command, file,
    overrides, to (verl), verl_version, resource_pools (resource_pool_spec
    and mapping) and trainer_overrides (a list of KEY=VALUE).

    \b
    Examples:
      solver-placement export --to verl models/verl_ppo_trainer_2x8.yaml
      solver-placement export --to verl models/verl_pools_2x8.yaml --verl-version 0.9.0 --format json
    """
    given = read_job_input(file, overrides)
    with working(f"solving {given.name}"):
        placed = place(given.job, time_limit, model_parallel)
    candidates = verl_pools(given.job.config).versions if given.job.frontend.name == VERL_TRAINER else ()
    exported = export_verl(placed.solution, version=verl_version, candidates=candidates)
    if fmt != "text":
        echo_document(document("export", given, to=target, verl_version=exported.version, resource_pools=exported.resource_pools(),
                               trainer_overrides=list(exported.overrides)), fmt)  # fmt: skip
        return
    section = yaml.safe_dump({"resource_pools": exported.resource_pools()}, sort_keys=False, default_flow_style=None)
    click.echo(f"# verl {exported.version}: resource_pool_spec and mapping, as a resource_pools: section\n{section}", nl=False)
    click.echo(f"# verl {exported.version}: trainer overrides\n# {' '.join(exported.overrides)}")
