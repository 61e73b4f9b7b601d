"""The layout a placement strategy states, as CSR arrays, and whether a solution holds exactly it.

A strategy handed out by a ``ComponentPlacement`` describes a component the placement has
already solved. Solving the strategy alone would give the same records again, so the strategy
serves them from that solution instead (``PlacementStrategy.serve``). That is only right when
the solution holds *exactly* what the strategy states: the same resources (so the same node
group labels) and the same ranks per process in the same order. This module answers that with
array comparisons, so the check costs nothing next to the records it saves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from solver_placement._cluster.cluster import ResourceSet
from solver_placement._solver.solution import Solution


@dataclass(frozen=True)
class StatedLayout:
    """What a strategy states on one cluster: the resources its ranks count and, per process
    ``p``, the ranks ``ranks[indptr[p]:indptr[p + 1]]``."""

    resources: ResourceSet
    indptr: np.ndarray
    ranks: np.ndarray

    def held_by(self, solution: Solution, name: str) -> bool:
        """True when ``solution`` places component ``name`` exactly as stated."""
        if name not in solution.spec.components:
            return False
        assignment = solution.assignment(name)
        return (
            _same_resources(solution.spec.resources_of(name), self.resources)
            and np.array_equal(assignment.indptr, self.indptr)
            and np.array_equal(assignment.ranks, self.ranks)
        )


def in_normal_form(indptr: np.ndarray, ranks: np.ndarray) -> bool:
    """Ranks ascending inside each process and processes ordered by first rank: the order
    RLinf's ``FlexiblePlacementStrategy`` puts any rank lists in (a stable sort)."""
    if indptr.size < 2:
        return True
    steps = np.diff(ranks)
    inside = np.ones(steps.size, dtype=bool)
    inside[indptr[1:-1] - 1] = False  # a step from one process's last rank to the next's first
    return bool((steps[inside] >= 0).all() and (np.diff(ranks[indptr[:-1]]) >= 0).all())


def csr_of(rank_lists: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Rank lists as CSR arrays (``indptr``, flat ``ranks``)."""
    sizes = np.fromiter((len(ranks) for ranks in rank_lists), dtype=np.int64, count=len(rank_lists))
    flat = np.fromiter((rank for ranks in rank_lists for rank in ranks), dtype=np.int64, count=int(sizes.sum()))
    return np.concatenate(([0], np.cumsum(sizes))), flat


def packed_ranks(start: int, num_processes: int, per_process: int, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """RLinf's packed layout as CSR arrays: process ``p`` takes ``start + b*g*s + o + k*s``
    (``b = p // s`` its block of ``g*s`` ranks, ``o = p % s`` its offset, ``k < g``)."""
    process = np.arange(num_processes, dtype=np.int64)
    first = start + (process // stride) * per_process * stride + process % stride
    ranks = (first[:, None] + np.arange(per_process, dtype=np.int64) * stride).ravel()
    return np.arange(num_processes + 1, dtype=np.int64) * per_process, ranks


def _same_resources(a: ResourceSet, b: ResourceSet) -> bool:
    """Same groups in the same order over the same physical items: records read the same."""
    return a is b or (
        a.labels == b.labels
        and a.counts_nodes == b.counts_nodes
        and np.array_equal(a.physical, b.physical)
        and np.array_equal(a.group_of, b.group_of)
    )
