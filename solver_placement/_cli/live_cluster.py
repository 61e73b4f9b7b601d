"""A model's cluster when the command runs against a live Ray cluster (``--ray ADDRESS``, ``--local``).

A FILE that states its cluster (``cluster.num_nodes``) keeps it, checked against the live
cluster first: every difference (a missing node, fewer GPUs, another GPU model, a missing robot)
in one error, before anything is solved or reserved. A FILE that does not gets the live
cluster's: its nodes, GPUs, GPU models, custom resources and labels (``Cluster.from_ray``) fill
every key FILE leaves out, and FILE's own node groups follow the live ones, so a FILE may give
only ``component_placement`` (plus, say, ``gpu_memory_gb`` or node groups over the live ranks).
With ``--available`` only what is free now counts (``cluster.free_gpus_only``).

The process stays connected until the command ends, so ``launch`` plans and reserves on the
cluster that was checked; the connection (or the embedded Ray of ``--local``) is closed with
the command's context.
"""

from __future__ import annotations

import click

from solver_placement._cli.options import RayChoice
from solver_placement._cli.progress import working
from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import PlacementConfigError
from solver_placement._job import Job


def on_live_cluster(job: Job, choice: RayChoice, name: str) -> Job:
    """``job`` on the cluster the live Ray cluster gives it (see the module docstring)."""
    from solver_placement._ray_launch.session import attach, check_against_live  # Ray loads only when asked for

    stated = "num_nodes" in job.section
    if stated and choice.group_by_labels:
        raise click.UsageError(f"{name} states its cluster (cluster.num_nodes); --group-by-label only shapes a cluster read from Ray")
    if stated and choice.available:
        raise click.UsageError(f"{name} states its cluster (cluster.num_nodes); --available only shapes a cluster read from Ray")
    if not stated and choice.address == "local":
        raise PlacementConfigError(
            f"--local starts an embedded Ray shaped like the model, but {name} states no cluster (cluster.num_nodes): "
            "give --ray ADDRESS to read a running cluster, or state the cluster"
        )
    given = job.stated_cluster if stated else None
    with working("connecting to the embedded Ray" if choice.address == "local" else f"connecting to Ray at {choice.address}"):
        release = attach(given, choice.address, choice.connect_timeout_s)
    click.get_current_context().call_on_close(release)
    if given is not None:
        check_against_live(given)
        return job
    live = Cluster.from_ray(group_by_labels=choice.group_by_labels, available=choice.available)  # this process is connected: reads that cluster
    return job.with_cluster(live.under_section(job.section))
