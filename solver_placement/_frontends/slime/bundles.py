"""slime's one placement group: where Ray lands its bundles, and slime's re-sorting.

slime asks Ray for one placement group of ``{"GPU": 1, "CPU": 1}`` bundles with ``PACK``
(``slime/ray/placement_group.py:47-48``), sized as ``SlimeJob.placement_group`` says. It then
starts one probe actor per bundle, learns each bundle's node IP and GPU id, and re-sorts the
bundles by (node IP, GPU id) (``sort_key``, ``:21-39``, and ``:83-86``): the actor takes the
first ``actor`` sorted bundles, the rollout the ones from ``rollout_offset`` on (``:127-129``).

Where Ray lands the bundles follows Ray's PACK policy (``BundlePackSchedulingPolicy::Schedule``
in ``src/ray/raylet/scheduling/policy/bundle_scheduling_policy.cc``): the best-scored node takes
as many bundles as it holds, then the next best, until all are placed; when the free GPUs of the
whole cluster are too few, ``pg.ready()`` never returns. The score (``LeastResourceScorer`` in
``scorer.cc``) adds ``(free - 1) / free`` over the bundle's GPU and CPU, so the node with the most
free GPUs wins. Assumptions, stated in the prediction's notes: CPUs follow GPUs (the cluster
records no CPUs); among equally free nodes Ray picks the lowest-numbered (Ray iterates a hash map
there); node numbers follow node IPs (as ``Cluster.from_ray`` numbers them and slime sorts them);
a node's bundles get its GPUs from 0 (Ray hands out free GPU ids lowest first).
"""

from __future__ import annotations

from dataclasses import dataclass

from solver_placement._cluster.cluster import Cluster


@dataclass(frozen=True)
class Slot:
    """One bundle of slime's placement group, in slime's sorted order."""

    node: int
    gpu: int
    #: The bundle's index in the placement group as created (``actual_bundle_index`` in slime's log).
    bundle: int


def sorted_slots(cluster: Cluster, size: int) -> list[Slot] | None:
    """The group's bundles in slime's sorted order, or None when Ray never places the group."""
    free = [int(count) for count in cluster.gpus_per_node]
    if size > sum(free):
        return None
    landed: list[tuple[int, int]] = []  # (node, GPU) per bundle index, as Ray places them
    # Ray takes the best-scored node, fills it, drops it, and scores the rest again; a node's
    # score only changes once it is used, so one sort gives the same order.
    for best in sorted((node for node, count in enumerate(free) if count > 0), key=lambda node: (-_score(free[node]), node)):
        if len(landed) == size:
            break
        landed.extend((best, gpu) for gpu in range(min(free[best], size - len(landed))))
    order = sorted(range(size), key=lambda bundle: landed[bundle])
    return [Slot(landed[bundle][0], landed[bundle][1], bundle) for bundle in order]


def _score(free_gpus: int) -> float:
    """Ray's least-resource score of a node for one GPU bundle: the share of its free GPUs left."""
    return (free_gpus - 1) / free_gpus
