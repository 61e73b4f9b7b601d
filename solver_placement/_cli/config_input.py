"""FILE and its overrides: ``solver-placement solve m.yaml cluster.num_nodes=4``, or ``-`` for stdin;
with ``--ray``/``--local``, its cluster from the live Ray cluster (``live_model``).

The overrides are Hydra's, the form RLinf users already type (``overrides``): ``KEY=VALUE``
replaces a value, ``+KEY=VALUE`` adds a key, ``++KEY=VALUE`` adds or replaces, ``~KEY`` deletes.
They apply before interpolations are resolved, so ``${...}`` references see the new values.

A model whose cluster states its nodes but no GPU count gets 8 GPUs per node (the library's
assumption, ``AssumedGpuCountWarning``); RLinf configs never state the count, since RLinf reads
it from the hardware. The command says so on stderr and in the header of its answer, and the
library's own Python warning is silenced for the command (``app``) so it is said once.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import click
from omegaconf import DictConfig

from solver_placement._cli.live_cluster import on_live_cluster
from solver_placement._cli.options import Command, ray_choice
from solver_placement._cluster.schema import assumed_gpu_count
from solver_placement._config import existing_file, load_yaml
from solver_placement._job import Job, load_job
from solver_placement._overrides import apply_to

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


def job_arguments(command: Command) -> Command:
    """Add the FILE and [KEY=VALUE]... arguments every command that takes a model shares."""
    command = click.argument("overrides", nargs=-1, metavar="[KEY=VALUE]...")(command)
    return click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))(command)


def read_job_input(file: str, overrides: Sequence[str]) -> JobInput:
    """Load FILE (or stdin for ``-``), apply the overrides to it and resolve it to plain values;
    with the command's ``--ray``/``--local``, its cluster comes from (or is checked against) that Ray.
    A cluster with no GPU count that no real Ray checks is warned about on stderr (the module docstring)."""
    name = "<stdin>" if file == STDIN else file
    loaded = _load(file, name)
    apply_to(loaded, overrides, file, name)
    job = load_job(loaded)
    choice = ray_choice(click.get_current_context(silent=True))
    # a real Ray gives the count or checks it; --local starts a Ray shaped like the model, which confirms nothing
    assumed = assumed_gpu_count(job.section) if choice is None or choice.address == "local" else None
    if assumed is not None:
        key = job.key("num_gpus_per_node")
        click.echo(
            f"warning: {name} states no {key}, so {assumed} GPUs per node are assumed (RLinf reads the count from the "
            f"hardware); state it, in the file or as +{key}=N, or give --ray ADDRESS to read the live cluster",
            err=True,
        )
    if choice is not None:
        return JobInput(name, tuple(overrides), on_live_cluster(job, choice, name), on_ray=True, assumed_gpus_per_node=assumed)
    return JobInput(name, tuple(overrides), job, assumed_gpus_per_node=assumed)


def _load(file: str, name: str) -> DictConfig:
    """FILE as an unresolved DictConfig; the messages match the library's for a path it loads itself."""
    source: IO[str] | Path
    if file == STDIN:
        source = sys.stdin
    else:
        source = existing_file(file)
    return load_yaml(source, name)

