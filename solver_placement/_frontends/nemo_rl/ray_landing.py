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

A bundle pinned to an NVLink domain (``cluster.segment_size``: ``{"nvlink_domain_<id>": 0.001}``
added to it, ``virtual_cluster.py`` lines 907-918) fits only the nodes of that domain; PACK then
takes the freest node of the domain, and SPREAD the least used one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from solver_placement._cluster.cluster import Cluster


@dataclass(frozen=True)
class Bundle:
    """One bundle where Ray put it: the cluster node and the node-local GPU it reserves."""

    node: int
    gpu: int


class RayState:
    """Each node's free GPUs and the CPUs NeMo-RL's bundles reserved on it, as groups are asked for;
    ``domains`` each node's NVLink domain (None: none known)."""

    def __init__(self, cluster: Cluster, domains: Sequence[str | None] | None = None) -> None:
        self.free: list[list[int]] = [list(range(int(count))) for count in cluster.gpus_per_node]
        self.cpus: list[int] = [0] * len(self.free)
        self.domains: tuple[str | None, ...] = tuple(domains) if domains is not None else (None,) * len(self.free)

    def place(self, count: int, cpus_each: int, strategy: str, pins: Sequence[str | None] | None = None) -> list[Bundle] | None:
        """``count`` bundles of one group, in bundle order (``pins``: each bundle's domain, None for
        any node), or None when Ray cannot place it (pending)."""
        pinned = tuple(pins) if pins is not None else (None,) * count
        free = [list(gpus) for gpus in self.free]
        cpus = list(self.cpus)
        bundles = self._pack(free, cpus, pinned, cpus_each) if strategy == "PACK" else self._spread(free, cpus, pinned, cpus_each)
        if bundles is None:
            return None
        self.free, self.cpus = free, cpus
        return bundles

    def _fits(self, node: int, pin: str | None, free: list[list[int]]) -> bool:
        return bool(free[node]) and (pin is None or self.domains[node] == pin)

    def _pack(self, free: list[list[int]], cpus: list[int], pins: tuple[str | None, ...], cpus_each: int) -> list[Bundle] | None:
        candidates = set(range(len(free)))
        bundles: list[Bundle] = []
        while len(bundles) < len(pins):
            fitting = [n for n in candidates if self._fits(n, pins[len(bundles)], free)]
            if not fitting:
                return None
            node = min(fitting, key=lambda n: (-len(free[n]), cpus[n], n))
            while len(bundles) < len(pins) and self._fits(node, pins[len(bundles)], free):
                bundles.append(Bundle(node, free[node].pop(0)))
                cpus[node] += cpus_each
            candidates.discard(node)
        return bundles

    def _spread(self, free: list[list[int]], cpus: list[int], pins: tuple[str | None, ...], cpus_each: int) -> list[Bundle] | None:
        used = [0] * len(free)
        bundles: list[Bundle] = []
        for pin in pins:
            fitting = [n for n in range(len(free)) if self._fits(n, pin, free)]
            if not fitting:
                return None
            node = min(fitting, key=lambda n: (used[n], -len(free[n]), cpus[n], n))
            bundles.append(Bundle(node, free[node].pop(0)))
            used[node] += 1
            cpus[node] += cpus_each
        return bundles
