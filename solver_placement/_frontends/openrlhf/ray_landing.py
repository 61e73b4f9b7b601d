"""Where Ray lands what OpenRLHF asks for: ``PACK`` placement groups of one-GPU bundles, and
whole-GPU actors asked for without a group.

OpenRLHF asks every group as ``[{"GPU": 1, "CPU": 1}] * n`` with ``strategy="PACK"`` and waits in
``ray.get(pg.ready())`` before asking the next (``launcher.py``, ``train_ppo_ray.py``). Ray's
``BundlePackSchedulingPolicy::Schedule`` (``src/ray/raylet/scheduling/policy/bundle_scheduling_policy.cc``)
places a group whole or not at all: it takes the best node for the first unplaced bundle (its
``LeastResourceScorer``: the node left freest, as ``verl/pool_order.py`` explains; ties here go
to the node with fewer CPUs reserved, then the lower rank, where Ray's node map order decides),
puts every further bundle that fits there, drops that node and repeats; a group no set of nodes
holds stays pending, and OpenRLHF with it, forever. The GPUs a node gives its bundles are its
lowest free ones, in bundle order.

Measured on Ray 2.60 (three nodes of 8 logical GPUs): 12 and 16 bundles landed as this model says
(8 on one node, the rest on the next, GPUs 0 up in bundle order). Beyond 16 bundles Ray's
``std::sort`` of the (equal) bundles reorders them: 17 bundles put bundles 0, 2-7 and 9 on one
node, 24 put bundles 1-8 on one node (ray#51117, which OpenRLHF's ``get_bundle_indices`` answers).
Which bundle indices share a node is then not predictable from the request; the count per node
is. :data:`STABLE_BUNDLES` is that bound; predictions above it say so.

An actor asked for a whole GPU without a group (OpenRLHF's groups of one GPU per node) goes where
Ray's default (hybrid) policy puts it: the first node, the driver's, while it is below half use,
else the least used; with the GPUs counted alone that is the first node by rank with a free GPU
here, its lowest free GPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from solver_placement._cluster.cluster import Cluster

#: Bundles of one group that Ray (2.60, measured) keeps in request order over its nodes.
STABLE_BUNDLES = 16


@dataclass(frozen=True)
class Bundle:
    """One bundle where Ray put it: the node and the node-local GPU it reserves."""

    node: int
    gpu: int


class RayState:
    """The cluster as Ray sees it while OpenRLHF asks for groups: each node's free GPUs and the
    CPUs reserved on it (each bundle and each lone actor asks one CPU)."""

    def __init__(self, cluster: Cluster) -> None:
        self.free: list[list[int]] = [list(range(int(count))) for count in cluster.gpus_per_node]
        self.cpus: list[int] = [0] * len(self.free)

    def free_gpus(self) -> list[int]:
        return [len(gpus) for gpus in self.free]

    def pack(self, count: int) -> list[Bundle] | None:
        """``count`` one-GPU bundles of one ``PACK`` group, in bundle order, or None (pending)."""
        free = [list(gpus) for gpus in self.free]
        cpus = list(self.cpus)
        candidates = set(range(len(free)))
        bundles: list[Bundle] = []
        while len(bundles) < count:
            usable = [node for node in candidates if free[node]]
            if not usable:
                return None
            node = min(usable, key=lambda n: (-len(free[n]), cpus[n], n))
            take = min(len(free[node]), count - len(bundles))
            bundles.extend(Bundle(node, gpu) for gpu in free[node][:take])
            del free[node][:take]
            cpus[node] += take
            candidates.discard(node)
        self.free, self.cpus = free, cpus
        return bundles

    def lone(self) -> Bundle | None:
        """A whole-GPU actor without a group, or None when no node has a GPU free (pending)."""
        for node, gpus in enumerate(self.free):
            if gpus:
                self.cpus[node] += 1
                return Bundle(node, gpus.pop(0))
        return None


def nodes_of(bundles: Sequence[Bundle]) -> list[int]:
    """The nodes of a group's bundles, each once, in bundle order."""
    return list(dict.fromkeys(bundle.node for bundle in bundles))
