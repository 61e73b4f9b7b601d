"""Where Ray lands what SkyRL 0.4.0 asks for: ``PACK`` groups, fractional actors in their
bundles, and whole-GPU actors asked for without a group.

SkyRL asks every group with ``strategy="PACK"`` and bundles that are all alike (one GPU each, or
``{"GPU": n, "CPU": n}`` per node), waiting in ``get_ray_pg_ready_with_timeout`` before asking
the next (``skyrl_train/utils/utils.py:732-746`` at skyrl_train-v0.4.0). Ray's
``BundlePackSchedulingPolicy`` places a group whole or not at all: the freest node (GPUs, then
CPUs reserved, then the lower rank) takes the first unplaced bundle and every further one that
fits, that node is dropped and it repeats. A node gives a bundle its lowest free GPUs, in
bundle order. A group no nodes hold is never ready: SkyRL raises ``RuntimeError`` after
``SKYRL_RAY_PG_TIMEOUT_IN_S`` (180 s, ``env_vars.py:13``) and nothing after it starts.

Actors inside a bundle that ask a fraction of a GPU (SkyRL's 0.2, 0.75 and 0.25) take the first
of the bundle's GPUs with that much left, as Ray's resource instances do. A whole-GPU actor
without a group (a training group of one GPU per node, ``worker.py:438-480``) goes where Ray's
default policy puts it: here the first node by rank with a free GPU, its lowest one.

Beyond 16 bundles of one group Ray's sort of the (equal) bundles may reorder which bundle indices
share a node (ray#51117); the count per node is still as predicted, and SkyRL's own reordering
(``get_reordered_bundle_indices``) answers it for training ranks -- not for inference engines.
"""

from __future__ import annotations

from dataclasses import dataclass

from solver_placement._cluster.cluster import Cluster
from solver_placement._prediction.checks import SHARE_TOLERANCE

#: Bundles of one group that Ray keeps in request order over its nodes (measured on Ray 2.60).
STABLE_BUNDLES = 16


@dataclass(frozen=True)
class Bundle:
    """One bundle where Ray put it: the node and the node-local GPUs it reserves."""

    node: int
    gpus: tuple[int, ...]


class RayState:
    """The cluster as Ray sees it while SkyRL asks: each node's free GPUs, CPUs reserved, and
    the share of each reserved GPU that actors inside bundles have taken."""

    def __init__(self, cluster: Cluster) -> None:
        self.free: list[list[int]] = [list(range(int(count))) for count in cluster.gpus_per_node]
        self.cpus: list[int] = [0] * len(self.free)
        self.taken: dict[tuple[int, int], float] = {}

    def pack(self, count: int, size: int) -> list[Bundle] | None:
        """``count`` bundles of ``size`` GPUs of one ``PACK`` group, in bundle order, or None (never ready)."""
        free = [list(gpus) for gpus in self.free]
        cpus = list(self.cpus)
        candidates = {node for node in range(len(free)) if len(free[node]) >= size}
        bundles: list[Bundle] = []
        while len(bundles) < count:
            if not candidates:
                return None
            node = min(candidates, key=lambda n: (-len(free[n]), cpus[n], n))
            take = min(len(free[node]) // size, count - len(bundles))
            for _ in range(take):
                bundles.append(Bundle(node, tuple(free[node][:size])))
                del free[node][:size]
            cpus[node] += take * size
            candidates.discard(node)
        self.free, self.cpus = free, cpus
        return bundles

    def in_bundle(self, bundle: Bundle, share: float) -> int | None:
        """The GPU of ``bundle`` an actor asking ``share`` of one gets (the first with room), or
        None when none has room (Ray keeps the actor waiting)."""
        for gpu in bundle.gpus:
            if self.taken.get((bundle.node, gpu), 0.0) + share <= 1 + SHARE_TOLERANCE:
                self.taken[(bundle.node, gpu)] = self.taken.get((bundle.node, gpu), 0.0) + share
                return gpu
        return None

    def lone(self) -> tuple[int, int] | None:
        """A whole-GPU actor without a group: (node, GPU), or None when no GPU is free (pending forever)."""
        for node, gpus in enumerate(self.free):
            if gpus:
                self.cpus[node] += 1
                return node, gpus.pop(0)
        return None
