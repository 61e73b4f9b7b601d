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
so); where it is the only class in runs, the walk visits its ids residue by residue
(:func:`visit_order`), so one of those runs is open at a time. Strides of collocated followers
of other shapes are left to the layout, as in ``Local`` (a lower bound there; the answer is
proven only when the layout meets it). A state giving a class more GPUs than all its groups
hold (``NodeWalk.most``) is dropped: no answer uses such a pattern.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from solver_placement._solver.counts.fixed_loads import FixedLoad
from solver_placement._solver.counts.typed import FitsBeside

#: Most states (a pattern so far, with how far into its run each class is) the walk keeps after
#: one GPU: past it the count model declines rather than spend seconds on one node shape.
MAX_WALK_STATES = 500_000
#: Most states one GPU's step may make before they are merged (the states before it times its
#: stacks, plus one): a few hundred MB of arrays and about a second of sorting. Checked before
#: the step, since a step past it is what takes the time (``heterogeneous:8:15``, 15 classes
#: in a chain with two joined, 8 GPUs: 41,939 states times 570 stacks, 24 million, 9 s
#: of one GPU's step and merge that the limit on merged states only caught afterwards).
MAX_STEP_STATES = 8_000_000


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
    most: tuple[int, ...] = ()  # per class, the most GPUs a pattern may give it: all its groups' (``()``: the node's)


def node_patterns(walk: NodeWalk, check: Callable[[str], None]) -> tuple[np.ndarray, np.ndarray]:
    """Every pattern the node may hold (groups per class, the empty one first, then ascending)
    and its least sum of local ids (weighed by members), as ``(patterns, costs)``.

    Where no class is kept off a GPU and none takes runs, a GPU left empty ends the walk: moving
    the stacks after it one GPU down holds the same pattern for less, so no least layout has a
    gap, and the states that take nothing are set aside as done. A state is one integer (the
    GPUs per class, then how far into each open run, in mixed radix), so a stack moves every
    state by a few array operations, not one per class."""
    codes = _Codes(walk)
    states, costs = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    done: list[tuple[np.ndarray, np.ndarray]] = []
    for visited, gpu in enumerate(visit_order(walk)):
        check("pricing the contiguity of node patterns")
        if codes.gapless:
            done.append((states, costs))
        states, costs, _ = _step(walk, codes, gpu, states, costs, traced=False)
        reachable = _reachable(walk, codes, states, walk.capacity - visited - 1)
        states, costs = codes.least(states[reachable], costs[reachable])
        if costs.size > MAX_WALK_STATES:
            raise TooManyWalkStates
    closed = states < codes.runs_place  # no run open: the digits above the GPU counts are 0
    states, costs = codes.least(np.concatenate([states[closed], *(d for d, _ in done)]), np.concatenate([costs[closed], *(c for _, c in done)]))
    counts = np.stack([codes.gpus(states, k) for k in range(len(walk.widths))], axis=1).reshape(states.size, len(walk.widths))
    widths = np.array(walk.widths, dtype=np.int64)
    whole = (counts % widths == 0).all(axis=1)
    groups = counts[whole] // widths
    order = np.lexsort(groups.T[::-1])
    return groups[order], costs[whole][order]


def least_layout(walk: NodeWalk, demand: tuple[int, ...], check: Callable[[str], None]) -> list[tuple[int, ...]]:
    """The stack of each local id (``()``: unused) of a least-cost layout of ``demand`` (GPUs per
    class), traced back through the walk that prices it: where ``contiguity.Local``'s search of
    one pattern passes its states (72-GPU nodes, a class in progressions), this walk keeps only
    states within the demand (``most``), so it lays out any pattern it priced, at the least cost
    it priced it (the walk's own rules, one open run per residue visited at a time).
    ``TooManyWalkStates`` past ``MAX_WALK_STATES``; ``ValueError`` when no layout holds the
    demand (the count model chose only patterns the walk listed: never)."""
    within = replace(walk, most=demand)
    codes = _Codes(within)
    codes.gapless = False  # every state kept to the last GPU: the trail then ends at one
    states, costs = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    trail: list[tuple[int, np.ndarray, np.ndarray]] = []  # per GPU visited: its id, each kept state's origin and stack
    for visited, gpu in enumerate(visit_order(within)):
        check("laying out a node's pattern by the contiguity walk")
        states, costs, came = _step(within, codes, gpu, states, costs)
        reachable = _reachable(within, codes, states, walk.capacity - visited - 1)
        kept = np.flatnonzero(reachable)[codes.least_positions(states[reachable], costs[reachable])]
        states, costs = states[kept], costs[kept]
        trail.append((gpu, came[0][kept], came[1][kept]))
        if costs.size > MAX_WALK_STATES:
            raise TooManyWalkStates
    target = sum(need * codes.place[k] for k, need in enumerate(demand))  # every run closed: its digits 0
    found = np.flatnonzero(states == target)
    if not found.size:
        raise ValueError(f"no layout of the node holds {demand}")
    at = int(found[0])
    layout: list[tuple[int, ...]] = [()] * walk.capacity
    for gpu, origin, taken in reversed(trail):
        layout[gpu] = _usable(within, gpu)[taken[at]] if taken[at] >= 0 else ()
        at = int(origin[at])
    return layout


