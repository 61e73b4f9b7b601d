"""Where each process was before a re-plan, as physical ids of the cluster it is re-planned on.

Why its own module: ``solve(..., previous=...)`` prices the ``changes`` term with it, and
``replan``'s keep-in-place answer is measured on the same scale (its objective and its bound),
so both read earlier placements the one way. Records are looked up by arrays (one dense table
of the cluster's items): a re-plan reads hundreds of thousands of them, 1.7-3.2 s one
:meth:`Cluster.physical_id` call per item.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import chain
from operator import attrgetter
from typing import overload

import numpy as np

from solver_placement._cluster.cluster import Cluster
from solver_placement._constants import NODE
from solver_placement._errors import PlacementConfigError
from solver_placement._records import Placement, collector_paused
from solver_placement._solver.solution import Solution
from solver_placement._specification.placement_spec import PlacementSpec

#: An earlier answer, or its placement records by component.
PreviousPlacements = Solution | Mapping[str, Sequence[Placement]]


class HeldSets(Sequence[list[int]]):
    """Per process (rank order), the physical ids it held: CSR arrays, process ``p`` holding
    ``ids[indptr[p]:indptr[p + 1]]``, read as a list of lists on first use. Why: a re-plan on
    65,536 nodes reads hundreds of thousands of them, and the ``changes`` term of the objective
    (``evaluate.py``) counts them from the arrays; a list per process cost 0.3-0.6 s to make."""

    def __init__(self, indptr: np.ndarray, ids: np.ndarray) -> None:
        self.indptr, self.ids = indptr, ids
        self._lists: list[list[int]] | None = None

    def __len__(self) -> int:
        return int(self.indptr.size - 1)

    @overload
    def __getitem__(self, index: int) -> list[int]: ...

    @overload
    def __getitem__(self, index: slice) -> list[list[int]]: ...

    def __getitem__(self, index: int | slice) -> list[int] | list[list[int]]:
        return self.lists()[index]

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self.lists())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and self.lists() == list(other)

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which do not hash either

    def lists(self) -> list[list[int]]:
        """The sets as one list of ids per process (made once)."""
        if self._lists is None:
            listed, bounds = self.ids.tolist(), self.indptr.tolist()
            with collector_paused():  # a list per process: collections meanwhile would walk every live record
                self._lists = [listed[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
        return self._lists


def as_held_sets(sets: Sequence[Sequence[int]]) -> HeldSets:
    """``sets`` as CSR arrays: a :class:`HeldSets` as it is, other sequences (records read one by
    one, tests) converted once, so their readers need one form."""
    if isinstance(sets, HeldSets):
        return sets
    sizes = np.fromiter(map(len, sets), dtype=np.int64, count=len(sets))
    ids = np.fromiter(chain.from_iterable(sets), dtype=np.int64, count=int(sizes.sum()))
    return HeldSets(np.concatenate(([0], np.cumsum(sizes))).astype(np.int64), ids)


def previous_hardware(spec: PlacementSpec, previous: PreviousPlacements | None) -> dict[str, HeldSets]:
    """Physical ids each process held before, per component, on this spec's cluster (records on
    hardware the cluster no longer has, e.g. a lost node, are left out)."""
    if previous is None:
        return {}
    if isinstance(previous, Solution):  # its records are its assignments: read those, no record by record
        return {name: _assigned(spec.cluster, previous, name) for name in previous.components if name in spec.components}
    return {name: _held(spec.cluster, list(placements)) for name, placements in previous.items() if name in spec.components}


def _assigned(cluster: Cluster, solution: Solution, name: str) -> HeldSets:
    """:func:`_held` of the solution's records of ``name``, read from the assignment they are
    built from (a verified answer: each process's items on one node, of one type)."""
    assignment, old = solution.assignment(name), solution.cluster
    codes = np.array([cluster.kinds.index(kind) if kind in cluster.kinds else -1 for kind in old.kinds], dtype=np.int64)
    ids = item_ids(cluster, old.hw_node[assignment.hardware].astype(np.int64), codes[old.hw_kind[assignment.hardware]], old.hw_local[assignment.hardware].astype(np.int64))
    return _existing(assignment.indptr, ids)


def _existing(indptr: np.ndarray, ids: np.ndarray) -> HeldSets:
    """The sets of the processes whose every id exists (-1: an item the cluster has not got)."""
    sizes = np.diff(indptr)
    whole = np.add.reduceat(ids < 0, indptr[:-1]) == 0 if ids.size else np.ones(sizes.size, dtype=bool)
    kept_sizes = sizes[whole]
    return HeldSets(np.concatenate(([0], np.cumsum(kept_sizes))).astype(np.int64), ids[np.repeat(whole, sizes)].astype(np.int64))


def _held(cluster: Cluster, records: list[Placement]) -> HeldSets:
    """Per record whose every item exists on ``cluster``, the physical ids of its items."""
    locals_ = [p.local_hardware_ranks or [0] for p in records]
    nodes = list(map(attrgetter("cluster_node_rank"), records))
    flat = list(chain.from_iterable(locals_))
    if not set(map(type, nodes)) | set(map(type, flat)) <= {int}:  # odd values: the cluster's own lookup words nothing, skips them
        found = [one for p in records if (one := _one_by_one(cluster, p)) is not None]
        sizes = np.fromiter(map(len, found), dtype=np.int64, count=len(found))
        return HeldSets(np.concatenate(([0], np.cumsum(sizes))).astype(np.int64), np.fromiter(chain.from_iterable(found), dtype=np.int64, count=int(sizes.sum())))
    codes = {kind: code for code, kind in enumerate(cluster.kinds)}
    sizes = np.fromiter(map(len, locals_), dtype=np.int64, count=len(records))
    kind = np.array([codes.get(p.hardware_type, -1) for p in records], dtype=np.int64)
    kind = np.repeat(kind, sizes)
    local = np.where(kind == codes.get(NODE, -1), 0, np.array(flat, dtype=np.int64))  # a node is its own item 0
    ids = item_ids(cluster, np.repeat(np.array(nodes, dtype=np.int64), sizes), kind, local)
    return _existing(np.concatenate(([0], np.cumsum(sizes))).astype(np.int64), ids)


def _one_by_one(cluster: Cluster, p: Placement) -> list[int] | None:
    """One record's ids by the cluster's own index; None when an item does not exist."""
    try:
        return [cluster.physical_id(p.cluster_node_rank, p.hardware_type, local) for local in p.local_hardware_ranks or [0]]
    except PlacementConfigError:
        return None


def item_ids(cluster: Cluster, node: np.ndarray, kind: np.ndarray, local: np.ndarray) -> np.ndarray:
    """The physical id of each (node, kind code of ``cluster.kinds``, local index) on
    ``cluster``, -1 where it has no such item: one dense table of the cluster's own item tables
    (what :meth:`Cluster.physical_id` indexes)."""
    width = int(cluster.hw_local.max(initial=0)) + 1
    kinds = len(cluster.kinds)
    dense = np.full(cluster.num_nodes * kinds * width, -1, dtype=np.int64)
    dense[(cluster.hw_node.astype(np.int64) * kinds + cluster.hw_kind) * width + cluster.hw_local] = np.arange(cluster.num_hardware)
    inside = (node >= 0) & (node < cluster.num_nodes) & (kind >= 0) & (kind < kinds) & (local >= 0) & (local < width)
    return np.where(inside, dense[np.where(inside, (node * kinds + kind) * width + local, 0)], -1)
