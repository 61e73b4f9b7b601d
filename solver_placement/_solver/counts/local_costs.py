"""Every whole-node pattern of a node and its least sum of local ids, in one pass over its GPUs.

Why one pass: a weighed ``contiguity`` prices each whole-node pattern by the least sum of the
local ids its classes take (``contiguity.py``'s ``Local``, the node's GPUs in ascending order
each taking one *stack*). Asked pattern by pattern, that search repeats the same prefixes for
thousands of patterns (about 0.5 s of Python for the 2,400 patterns of five components in a
cycle of exclusions on 8 GPUs). Run forward instead, GPU by GPU over every stack at once, the
states after the last GPU are exactly the patterns some stacks hold, each with its least cost:
the enumeration and the pricing are the same walk, done here with arrays (milliseconds), and a
pattern no stacks hold is never listed (the cliques' sums alone would list it).

The walk is ``Local``'s, rule for rule: GPU ``g`` takes a stack (or nothing) at a price of ``g``
times the members holding each of its classes; a class may not take a GPU it is kept off (rank
strings, windows) nor one of a node it is not allowed on; a class whose processes are
``runs[k]`` consecutive GPUs takes GPUs in whole runs (a run once begun continues on the next
GPU, so a state remembers how far into its run each class is); a pattern counts each class's
GPUs in whole groups of its width. A class of progressions (``steps[k]`` > 1, a stride whose
blocks do not tile its groups, ``strided.py``) has one open run per residue of its step, each
continued ``steps[k]`` GPUs further (``weighed.py`` lays every class whose root has a stride out
so). Strides of collocated followers of other shapes are left to the layout, as in ``Local``
(a lower bound there; the answer is proven only when the layout meets it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from solver_placement._solver.counts.fixed_loads import FixedLoad
from solver_placement._solver.counts.typed import FitsBeside

#: Most states (a pattern so far, with how far into its run each class is) the walk keeps after
#: one GPU: past it the count model declines rather than spend seconds on one node shape.
MAX_WALK_STATES = 500_000


class TooManyWalkStates(Exception):
    """The walk over a node's GPUs passed ``MAX_WALK_STATES`` states."""


@dataclass(frozen=True)
class NodeWalk:
    """What a node of ``capacity`` GPUs is asked and allowed: per class of a part, the members
    holding each of its GPUs (``weights``), its group width, whether it may go there, the
    local ids it is kept off and its consecutive run; ``stacks`` are the sets of positions
    that may share one GPU (``stack_sums.stacks_of``)."""

    capacity: int
    weights: tuple[int, ...]
    widths: tuple[int, ...]
    allowed: tuple[bool, ...]
    kept_off: tuple[tuple[int, ...], ...]
    runs: tuple[int, ...]
    stacks: tuple[tuple[int, ...], ...]
    loads: tuple[FixedLoad | None, ...] = ()  # per GPU, the rank strings' load there (``fixed_loads.py``; ``()``: none)
    fits: FitsBeside | None = None  # whether a stack fits beside a load
    steps: tuple[int, ...] = ()  # per class, the ids apart of its runs' GPUs (``()``: all 1; above 1: ``strided.py``)


def node_patterns(walk: NodeWalk, check: Callable[[str], None]) -> tuple[np.ndarray, np.ndarray]:
    """Every pattern the node may hold (groups per class, the empty one first, then ascending)
    and its least sum of local ids (weighed by members), as ``(patterns, costs)``.

    Where no class is kept off a GPU and none takes runs, a GPU left empty ends the walk: moving
    the stacks after it one GPU down holds the same pattern for less, so no least layout has a
    gap, and the states that take nothing are set aside as done."""
    size = len(walk.weights)
    steps = np.array(walk.steps or (1,) * size, dtype=np.int64)
    first = np.concatenate(([0], np.cumsum(steps)[:-1])).astype(np.int64)  # per class, its first open run (one per residue of its step)
    radix = np.array([walk.capacity + 1] * size + [max(run, 1) for run, step in zip(walk.runs, steps.tolist()) for _ in range(step)], dtype=np.int64)
    place = np.concatenate(([1], np.cumprod(radix[:-1]))).astype(np.int64)
    most_cost = walk.capacity * walk.capacity * max(1, sum(walk.weights))
    if float(np.prod(radix.astype(np.float64))) * most_cost >= 2.0**62:
        raise TooManyWalkStates
    gapless = not any(walk.kept_off) and all(run <= 1 for run in walk.runs) and not walk.loads
    runs = np.array(walk.runs, dtype=np.int64)
    widths = np.array(walk.widths, dtype=np.int64)
    counts, opened, costs = np.zeros((1, size), dtype=np.int64), np.zeros((1, int(steps.sum())), dtype=np.int64), np.zeros(1, dtype=np.int64)
    done: list[tuple[np.ndarray, np.ndarray]] = []
    for gpu in range(walk.capacity):
        check("pricing the contiguity of node patterns")
        if gapless:
            done.append((counts, costs))
        counts, opened, costs = _step(walk, gpu, counts, opened, costs, runs, first + gpu % steps, steps, with_empty=not gapless)
        left = walk.capacity - gpu - 1  # a class must still be able to end in whole groups
        reachable = ((-counts) % widths <= left).all(axis=1)
        counts, opened, costs = _least(counts[reachable], opened[reachable], costs[reachable], place, most_cost)
        if costs.size > MAX_WALK_STATES:
            raise TooManyWalkStates
    finished = [(counts[(opened == 0).all(axis=1)], costs[(opened == 0).all(axis=1)]), *done]
    counts = np.concatenate([c for c, _ in finished])
    costs = np.concatenate([c for _, c in finished])
    counts, _, costs = _least(counts, np.zeros((counts.shape[0], int(steps.sum())), dtype=np.int64), costs, place, most_cost)
    whole = (counts % widths == 0).all(axis=1)
    groups = counts[whole] // widths
    order = np.lexsort(groups.T[::-1])
    return groups[order], costs[whole][order]


