"""Where Ray lands NeMo-RL's placement groups: one-GPU bundles, ``PACK`` or ``SPREAD``.

Every bundle is ``{"CPU": max_colocated_worker_groups, "GPU": 1}`` (``virtual_cluster.py`` lines
907-918 at 7ea279ab). Ray's ``BundlePackSchedulingPolicy`` places a ``PACK`` group whole or not at
all: the freest node (Ray's ``LeastResourceScorer``; ties: fewer CPUs reserved, then the lower
node) takes every bundle that fits, then the next freest the rest, so a "node" group larger than a
node spills over to another machine (PACK is best effort). ``SPREAD`` (its
``BundleSpreadSchedulingPolicy``) puts each bundle on a node the group has used least so far,
freest first. A node hands out its lowest free GPUs, in bundle order. A group that no set of nodes
holds stays pending; NeMo-RL waits 180 s for it (``ray.get(..., timeout=180)``, line 947) and
raises ``TimeoutError``.
"""

from __future__ import annotations

from dataclasses import dataclass

from solver_placement._cluster.cluster import Cluster


@dataclass(frozen=True)
class Bundle:
    """One bundle where Ray put it: the cluster node and the node-local GPU it reserves."""

    node: int
    gpu: int


class RayState:
    """Each node's free GPUs and the CPUs NeMo-RL's bundles reserved on it, as groups are asked for."""

    def __init__(self, cluster: Cluster) -> None:
        self.free: list[list[int]] = [list(range(int(count))) for count in cluster.gpus_per_node]
        self.cpus: list[int] = [0] * len(self.free)

    def place(self, count: int, cpus_each: int, strategy: str) -> list[Bundle] | None:
        """``count`` bundles of one group, in bundle order, or None when Ray cannot place it (pending)."""
        if sum(map(len, self.free)) < count:
            return None
        free = [list(gpus) for gpus in self.free]
        cpus = list(self.cpus)
        bundles = self._pack(free, cpus, count, cpus_each) if strategy == "PACK" else self._spread(free, cpus, count, cpus_each)
        self.free, self.cpus = free, cpus
        return bundles

    @staticmethod
    def _pack(free: list[list[int]], cpus: list[int], count: int, cpus_each: int) -> list[Bundle]:
        candidates = set(range(len(free)))
        bundles: list[Bundle] = []
        while len(bundles) < count:
            node = min((n for n in candidates if free[n]), key=lambda n: (-len(free[n]), cpus[n], n))
            take = min(len(free[node]), count - len(bundles))
            bundles.extend(Bundle(node, gpu) for gpu in free[node][:take])
            del free[node][:take]
            cpus[node] += take * cpus_each
            candidates.discard(node)
        return bundles

    @staticmethod
    def _spread(free: list[list[int]], cpus: list[int], count: int, cpus_each: int) -> list[Bundle]:
        used = [0] * len(free)
        bundles: list[Bundle] = []
        for _ in range(count):
            node = min((n for n in range(len(free)) if free[n]), key=lambda n: (used[n], -len(free[n]), cpus[n], n))
            bundles.append(Bundle(node, free[node].pop(0)))
            used[node] += 1
            cpus[node] += cpus_each
        return bundles
