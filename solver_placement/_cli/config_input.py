"""FILE and its overrides: ``solver-placement solve m.yaml cluster.num_nodes=4``, or ``-`` for stdin;
with ``--ray``/``--local``, its cluster from the live Ray cluster (``live_model``).

The overrides are Hydra's, the form RLinf users already type (``overrides``): ``KEY=VALUE``
replaces a value, ``+KEY=VALUE`` adds a key, ``++KEY=VALUE`` adds or replaces, ``~KEY`` deletes.
They apply before interpolations are resolved, so ``${...}`` references see the new values.
A FILE with a Hydra ``defaults:`` list is composed from its folder by Hydra, as is the config
``--config-path DIR --config-name NAME`` names (then every argument is an override), and Hydra
parses the overrides (group overrides such as ``env/train=maniskill`` included).

A model whose cluster states its nodes but no GPU count gets 8 GPUs per node (the library's
assumption, ``AssumedGpuCountWarning``); RLinf configs never state the count, since RLinf reads
it from the hardware. The command says so on stderr and in the header of its answer, and the
library's own Python warning is silenced for the command (``app``) so it is said once. A placed
component whose name reads as another typed wrong (``rolout`` beside ``rollout``, which RLinf
places as one more component) is said the same way: on stderr, in the answer (``explain``, the
JSON envelope's ``warnings``), and not again as the library's ``MisspeltComponentWarning``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from solver_placement._cli.live_cluster import on_live_cluster
from solver_placement._cli.options import Command, hydra_choice, ray_choice
from solver_placement._cluster.schema import assumed_gpu_count
from solver_placement._compose import compose
from solver_placement._config import existing_file
from solver_placement._frontends.rlinf.component_names import near_misses, placed_names
from solver_placement._job import Job, load_job
from solver_placement._overrides import load_overridden

#: The FILE that means "read the model from standard input".
STDIN = "-"


@dataclass(frozen=True)
class JobInput:
    """One job as the user gave it on the command line (FILE): what to call it in messages, the overrides, the job (the merged
    config, loaded once), whether its cluster was read from or checked against a live Ray (``--ray``/``--local``;
    this process is then connected to that Ray until the command ends), and the GPUs per node
    assumed because its config states none (None when it states them or Ray gave them)."""

    name: str
    overrides: tuple[str, ...]
    job: Job
    on_ray: bool = False
    assumed_gpus_per_node: int | None = None
    #: sentences about placed component names that read as another name typed wrong (``rolout``)
    misspelt: tuple[str, ...] = ()


def job_arguments(command: Command) -> Command:
    """Add the FILE and [KEY=VALUE]... arguments every command that takes a model shares (FILE
    is left out with ``--config-path DIR --config-name NAME``, so every argument is an override)."""
    command = click.argument("overrides", nargs=-1, metavar="[KEY=VALUE]...")(command)
    return click.argument("file", metavar="FILE", required=False)(command)


def read_job_input(file: str | None, overrides: Sequence[str]) -> JobInput:
    """Load FILE (or stdin for ``-``, or the config ``--config-path``/``--config-name`` name), with
    the overrides, and resolve it to plain values; with the command's ``--ray``/``--local``, its
    cluster comes from (or is checked against) that Ray. A cluster with no GPU count that no real
    Ray checks is warned about on stderr (the module docstring)."""
    context = click.get_current_context(silent=True)
    hydra = hydra_choice(context)
    if hydra is not None:
        overrides = (*((file,) if file is not None else ()), *overrides)
        name = str(Path(hydra[0]) / hydra[1])
        loaded = compose(hydra[0], hydra[1], overrides)
    elif file is None:
        raise click.UsageError("give FILE (a YAML config, or - for stdin), or --config-path DIR --config-name NAME")
    else:
        name = "<stdin>" if file == STDIN else file
        loaded = load_overridden(sys.stdin if file == STDIN else existing_file(file), name, overrides, file)
    job = load_job(loaded)
    choice = ray_choice(context)
    # a real Ray gives the count or checks it; --local starts a Ray shaped like the model, which confirms nothing
    assumed = assumed_gpu_count(job.section) if choice is None or choice.address == "local" else None
    if assumed is not None:
        key = job.key("num_gpus_per_node")
        click.echo(
            f"warning: {name} states no {key}, so {assumed} GPUs per node are assumed (RLinf reads the count from the "
            f"hardware); state it, in the file or as +{key}=N, or give --ray ADDRESS to read the live cluster",
            err=True,
        )
    misspelt = tuple(miss.sentence() for miss in near_misses(placed_names(job.section.get("component_placement"))))
    for sentence in misspelt:
        click.echo(f"warning: {name}: {sentence}", err=True)
    if choice is not None:
        job = on_live_cluster(job, choice, name)
    return JobInput(name, tuple(overrides), job, on_ray=choice is not None, assumed_gpus_per_node=assumed, misspelt=misspelt)