def _least(counts: np.ndarray, opened: np.ndarray, costs: np.ndarray, place: np.ndarray, most_cost: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each distinct state once, at its least cost (one sort of state code and cost together)."""
    codes = np.concatenate((counts, opened), axis=1) @ place
    order = np.argsort(codes * (most_cost + 1) + costs)
    first = np.concatenate((np.ones(min(codes.size, 1), dtype=bool), codes[order][1:] != codes[order][:-1]))
    keep = order[first]
    return counts[keep], opened[keep], costs[keep]


def _step(
    walk: NodeWalk,
    gpu: int,
    counts: np.ndarray,
    opened: np.ndarray,
    costs: np.ndarray,
    runs: np.ndarray,
    slots: np.ndarray,
    steps: np.ndarray,
    with_empty: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The states after GPU ``gpu`` takes each stack it may (or, ``with_empty``, nothing) from
    each state; ``slots[k]`` is the open run of class ``k`` this GPU may continue (the one of its
    residue modulo ``steps[k]``)."""
    size = counts.shape[1]
    now = opened[:, slots]
    must = now > 0  # classes in the middle of a run: the stack must hold them
    idle = ~must.any(axis=1) if with_empty else np.zeros(costs.size, dtype=bool)
    found_counts, found_opened, found_costs = [counts[idle]], [opened[idle]], [costs[idle]]
    for stack in _usable(walk, gpu):
        member = np.zeros(size, dtype=bool)
        member[list(stack)] = True
        fits = ~(must & ~member).any(axis=1)
        starting = member & (now == 0)  # a class beginning a run needs its whole run left
        fits &= ~(starting & (gpu + (runs - 1) * steps >= walk.capacity)).any(axis=1)
        if not fits.any():
            continue
        found_counts.append(counts[fits] + member)
        moved = opened[fits].copy()
        moved[:, slots] = np.where(member, (now[fits] + 1) % runs, now[fits])
        found_opened.append(moved)
        found_costs.append(costs[fits] + gpu * sum(walk.weights[k] for k in stack))
    return np.concatenate(found_counts), np.concatenate(found_opened), np.concatenate(found_costs)


def _usable(walk: NodeWalk, gpu: int) -> list[tuple[int, ...]]:
    """The stacks GPU ``gpu`` may take: every class in them allowed on the node and not kept
    off this GPU, and the stack fitting beside the GPU's load (stacks are closed under removing
    a class, so the ones that fit are exactly what the GPU may hold)."""
    load = walk.loads[gpu] if walk.loads else None
    return [
        stack for stack in walk.stacks
        if all(walk.allowed[k] and gpu not in walk.kept_off[k] for k in stack) and (load is None or walk.fits is None or walk.fits(load, stack))
    ]  # fmt: skip


def pattern_rows(patterns: np.ndarray) -> list[tuple[int, ...]]:
    """The patterns as tuples (a :class:`patterns.Table`'s form)."""
    return [tuple(row) for row in patterns.tolist()]


def members_present(patterns: np.ndarray, members: Sequence[int]) -> np.ndarray:
    """Per pattern, the members of the classes it holds any group of: what it adds to the
    ``nodes`` term (``model.py`` counts the same)."""
    return (patterns > 0) @ np.array(members, dtype=np.int64)
