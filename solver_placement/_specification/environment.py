"""What a component's processes see around their hardware: the keys ``hide_accelerators``,
``egl_device`` and ``numa_bind``.

They never change where a process runs, only what its record's ``visible_accelerators`` and
``env`` say, and so what the launch sets (the launch copies the record, nothing else):

* ``hide_accelerators``: RLinf's meaning of ``visible_accelerators`` for a process that holds no
  GPU (node-level, or on a robot or other custom hardware) is *every GPU of its node*, and its
  WorkerGroup sets ``CUDA_VISIBLE_DEVICES`` from that field; embodied env workers rely on it to
  render or simulate on the GPU. ``true`` gives such processes no GPU instead (``[]``, so
  ``CUDA_VISIBLE_DEVICES=""``). A process holding GPUs always sees them.
* ``egl_device``: each process that sees a GPU gets ``MUJOCO_EGL_DEVICE_ID`` and
  ``EGL_DEVICE_ID``, the EGL index of the GPU it renders on (its own first GPU, else the first it
  sees), as RLinf does since PR #1458; the index comes from ``cluster.gpu_topology``.
* ``numa_bind``: each process holding GPUs gets ``NUMA_NODES`` and ``NUMA_CPUS``, the NUMA nodes
  of its GPUs and their CPUs from ``cluster.gpu_topology``; the launch starts it bound to those
  CPUs.

A key that can do nothing on the component's hardware is refused, naming the component, the key
and why, rather than ignored: ``hide_accelerators`` on GPU-only components, ``egl_device`` where
no process can see a GPU, ``numa_bind`` where no process holds one or a GPU node states no NUMA
topology.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from solver_placement._cluster.cluster import Cluster, ResourceSet
from solver_placement._cluster.ranks import format_ranks
from solver_placement._constants import ACCELERATOR
from solver_placement._errors import PlacementConfigError, shown

ENVIRONMENT_KEYS = ("hide_accelerators", "egl_device", "numa_bind")
#: The variables each key adds to a record's ``env`` (names RLinf uses where it has one).
EGL_VARIABLES = ("MUJOCO_EGL_DEVICE_ID", "EGL_DEVICE_ID")
NUMA_VARIABLES = ("NUMA_NODES", "NUMA_CPUS")
#: Where a node's ``gpu_topology`` entry comes from, for the messages that ask for one.
READER_HINT = "solver-placement gpu-topology prints a node's entry"


@dataclass(frozen=True)
class ProcessEnvironment:
    """A component's environment keys (all off by default: RLinf's behaviour)."""

    hide_accelerators: bool = False
    egl_device: bool = False
    numa_bind: bool = False

    def as_config(self) -> dict[str, bool]:
        """The keys that are on, as a component body states them (to restate a component)."""
        return {key: value for key, value in asdict(self).items() if value}


#: Every key off: RLinf's behaviour, the default of every component.
DEFAULT_ENVIRONMENT = ProcessEnvironment()


def parse_environment(body: Mapping[str, Any], where: str) -> ProcessEnvironment:
    """The three keys of a component body, each ``true`` or ``false``."""
    for key in ENVIRONMENT_KEYS:
        if not isinstance(body.get(key, False), bool):
            raise PlacementConfigError(f"{where}: {key} must be true or false, not {shown(body[key])}")
    return ProcessEnvironment(*(body.get(key, False) for key in ENVIRONMENT_KEYS))


def check_environment(name: str, environment: ProcessEnvironment, resources: ResourceSet, candidates: np.ndarray, cluster: Cluster) -> None:
    """Refuse a key that can do nothing on the hardware the component may use (its candidates,
    physical ids: a declarative window narrows them; see the module docstring)."""
    where = f"component {name!r}"
    labels = ", ".join(repr(group.label) for group in resources.groups)
    holds_gpu = cluster.hw_kind[candidates] == cluster.kinds.index(ACCELERATOR)
    if environment.hide_accelerators and holds_gpu.all():
        raise PlacementConfigError(
            f"{where}: hide_accelerators hides GPUs from processes that hold none (node-level or custom hardware), but every "
            f"resource of node group {labels} is a GPU and a process always sees its own GPUs; remove the key"
        )
    node_gpus = cluster.gpus_per_node[cluster.hw_node[candidates[~holds_gpu]]]
    if environment.egl_device and not (holds_gpu.any() or (not environment.hide_accelerators and node_gpus.any())):
        why = "hide_accelerators hides the node GPUs from them" if environment.hide_accelerators else f"node group {labels} has no GPU"
        raise PlacementConfigError(f"{where}: egl_device names the EGL device of the GPU a process sees, but no process can see one ({why})")
    if environment.numa_bind:
        if not holds_gpu.any():
            raise PlacementConfigError(
                f"{where}: numa_bind binds a process to the NUMA nodes of its own GPUs, but its processes hold none (node group {labels})"
            )
        gpu_nodes = np.unique(cluster.hw_node[candidates[holds_gpu]]).tolist()
        unstated = [node for node in gpu_nodes if (topology := cluster.gpu_topology[node]) is None or not topology.states_numa]
        if unstated:
            raise PlacementConfigError(
                f"{where}: numa_bind needs the NUMA node of every GPU it may hold, but cluster.gpu_topology states no numa_nodes "
                f"for node {format_ranks(unstated)} ({READER_HINT})"
            )
