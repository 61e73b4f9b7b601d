"""``cluster.gpu_topology``: per node, the NUMA node and EGL device of each GPU, and the CPUs of
each NUMA node.

Placement never reads it: a GPU is a GPU to the solver. It is what a process needs *around* its
GPUs once placed, and only for components that ask (``numa_bind``, ``egl_device``, see
``_specification/environment.py``): the CPU set and memory node local to its GPUs, and the EGL index of the
GPU it renders on. None of it can be derived from a GPU id. NUMA locality is a property of the
board (which socket's PCIe root a GPU hangs off), and EGL enumerates every device the driver
sees in driver order, while CUDA ids number only the GPUs a container was given (RLinf's PR #1458
saw CUDA devices 0-3 as EGL devices 2, 3, 0, 1). So the config states them, as read on the node
(``solver-placement gpu-topology`` prints a node's entry), and nothing is
guessed: a component that asks for a binding on a node that states none is refused by name.
Without ``egl_devices`` a GPU's EGL index is its CUDA id, RLinf's fallback when it cannot ask
the driver.

Every number is bounded by what the kernel (or EGL) can hold, before anything is built: NUMA
nodes below :data:`MAX_NUMA_NODES`, CPU ids below :data:`MAX_CPUS`, EGL indices below
:data:`MAX_EGL_DEVICES`; CPU lists are rank lists (``"0-31,64-95"``, Linux's ``cpulist``
format), so their text is bounded by the rank-string limits.
The entries are read in ``schema_topology``; this module holds what they state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from solver_placement._cluster.ranks import format_ranks
from solver_placement._errors import PlacementConfigError

#: Keys of one node's entry.
TOPOLOGY_KEYS = ("numa_nodes", "numa_cpus", "egl_devices")
#: NUMA node ids are below this (Linux's largest ``MAX_NUMNODES``, ``NODES_SHIFT=10``).
MAX_NUMA_NODES = 1024
#: CPU ids are below this (twice Linux's largest ``NR_CPUS``, 8192).
MAX_CPUS = 16384
#: EGL device indices are below this (a node enumerates its GPUs and a few software devices).
MAX_EGL_DEVICES = 256


@dataclass(frozen=True)
class NodeTopology:
    """What one node states: per GPU id its NUMA node and EGL index, per NUMA node its CPUs.

    Empty tuples (and mapping) mean "not stated"; ``numa_nodes`` and ``numa_cpus`` are stated
    together or not at all.
    """

    numa_nodes: tuple[int, ...] = ()
    numa_cpus: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    egl_devices: tuple[int, ...] = ()

    @property
    def states_numa(self) -> bool:
        return bool(self.numa_nodes)

    def numa_binding(self, gpus: Sequence[int]) -> tuple[str, str]:
        """The NUMA nodes of ``gpus`` and their CPUs, as Linux lists (``"0,1"``, ``"0-31,64-95"``)."""
        nodes = sorted({self.numa_nodes[gpu] for gpu in gpus})
        cpus = sorted({cpu for node in nodes for cpu in self.numa_cpus[node]})
        return ",".join(map(str, nodes)), format_ranks(cpus)

    def egl_device(self, gpu: int) -> int:
        """The EGL index that renders on CUDA device ``gpu`` (its id when none is stated)."""
        return self.egl_devices[gpu] if self.egl_devices else gpu


@dataclass(frozen=True)
class StatedTopology:
    """One node's ``gpu_topology`` entry as parsed, with which per-GPU lists it states: a list
    has one value per GPU id, so a cluster derived with other GPU counts checks it again
    (:meth:`fit`) with the message a config stating those counts gets."""

    topology: NodeTopology
    numa_stated: bool
    egl_stated: bool

    def fit(self, gpus: int, where: str) -> NodeTopology:
        """The entry on a node with ``gpus`` GPUs; a stated list of another length is refused."""
        for key, stated, values in (("numa_nodes", self.numa_stated, self.topology.numa_nodes), ("egl_devices", self.egl_stated, self.topology.egl_devices)):
            if stated and len(values) != gpus:
                raise PlacementConfigError(per_gpu_length_message(f"{where}: {key}", len(values), gpus))
        return self.topology


def per_gpu_length_message(where: str, listed: int, gpus: int) -> str:
    """The refusal of a per-GPU list of the wrong length, worded once for the parser and :meth:`StatedTopology.fit`."""
    return f"{where} lists {listed} values but the node has {gpus} GPUs (one per GPU id, in order)"


def topology_where(node: int, gpus: int, shared: bool) -> str:
    """Where a node's entry is stated, for messages: its part of the one mapping, or its list entry."""
    return f"cluster.gpu_topology (node {node}, {gpus} GPUs)" if shared else f"cluster.gpu_topology[{node}]"


def bind_topology(entries: Sequence[StatedTopology | None] | None, shared: bool, gpus_per_node: Sequence[int]) -> tuple[NodeTopology | None, ...]:
    """Per node, its topology on its GPU count (None: states none; one shared mapping describes
    only nodes with GPUs), each stated list checked against that count in node order."""
    if entries is None:
        return (None,) * len(gpus_per_node)
    return tuple(
        None if entry is None or (shared and not gpus) else entry.fit(gpus, topology_where(node, gpus, shared))
        for node, (entry, gpus) in enumerate(zip(entries, gpus_per_node))
    )

