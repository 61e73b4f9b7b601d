"""Array helpers the stages share, where numpy's general function is the slow path.

``np.unique`` on a flat int array became hash-based in numpy 2.4 and takes ~0.7 s for the
524,288 GPU ids of a 65,536-node cluster, 30 times a sort; the solver's count path and counting
bounds take distinct ids of such arrays several times per solve.
"""

from __future__ import annotations

import math

import numpy as np


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of a flat array, ascending (``np.unique(values)``, by one sort, or
    none when ``values`` are already in order, as ids and node ranks usually come). The sort is
    numpy's stable one, which merges runs already in order: ids come as a few such runs (one
    per component or kind), where it takes a tenth of the default sort's time."""
    if values.size < 2:
        return np.sort(values)
    ordered = values if bool((values[1:] >= values[:-1]).all()) else np.sort(values, kind="stable")
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]]


def sorted_by_key(keys: np.ndarray, values: np.ndarray) -> dict[int, tuple[int, ...]]:
    """Per key (in order of first appearance), its values ascending: ``{k: tuple(sorted(v))}`` of
    the pairs, by one sort instead of a list per key grown pair by pair (which took 0.2-0.5 s for
    the GPUs of 65,536 nodes)."""
    if not keys.size:
        return {}
    order = np.lexsort((values, keys))
    ordered = keys[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    bounds = [*starts.tolist(), int(keys.size)]
    listed = values[order].tolist()
    pieces = {key: tuple(listed[lo:hi]) for key, lo, hi in zip(ordered[starts].tolist(), bounds[:-1], bounds[1:], strict=True)}
    first_seen = np.minimum.reduceat(order, starts)  # each key's first position among the pairs
    return {key: pieces[key] for key in ordered[starts][np.argsort(first_seen, kind="stable")].tolist()}



def row_groups(rows: np.ndarray) -> list[np.ndarray]:
    """The positions of each distinct row of a 2-D array, ascending, the groups in order of their
    first row: ``np.unique(rows, axis=0, return_inverse=True)`` grouped, by one ``lexsort``
    (stable, so each group's positions come out ascending). Why: the count path groups the
    nodes of 65,536-node clusters by what they hold or are asked, and ``np.unique`` over rows
    (a void view, 0.05-0.1 s a call) with a dict entry per node took 0.3-0.7 s a solve."""
    if not rows.shape[0]:
        return []
    order, starts = _sorted_rows(rows)
    groups = np.split(order, starts[1:])
    return [groups[g] for g in np.argsort(order[starts], kind="stable").tolist()]


def distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Of each distinct row of a 2-D int array, ascending (lexicographically, as ``np.unique``
    orders them), the position of its first copy and how many copies it has:
    ``np.unique(rows, axis=0, return_index=True, return_counts=True)[1:]`` by one stable
    ``lexsort``, a third of its time on the 65,536 rows of a large cluster's nodes."""
    order, starts = _sorted_rows(rows)
    return order[starts], np.diff(np.r_[starts, rows.shape[0]]).astype(np.int64)


def distinct_pairs(units: np.ndarray, values: np.ndarray) -> int:
    """How many distinct ``(unit, value)`` pairs there are, ``units`` ascending (processes in
    rank order, a unit a run of them): where each unit's values ascend too, as a layout numbered
    domain by domain gives them, a pair starts wherever the unit or the value changes (one
    pass); else by one sort (``distinct_rows``: 0.03-0.05 s a call on 65,536 nodes)."""
    if not units.size:
        return 0
    same = units[1:] == units[:-1]
    rise = values[1:] - values[:-1]
    if not (rise[same] < 0).any():
        return 1 + int(np.count_nonzero(~same | (rise != 0)))
    return int(distinct_rows(np.stack([units, values], axis=1))[0].size)


def sorted_row_groups(rows: np.ndarray) -> list[np.ndarray]:
    """The positions of each distinct row (ascending), the groups in the order of their rows
    (ascending, as ``np.unique(rows, axis=0)`` lists them)."""
    order, starts = _sorted_rows(rows)
    return np.split(order, starts[1:]) if rows.shape[0] else []


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(rows, axis=0, return_inverse=True)`` of a 2-D int array: the distinct rows in
    the same lexicographic order and each row's position among them (``np.unique`` sorts the
    rows as records, ten times this on the 4,904 loaded GPUs of ``kinds memory:613:5``)."""
    order, starts = _sorted_rows(rows)
    flags = np.zeros(rows.shape[0], dtype=np.int64)
    flags[starts] = 1
    inverse = np.empty(rows.shape[0], dtype=np.int64)
    inverse[order] = np.cumsum(flags) - 1
    return rows[order[starts]], inverse


def _sorted_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions of the rows in ascending order (stable) and where each distinct row starts.

    Rows whose columns' spans multiply to less than 2**63 are sorted as one integer each (the
    columns in mixed radix, the first the most significant: the same order as a ``lexsort``),
    by one stable sort: a ``lexsort`` sorts once per column, 0.23 s for three groupings of the
    524,288 GPUs of a 65,536-node view, each carrying its own memory."""
    if not rows.shape[0]:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    low, high = rows.min(axis=0), rows.max(axis=0)
    varied = low != high  # a column alike on every row orders none of them
    rows, low = rows[:, varied].astype(np.int64, copy=False), low[varied].astype(np.int64)
    spans = [int(top) - int(bottom) + 1 for top, bottom in zip(high[varied].tolist(), low.tolist(), strict=True)]  # Python ints: no overflow
    if not rows.shape[1]:
        return np.arange(rows.shape[0]), np.zeros(1, dtype=np.int64)
    if math.prod(spans) < 2**63:
        places = np.ones(len(spans), dtype=np.int64)
        places[:-1] = np.cumprod(np.array(spans[:0:-1], dtype=np.int64))[::-1]
        keys = (rows - low) @ places
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        return order, np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    order = np.lexsort(rows.T[::-1])
    ordered = rows[order]
    return order, np.flatnonzero(np.r_[True, (ordered[1:] != ordered[:-1]).any(axis=1)])


def varying(columns: list[np.ndarray]) -> list[np.ndarray]:
    """The columns (one value per row each) that differ between rows: those a grouping of rows
    needs. A large cluster's nodes are mostly alike, and stacking every column of its 65,536
    nodes before dropping these took 0.07 s."""
    return [column for column in columns if column.size and column.min() != column.max()]
