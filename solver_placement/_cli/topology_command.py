"""``gpu-topology``: this node's ``cluster.gpu_topology`` entry, read where the machine tells it.

Run on each node as the workers will run there (same container, same ``CUDA_VISIBLE_DEVICES``);
the entry it prints is what a person checks into the config (``_cluster/topology_reader.py``).
"""

from __future__ import annotations

from pathlib import Path

import click

from solver_placement._cluster.topology_reader import main as print_node_topology


@click.command("gpu-topology")
@click.option(
    "--sys-root", type=click.Path(file_okay=False, path_type=Path), default=Path("/sys"), show_default=True,
    help="Where sysfs is mounted (a container's mount, or a copy saved from another node).",
)  # fmt: skip
def topology_command(sys_root: Path) -> None:
    """Print this node's cluster.gpu_topology entry (NUMA nodes, their CPUs and EGL devices of its GPUs) as YAML."""
    print_node_topology(sys_root)