def _reachable(walk: NodeWalk, codes: _Codes, states: np.ndarray, left: int) -> np.ndarray:
    """The states that may still end in a pattern: each class able to end in whole groups in
    the ``left`` GPUs still to visit, and none past its ``most``."""
    reachable = np.ones(states.size, dtype=bool)
    for k, width in enumerate(walk.widths):
        if width > 1:
            reachable &= (-codes.gpus(states, k)) % width <= left
        if walk.most and walk.most[k] < walk.capacity:  # more than all its groups: no answer uses the pattern
            reachable &= codes.gpus(states, k) <= walk.most[k]
    return reachable


def visit_order(walk: NodeWalk) -> list[int]:
    """The local ids in the order the walk visits them: ascending, or where one class takes
    progressions (``steps[k]`` > 1) and no other class takes runs, residue by residue (ids
    ``0, s, 2s, ...``, then ``1, 1 + s, ...``).

    Why the order may change: a layout's cost is a sum over GPUs of id x weight, whatever order
    its GPUs are chosen in, and every other rule is of one GPU at a time (its stacks, the GPUs
    kept off, a load), so any order lists the same patterns at the same least costs. Along a
    residue's chain a progression is consecutive GPUs, so one open run at a time remains (the
    others are 0, closed: a run begins only where it fits in its chain), and the run's position
    is the class's GPUs so far modulo its run. In id order every residue keeps a run open at
    once, ``run ** step`` states for each vector of GPU counts: 125 for five GPUs three apart,
    which on 72-GPU nodes beside two other classes passed ``MAX_WALK_STATES``."""
    steps = walk.steps or (1,) * len(walk.runs)
    strided = [k for k, step in enumerate(steps) if step > 1]
    if len(strided) != 1 or any(run > 1 for k, run in enumerate(walk.runs) if k != strided[0]):
        return list(range(walk.capacity))
    step = steps[strided[0]]
    return sorted(range(walk.capacity), key=lambda gpu: (gpu % step, gpu))


