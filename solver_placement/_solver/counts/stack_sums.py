"""Whole-node patterns as sums of GPU stacks, listed with one table of booleans.

Why: a node holds a vector of GPUs per class exactly when its GPUs, each given one *stack* (a
set of classes that may share a GPU, or none), add up to it. Walking the vectors class by class
in Python and checking each by cliques and covers (``patterns._fitting``, ``covers.py``) costs
0.3-0.6 s for the 4,000 patterns of five components in a cycle of exclusions on 8 GPUs (and
the count path then finds them too many and lists them again); the sums themselves are a few
shifts of one boolean table. Each vector of GPU counts is one cell of the table, in mixed radix
``room + 1`` (the first class the most significant digit); a GPU adds a stack by shifting the
table by the stack's code and or-ing it in. Every digit stays at most ``room`` (one GPU adds at
most one to each class, ``room`` GPUs in all), so no shift carries into the next class, and
the cells held after ``room`` GPUs are exactly the vectors stacks hold (the empty stack keeps
the vectors of fewer GPUs). Ascending cells are the vectors in lexicographic order, the order
``patterns._fitting`` lists them in.

``patterns.shapes`` lists a part with a hole so, and ``ranked_runs.py`` a node whose local ids
nothing prices (the walk over its GPUs lists the same patterns in the same order). The table
grows as ``(room + 1) ** classes``: past ``MAX_CELLS`` cells or ``MAX_CELL_STEPS`` shifted
cells in all (tens of milliseconds) it is not built and the callers enumerate as before.
Nothing here depends on the number of nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from solver_placement._solver.counts.graphs import ApartGraph

#: Most cells of the table (vectors of GPU counts): a million booleans, 1 MB, checked before the
#: stacks are listed (up to six classes on 8 GPUs, twelve on 2).
MAX_CELLS = 1 << 20
#: Most cells shifted over the whole build (cells x stacks x GPUs): about 0.2 ms per million
#: on one core (six classes in a cycle on 8 GPUs, 72 million: 16 ms), so at most about 25 ms.
MAX_CELL_STEPS = 120_000_000
#: How much cheaper a cell of the table is to shift than a listed cell (a sort joins the
#: listed ones): the list is kept while its cells times the shifts, times this, stay below the
#: table's cells.
SPARSE_FACTOR = 8


def stack_sums(graph: ApartGraph, part: Sequence[int], widths: Sequence[int], allowed: Sequence[bool], room: int) -> np.ndarray | None:
    """Every pattern (groups per class of ``part``, in whole groups of ``widths``) some ``room``
    GPUs hold, each GPU one stack of ``graph`` (:func:`stacks_of`) or nothing, with classes not
    ``allowed`` at 0: the empty pattern first, then ascending lexicographically. None when the
    table would pass ``MAX_CELLS`` or ``MAX_CELL_STEPS``."""
    size = len(part)
    live = [k for k in range(size) if allowed[k] and 0 < widths[k] <= room]
    radix = max(room, 0) + 1
    cells = radix ** len(live)
    if cells > MAX_CELLS:
        return None
    usable = [tuple(live[i] for i in stack) for stack in graph_stacks(graph, tuple(part[k] for k in live))]
    if cells * max(len(usable), 1) * max(room, 1) > MAX_CELL_STEPS:
        return None
    place = {k: radix ** (len(live) - 1 - i) for i, k in enumerate(live)}
    codes = _sums(np.array(sorted({sum(place[k] for k in stack) for stack in usable}), dtype=np.int64), max(room, 0), cells)
    gpus = np.empty((codes.size, len(live)), dtype=np.int64)  # per cell, its digits: the GPUs of each live class
    rest = codes
    for i in range(len(live) - 1, -1, -1):  # least significant digit first, one divmod a class (a division per cell and class cost twice as much)
        rest, gpus[:, i] = np.divmod(rest, radix)
    whole = np.ones(codes.size, dtype=bool)
    for i, k in enumerate(live):
        if widths[k] > 1:
            whole &= gpus[:, i] % widths[k] == 0
    groups = np.zeros((int(whole.sum()), size), dtype=np.int64)
    groups[:, live] = gpus[whole] // np.array([widths[k] for k in live], dtype=np.int64)
    return groups


def _sums(shifts: np.ndarray, room: int, cells: int) -> np.ndarray:
    """The cells ``room`` GPUs reach from the empty one, each adding one of ``shifts`` or
    nothing, ascending. While the cells reached are few, as a list of cells each GPU step
    shifts (``limits:80:4``: six classes in a ring on 8 GPUs, 531,441 cells but a few thousand
    reached: 37 -> a few ms), then as the table, whose step costs every cell."""
    codes = np.zeros(1, dtype=np.int64)
    for step in range(room):
        if codes.size * max(shifts.size, 1) * SPARSE_FACTOR > cells:  # dense enough: the table from here
            return _table_sums(codes, shifts, room - step, cells)
        grown = np.union1d(codes, (codes[:, None] + shifts[None, :]).ravel())
        if grown.size == codes.size:
            break  # nothing new: more GPUs add nothing either
        codes = grown
    return codes


def _table_sums(codes: np.ndarray, shifts: np.ndarray, steps: int, cells: int) -> np.ndarray:
    """:func:`_sums` from ``codes`` on, ``steps`` more GPUs, as one boolean table of every cell."""
    held = np.zeros(cells, dtype=bool)
    held[codes] = True
    for _ in range(steps):
        grown = held.copy()
        for shift in shifts.tolist():
            grown[shift:] |= held[:-shift]
        if np.array_equal(grown, held):
            break
        held = grown
    return np.flatnonzero(held)


def stacks_of(graph: ApartGraph, part: tuple[int, ...], fits_together: Callable[[tuple[int, ...]], bool]) -> tuple[tuple[int, ...], ...]:
    """Every non-empty set of the part's classes (as positions) that may share one GPU: no two
    kept apart, and within a hole one of its covers' sets (``fits_together``, by class); in
    ascending order of their bits. A set is kept apart-free when the set without its lowest
    class is and that class is apart from none of the rest, so each set is one test on bits
    (once per node group of ``ranked_runs.py``: 42 groups of 8 classes on 331 nodes, 0.2 s when
    every pair of every set was looked up)."""
    size = len(part)
    apart = [sum(1 << j for j, b in enumerate(part) if j != i and (min(a, b), max(a, b)) in graph.pairs) for i, a in enumerate(part)]
    free = [True] * (1 << size)  # per set of positions (bits): no two of them kept apart
    found = []
    for mask in range(1, 1 << size):
        low = (mask & -mask).bit_length() - 1
        free[mask] = free[mask & (mask - 1)] and not apart[low] & mask
        if not free[mask]:
            continue
        stack = tuple(k for k in range(size) if mask >> k & 1)
        if fits_together(tuple(part[k] for k in stack)):
            found.append(stack)
    return tuple(found)


@lru_cache(maxsize=256)
def graph_stacks(graph: ApartGraph, part: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """:func:`stacks_of` the part under the graph's own rule (its holes' covers), once per graph
    and part: the walk that prices a node group, the layout of each node pattern an answer uses
    and the per-node model of each node all ask for the same stacks (``limits:80:4``: 13 calls
    of 2 ms each for one graph and part, a sixth of the solve's CPU)."""
    return stacks_of(graph, part, in_some_hole_set(graph))


def in_some_hole_set(graph: ApartGraph) -> Callable[[tuple[int, ...]], bool]:
    """Whether classes may share a GPU as a hole's covers allow: the classes of each hole they
    touch lie within one of its sets (classes outside holes only need to be apart from none)."""

    def fits(classes: tuple[int, ...]) -> bool:
        for found in graph.holes:
            inside = tuple(found.classes.index(c) for c in classes if c in found.classes)
            if inside and not any(set(inside) <= set(stack) for stack in found.sets):
                return False
        return True

    return fits
