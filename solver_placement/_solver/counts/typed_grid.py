"""A typed node's whole-node patterns listed at once, over an array of every demand it may hold.

Why: ``runs.typed_patterns`` walks a node shape's patterns one by one and asks
``typed.TypedCovers`` of each whether the node's GPU types hold it, a search per pattern. On
nodes of GPUs and robots whose GPUs carry memory (``item_memory.py``, the ``kinds memory``
benchmark) that is 2,400-3,600 searches per solve, 0.05-0.3 s, the largest part of the count
path before CP-SAT. The same set is one array: what ``n`` GPUs of a type hold is the set of
demands at most the sum of ``n`` stacks the type admits (every stack is closed under removing a
class, so "at most" is exact, as ``typed.typed_cover`` says), and what a node holds is that sum
type after type. Starting from the empty demand, each GPU adds one stack (or none) to every
demand reached so far: a shift of the array per stack, the union, and the closure under
lowering any count (a demand below one held is held). So the node's patterns are the cells
reached, read in C order, which is the walk's order (lexicographic, the empty one first).

Exactness: a cell is reached exactly when some choice of one admitted stack (or none) per GPU
covers its demand, which is :meth:`TypedCovers.cover`'s question (a cover of more covers less,
so nothing is lost at the grid's edge: :func:`_raised`). Independent blocks of GPUs (``typed.independent_blocks``) each judge the demand of their
own classes, the others read as 0, as the walk asks them. The grid has one cell per count of
each class (``MAX_GRID_CELLS``): past that the walk lists the patterns instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from solver_placement._solver.counts.typed import TypedCovers

#: Most cells (product over the part's classes of one more than the most groups a node holds of
#: each) of a node's grid: three classes on a 12-item node take 2,197, a bool each. Past it
#: the patterns are walked one by one (``runs.typed_patterns``): the grid grows as a product,
#: the patterns need not.
MAX_GRID_CELLS = 1 << 18


def grid_patterns(
    blocks: Sequence[tuple[tuple[bool, ...], TypedCovers]], most: Sequence[int], widths: Sequence[int], check: Callable[[str], None]
) -> np.ndarray | None:
    """Every vector of group counts (rows, lexicographic, the empty one first) with at most
    ``most[k]`` groups of ``widths[k]`` GPUs of class ``k`` that each block (the classes it
    holds, its covers) holds; None when the grid has more than ``MAX_GRID_CELLS`` cells."""
    counts = tuple(m + 1 for m in most)
    if math.prod(counts) > MAX_GRID_CELLS:
        return None
    held = np.ones(counts, dtype=bool)
    for inside, covers in blocks:
        check("enumerating node patterns")
        units = [m * w if mine else 0 for m, w, mine in zip(most, widths, inside)]
        reach = reached(covers, units)
        # a count of a class this block holds reads its GPUs; of any other class, 0 (as the walk asks)
        held &= reach[np.ix_(*(np.arange(m + 1) * w if mine else np.zeros(m + 1, dtype=np.int64) for m, w, mine in zip(most, widths, inside)))]
    return np.argwhere(held)


def reached(covers: TypedCovers, units: Sequence[int]) -> np.ndarray:
    """Per demand (GPUs of each class, at most ``units[k]``), whether the node's types hold it:
    type after type, each of its GPUs adding one of its stacks (or none) to every demand
    reached so far, closed under lowering a count; a type's later GPUs add nothing once one
    added nothing."""
    reach = np.zeros(tuple(u + 1 for u in units), dtype=bool)
    reach[(0,) * len(units)] = True
    for (_, gpus, _), stacks in zip(covers.types, covers.local):
        for _ in range(gpus):
            grown = reach.copy()
            for stack in stacks:
                grown |= _raised(reach, stack)
            grown = _closed(grown)
            if np.array_equal(grown, reach):
                break
            reach = grown
    return reach


def _raised(reach: np.ndarray, stack: tuple[int, ...]) -> np.ndarray:
    """``reach`` with one more GPU of each class of ``stack``: shifted up one along its axis.
    A demand pushed past the grid's edge is dropped, not lost: ``reach`` is closed, so the
    demand one below it in that class is reached too and lands on the edge."""
    raised = reach
    for axis in stack:
        if raised.shape[axis] == 1:
            continue  # the class is not asked of this block: its demand stays 0
        raised = np.roll(raised, 1, axis=axis)
        raised[(slice(None),) * axis + (0,)] = False
    return raised


def _closed(reach: np.ndarray) -> np.ndarray:
    """``reach`` closed under lowering any count: a demand below one held is held."""
    for axis in range(reach.ndim):
        reach = np.flip(np.logical_or.accumulate(np.flip(reach, axis), axis=axis), axis)
    return reach


__all__ = ["MAX_GRID_CELLS", "grid_patterns", "reached"]
