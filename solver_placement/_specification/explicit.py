"""Explicit rank lists (RLinf's FlexiblePlacementStrategy): a component's ranks listed per process.

A user writes them as lists (``[[0, 1], [2], 3]``); a re-plan pins every surviving process by one,
hundreds of thousands of them on 65,536 nodes, as an integer array. Both are held as CSR arrays
(:class:`ExplicitRanks`) and checked by arrays where the input is a table of integers; anything
else, and anything those checks doubt, is read process by process, which words what is wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from solver_placement._cluster.ranks import MAX_RANK
from solver_placement._errors import PlacementConfigError, shown
from solver_placement._limits import check


@dataclass(frozen=True, eq=False)
class ExplicitRanks:
    """Ranks listed per process (sorted, processes ordered by first rank): the layout as written.

    Kept as CSR arrays, process ``p`` holding ``ranks[indptr[p]:indptr[p + 1]]``: a re-plan pins
    every surviving process by an explicit list, hundreds of thousands of them on 65,536 nodes,
    and a tuple per process cost seconds to make, check and read back.
    """

    indptr: np.ndarray
    ranks: np.ndarray

    @classmethod
    def of_rows(cls, indptr: np.ndarray, ranks: np.ndarray) -> ExplicitRanks:
        """Processes as given (CSR), each one's ranks sorted, the processes left in their order."""
        indptr = np.asarray(indptr, dtype=np.int64)
        ranks = np.asarray(ranks, dtype=np.int64)
        owner = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
        return cls(indptr, ranks[np.lexsort((ranks, owner))])

    @property
    def num_processes(self) -> int:
        return int(self.indptr.size - 1)

    def of(self, process: int) -> list[int]:
        """The ranks of one process (for messages and the verifier's loop)."""
        return self.ranks[self.indptr[process]:self.indptr[process + 1]].tolist()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ExplicitRanks):
            return NotImplemented
        return np.array_equal(self.indptr, other.indptr) and np.array_equal(self.ranks, other.ranks)

    def __hash__(self) -> int:
        return hash((self.indptr.tobytes(), self.ranks.tobytes()))


def explicit_text(value: list[Any] | np.ndarray) -> str:
    """How an explicit placement reads in messages: as written, or its size when long."""
    listed = value.tolist() if isinstance(value, np.ndarray) and len(value) <= 64 else value
    return str(listed) if len(value) <= 64 else f"[... {len(value)} processes]"


def parse_explicit(value: Sequence[Any] | np.ndarray, name: str) -> ExplicitRanks:
    """Per-process rank lists (RLinf's FlexiblePlacementStrategy): ``[[0, 1], [2], 3]``, or an
    integer array (one row of ranks per process, or one rank per process).

    Ranks are sorted within a process and processes are ordered by their first rank (stably),
    as RLinf documents; a rank may appear in several processes (they share it). Lists of one
    length and arrays are checked by arrays (a re-plan pins hundreds of thousands of processes
    so); anything those checks doubt is read process by process, which words what is wrong.
    """
    where = f"component {name!r}: placement {shown(value)}"
    check("max_processes", len(value), where, "the number of processes listed")
    if not len(value):
        raise PlacementConfigError(f"{where} lists no processes (The hardware_ranks_list must not be empty)")
    table = _rank_table(value)
    if table is not None and table.shape[1] and table.min() >= 0 and table.max() <= MAX_RANK:
        rows = np.sort(table, axis=1)
        if not (rows[:, 1:] == rows[:, :-1]).any():  # no rank twice in a process
            rows = rows[np.argsort(rows[:, 0], kind="stable")]
            return ExplicitRanks(np.arange(rows.shape[0] + 1, dtype=np.int64) * rows.shape[1], rows.reshape(-1))
    processes = _listed_processes(value.tolist() if isinstance(value, np.ndarray) else value, where)
    sizes = np.fromiter(map(len, processes), dtype=np.int64, count=len(processes))
    ranks = np.fromiter(chain.from_iterable(processes), dtype=np.int64, count=int(sizes.sum()))
    return ExplicitRanks(np.concatenate(([0], np.cumsum(sizes))), ranks)


def _rank_table(value: Sequence[Any] | np.ndarray) -> np.ndarray | None:
    """``value`` as a processes x ranks integer table, when it is one: an integer array of one or
    two dimensions, or a list of ints or of int lists of one length (None for any other shape or
    type, bools included, and for ints past int64: the process-by-process reading words them)."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "iu" or value.ndim not in (1, 2) or (value.dtype.kind == "u" and value.size and value.max() > MAX_RANK):
            return None
        return (value if value.ndim == 2 else value.reshape(-1, 1)).astype(np.int64)
    kinds = set(map(type, value))
    try:
        if kinds == {int}:
            return np.array(value, dtype=np.int64).reshape(-1, 1)
        if kinds <= {list, tuple} and len(set(map(len, value))) == 1 and set(map(type, chain.from_iterable(value))) == {int}:
            return np.array(value, dtype=np.int64)
    except OverflowError:  # an int past int64
        return None
    return None


def _listed_processes(value: Sequence[Any], where: str) -> list[tuple[int, ...]]:
    """:func:`parse_explicit` process by process: each one's sorted ranks, ordered by first rank,
    or the error naming the first process that breaks a rule."""
    processes = []
    for position, item in enumerate(value):
        ranks = list(item) if isinstance(item, (list, tuple)) else [item]
        if not ranks or any(isinstance(r, bool) or not isinstance(r, int) or r < 0 for r in ranks):
            raise PlacementConfigError(f"{where}: process {position} needs a non-empty list of non-negative integer ranks, not {shown(item)}")
        if len(set(ranks)) != len(ranks):
            raise PlacementConfigError(f"{where}: process {position} lists a rank twice ({shown(item)}); its ranks must be unique")
        if max(ranks) > MAX_RANK:
            raise PlacementConfigError(f"{where}: rank {shown(max(ranks))} exceeds the largest supported rank {MAX_RANK}")
        processes.append(tuple(sorted(ranks)))
    return sorted(processes, key=lambda ranks: ranks[0])