class _Codes:
    """The walk's states as integers: class ``k``'s GPUs at digit ``k`` (radix ``capacity + 1``),
    then per class one digit per residue of its step, how far into its open run (radix its
    run)."""

    def __init__(self, walk: NodeWalk) -> None:
        size = len(walk.weights)
        self.steps = walk.steps or (1,) * size
        self.first = [sum(self.steps[:k]) for k in range(size)]  # per class, its first open run (one per residue of its step)
        radix = [walk.capacity + 1] * size + [max(run, 1) for run, step in zip(walk.runs, self.steps) for _ in range(step)]
        self.place = [1]
        for value in radix[:-1]:
            self.place.append(self.place[-1] * value)
        self.radix = radix
        self.most_cost = walk.capacity * walk.capacity * max(1, sum(walk.weights))
        if float(np.prod(np.array(radix, dtype=np.float64))) * (self.most_cost + 1) >= 2.0**62:
            raise TooManyWalkStates
        self.runs_place = self.place[size] if len(radix) > size else self.place[-1] * radix[-1]
        self.gapless = not any(walk.kept_off) and all(run <= 1 for run in walk.runs) and not walk.loads

    def gpus(self, states: np.ndarray, k: int) -> np.ndarray:
        """Class ``k``'s GPUs in each state."""
        return (states // self.place[k]) % self.radix[k]

    def slot(self, k: int, gpu: int) -> int:
        """The digit of class ``k``'s open run that GPU ``gpu`` may continue (its residue's)."""
        return len(self.steps) + self.first[k] + gpu % self.steps[k]

    def least_positions(self, states: np.ndarray, costs: np.ndarray) -> np.ndarray:
        """Where :meth:`least`'s states are in ``states``: each distinct state's first of least
        cost (a stable sort: the same position on any machine)."""
        order = np.argsort(states * (self.most_cost + 1) + costs, kind="stable")
        ordered = states[order]
        return order[np.concatenate((np.ones(min(ordered.size, 1), dtype=bool), ordered[1:] != ordered[:-1]))]

    def least(self, states: np.ndarray, costs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each distinct state once, at its least cost, ascending: one sort of state and cost
        packed in one integer (sorting the values, not their order, then unpacking: half the
        time of an argsort and two gathers on the 600,000 states a 72-GPU node reaches)."""
        radix = self.most_cost + 1
        keys = np.sort(states * radix + costs)
        ordered = keys // radix
        first = np.concatenate((np.ones(min(ordered.size, 1), dtype=bool), ordered[1:] != ordered[:-1]))
        return ordered[first], keys[first] - ordered[first] * radix


def _step(
    walk: NodeWalk, codes: _Codes, gpu: int, states: np.ndarray, costs: np.ndarray, traced: bool = True
) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """The states after GPU ``gpu`` takes each stack it may (or nothing, unless the walk is
    gapless) from each state: a class in the middle of a run must be in the stack, a class
    beginning one needs its whole run left, and each class's run continues on the open run of
    its residue modulo its step. Also, when ``traced``, where each came from: the position of
    its state before, and the stack taken (its index in :func:`_usable`'s list; -1: none), which
    :func:`least_layout` follows back (:func:`node_patterns` needs neither: empty arrays).
    ``TooManyWalkStates`` before a step that could make more than ``MAX_STEP_STATES``."""
    usable = _usable(walk, gpu)
    if states.size * (len(usable) + 1) > MAX_STEP_STATES:
        raise TooManyWalkStates
    longer = [k for k, run in enumerate(walk.runs) if run > 1]
    now = {k: (states // codes.place[codes.slot(k, gpu)]) % walk.runs[k] for k in longer}  # how far into its open run
    must = np.zeros(states.size, dtype=np.int64)  # bits of the classes in the middle of a run
    for k in longer:
        must |= (now[k] > 0).astype(np.int64) << k
    idle = (must == 0) & (not codes.gapless)  # a gapless walk set them aside as done
    found_states, found_costs = [states[idle]], [costs[idle]]
    nowhere = np.zeros(0, dtype=np.int64)
    origins, taken = ([np.flatnonzero(idle)], [np.full(int(np.count_nonzero(idle)), -1, dtype=np.int64)]) if traced else ([nowhere], [nowhere])
    for j, stack in enumerate(usable):
        bits = sum(1 << k for k in stack)
        ending = sum(1 << k for k in stack if k in now and gpu + (walk.runs[k] - 1) * codes.steps[k] >= walk.capacity)  # may only continue here
        fits = ((must & ~bits) == 0) & ((ending & ~must) == 0)
        if not fits.any():
            continue
        moved = states[fits] + sum(codes.place[k] for k in stack)
        for k in stack:
            if k in now:
                place = codes.place[codes.slot(k, gpu)]
                moved += np.where(now[k][fits] == walk.runs[k] - 1, -(walk.runs[k] - 1) * place, place)
        found_states.append(moved)
        found_costs.append(costs[fits] + gpu * sum(walk.weights[k] for k in stack))
        if traced:
            origins.append(np.flatnonzero(fits))
            taken.append(np.full(origins[-1].size, j, dtype=np.int64))
    return np.concatenate(found_states), np.concatenate(found_costs), (np.concatenate(origins), np.concatenate(taken))


def _usable(walk: NodeWalk, gpu: int) -> list[tuple[int, ...]]:
    """The stacks GPU ``gpu`` may take: every class in them allowed on the node and not kept
    off this GPU, and the stack fitting beside the GPU's load (stacks are closed under removing
    a class, so the ones that fit are exactly what the GPU may hold)."""
    load = walk.loads[gpu] if walk.loads else None
    barred = sum(1 << k for k in range(len(walk.allowed)) if not walk.allowed[k] or gpu in walk.kept_off[k])  # classes this GPU may not hold
    return [
        stack for stack, bits in zip(walk.stacks, _stack_bits(walk.stacks))
        if not bits & barred and (load is None or walk.fits is None or walk.fits(load, stack))
    ]  # fmt: skip


@lru_cache(maxsize=256)
def _stack_bits(stacks: tuple[tuple[int, ...], ...]) -> tuple[int, ...]:
    """Each stack's classes as bits: :func:`_usable` tests a stack against the GPU's barred
    classes in one operation (the test class by class was a third of the walk's time on the
    ``other hardware`` benchmark's nodes: 8 classes, 15 items, runs and items kept off)."""
    return tuple(sum(1 << k for k in stack) for stack in stacks)


def pattern_rows(patterns: np.ndarray) -> list[tuple[int, ...]]:
    """The patterns as tuples (a :class:`patterns.Table`'s form)."""
    return [tuple(row) for row in patterns.tolist()]


def members_present(patterns: np.ndarray, members: Sequence[int]) -> np.ndarray:
    """Per pattern, the members of the classes it holds any group of: what it adds to the
    ``nodes`` term (``model.py`` counts the same)."""
    return (patterns > 0) @ np.array(members, dtype=np.int64)
