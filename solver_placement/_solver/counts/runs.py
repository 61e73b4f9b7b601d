"""GPU by GPU in id order: what a node holds when a class takes runs of consecutive GPUs or
progressions of GPUs a stride apart.

Where a class's processes are runs (a process of several consecutive GPUs, a stride's blocks) and
the class is kept off some GPUs of a node, its room is the runs between them, not their count;
where they are progressions (a stride whose blocks do not tile a group, ``strided.py``), what
fits depends on the ids on every node. Types of GPUs (``typed.py``) do not say it; a walk over
the node's GPUs in id order does: each GPU takes a stack it admits (``typed.admitted_stacks``),
and a state is, per class, the GPUs it still needs in whole runs and how far into its open run
it is, one open run per residue of its step (:class:`RunsCovers`). :func:`typed_patterns` lists
a node shape's whole-node patterns: all at once by the same walk in arrays where every group is
whole runs (``local_costs.node_patterns``, :func:`walked_patterns`), else vector by vector by
this walk (or by GPU types when no class takes runs). That search is bounded by ``RUNS_STEPS``:
past it the node is not decided, and the count path declines as for too many patterns. A node whose GPUs are alike where one class takes runs is
decided by two counts instead (``uniform_runs.py``), and laid out by them past the bound.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from solver_placement._solver.counts.fixed_loads import FixedLoad
from solver_placement._solver.counts.local_costs import NodeWalk, TooManyWalkStates, node_patterns
from solver_placement._solver.counts.typed import FitsBeside, TypedCovers, admitted_stacks, gpu_types, independent_blocks
from solver_placement._solver.counts.typed_grid import grid_patterns
from solver_placement._solver.counts.uniform_runs import uniform_runs

#: Most steps of the search for a node's layout in runs (:func:`runs_cover`): a node has a few
#: GPUs and a part a few stacks, so a layout is found in far fewer or not at all.
RUNS_STEPS = 20_000


def runs_cover(
    stacks: tuple[tuple[int, ...], ...],
    keep_off: Sequence[Sequence[int]],
    capacity: int,
    demand: tuple[int, ...],
    runs: Sequence[int],
    loads: Sequence[FixedLoad | None] = (),
    fits: FitsBeside | None = None,
    steps: Sequence[int] = (),
) -> list[list[int]] | None:
    """Per class, the local ids whose stacks hold it, when some class takes its GPUs in runs of
    consecutive ids (a stride): GPU by GPU in id order, each given a stack it admits (and that
    fits beside its load), so that every class gets ``demand[k]`` ids in whole runs of
    ``runs[k]``, ids ``steps[k]`` apart (1, the default: consecutive; more: progressions,
    ``strided.py``); None when there is none (``OverflowError`` past ``RUNS_STEPS`` steps: not
    decided)."""
    return RunsCovers(stacks, keep_off, capacity, runs, loads, fits, steps).cover(demand)


class RunsCovers:
    """:func:`runs_cover` of one node for many demands. The search's state at a GPU is, per
    class, the GPUs it still needs in whole runs and how far into a run it is (a class whose
    runs are ids ``step`` apart has one open run per residue of the id modulo ``step``: a
    progression ``h, h + step, ...`` continues on the GPU ``step`` further, ``strided.py``); a
    state that failed fails for every demand that reaches it, so failures are remembered across
    demands (the first cover found is the one the search without them finds)."""

    def __init__(
        self,
        stacks: tuple[tuple[int, ...], ...],
        keep_off: Sequence[Sequence[int]],
        capacity: int,
        runs: Sequence[int],
        loads: Sequence[FixedLoad | None] = (),
        fits: FitsBeside | None = None,
        steps: Sequence[int] = (),
    ) -> None:
        self.admitted = [
            admitted_stacks(stacks, tuple(k for k in range(len(runs)) if gpu not in keep_off[k]), loads[gpu] if loads else None, fits)
            for gpu in range(capacity)
        ]
        self.capacity = capacity
        self.runs = tuple(runs)
        self.steps = tuple(steps) or (1,) * len(self.runs)
        #: per class, its first slot in a state's open runs (one slot per residue of its step)
        self.first = tuple(sum(self.steps[:k]) for k in range(len(self.steps)))
        self.failed: set[tuple[int, tuple[int, ...], tuple[int, ...]]] = set()
        self.feasible: set[tuple[int, tuple[int, ...], tuple[int, ...]]] = set()
        #: pairs of classes no GPU's stack holds together, and per GPU the GPUs from there on that admit either
        self.apart = [(j, k) for j, k in itertools.combinations(range(len(self.runs)), 2) if not any(j in st and k in st for here in self.admitted for st in here)]
        self.ahead = [_suffix_counts([any(j in st or k in st for st in here) for here in self.admitted]) for j, k in self.apart]
        self.pairs = [(j, k, ahead) for (j, k), ahead in zip(self.apart, self.ahead)]
        self.unit = all(step == 1 for step in self.steps)  # one open run per class: a state's runs are the classes'
        #: alike GPUs and one class in runs: decided by two counts, no walk (``uniform_runs.py``)
        self.uniform = uniform_runs(stacks, keep_off, capacity, runs, loads, self.steps)

    def _advance(self, gpu: int, stack: tuple[int, ...], need: tuple[int, ...], into: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The state after GPU ``gpu`` holds ``stack``: each class in it one GPU further into the
        run of its residue (a run completed counts toward its need), each class not in it with
        that run broken; a class whose need is met keeps no open run."""
        if self.unit:
            return self._advance_unit(stack, need, into)
        left, opened = list(need), list(into)
        for k, step in enumerate(self.steps):
            slot = self.first[k] + gpu % step
            if k in stack:
                length = into[slot] + 1
                if length == self.runs[k]:
                    left[k], length = max(left[k] - length, 0), 0
                opened[slot] = length
            else:
                opened[slot] = 0
            if not left[k]:
                opened[self.first[k] : self.first[k] + step] = [0] * step
        return tuple(left), tuple(opened)

    def _advance_unit(self, stack: tuple[int, ...], need: tuple[int, ...], into: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """:meth:`_advance` where every step is 1 (one open run per class, slot ``k`` class
        ``k``'s): the classes not in ``stack`` broken, those in it one GPU further, by the
        stack's few classes rather than every class (the walk's most frequent step: listing the
        patterns of ``other hardware:331:11`` calls it 29,000 times)."""
        runs = self.runs
        left, opened = list(need), [0] * len(into)
        for k in stack:
            length = into[k] + 1
            if length == runs[k]:
                left[k], length = max(left[k] - length, 0), 0
            if left[k]:
                opened[k] = length
        return tuple(left), tuple(opened)

    def _hopeless(self, gpu: int, need: tuple[int, ...], into: tuple[int, ...]) -> bool:
        """Whether some class needs more GPUs than its open runs hold and the GPUs left offer, or
        two classes no stack holds together more than those left that admit either (each such
        GPU serves one of them): cheap bounds that end most searches for a demand a node does
        not hold long before its last GPU (32-GPU nodes of three classes: 7 s became 1 s)."""
        opened = into if self.unit else [sum(into[self.first[k] : self.first[k] + self.steps[k]]) for k in range(len(need))]
        left = self.capacity - gpu
        for n, o in zip(need, opened):
            if n > o + left:
                return True
        for j, k, ahead in self.pairs:
            if need[j] + need[k] > opened[j] + opened[k] + ahead[gpu]:
                return True
        return False

    def cover(self, demand: tuple[int, ...]) -> list[list[int]] | None:
        """Per class, the local ids whose stacks hold it (see :func:`runs_cover`): the walk's
        first, or past ``RUNS_STEPS`` on alike GPUs, the counts' (``uniform_runs.py``)."""
        try:
            return self._walked(demand)
        except OverflowError:
            if self.uniform is None:
                raise
            return self.uniform.cover(demand)

    def _walked(self, demand: tuple[int, ...]) -> list[list[int]] | None:
        """The walk's cover of ``demand`` (``OverflowError`` past ``RUNS_STEPS`` steps)."""
        held: list[list[int]] = [[] for _ in demand]
        steps = 0

        def search(gpu: int, need: tuple[int, ...], into: tuple[int, ...]) -> bool:
            nonlocal steps
            steps += 1
            if steps > RUNS_STEPS:
                raise OverflowError(f"more than RUNS_STEPS={RUNS_STEPS:,} steps to lay a node's GPUs out in runs")
            if not any(need):
                return True
            key = (gpu, need, into)
            if gpu == self.capacity or key in self.failed or self._hopeless(gpu, need, into):
                return False
            for stack in (*self.admitted[gpu], ()):
                for k in stack:
                    held[k].append(gpu)
                if search(gpu + 1, *self._advance(gpu, stack, need, into)):
                    return True
                for k in stack:
                    held[k].pop()
            self.failed.add(key)
            return False

        return held if search(0, demand, (0,) * sum(self.steps)) else None

    def holds(self, demand: tuple[int, ...]) -> bool:
        """Whether some cover of ``demand`` exists: by two counts on alike GPUs where one class
        takes runs (``uniform_runs.py``: what the search decides, without its steps), else the
        same search, each state's answer remembered (successes too, since no GPU ids are asked
        for)."""
        if self.uniform is not None:
            return self.uniform.holds(demand)
        return self._searched(demand)

    def _searched(self, demand: tuple[int, ...]) -> bool:
        """The search of :meth:`holds` (``OverflowError`` past ``RUNS_STEPS`` steps)."""
        steps = 0

        def search(gpu: int, need: tuple[int, ...], into: tuple[int, ...]) -> bool:
            nonlocal steps
            if not any(need):
                return True
            key = (gpu, need, into)
            if key in self.feasible:
                return True
            if gpu == self.capacity or key in self.failed or self._hopeless(gpu, need, into):
                return False
            steps += 1
            if steps > RUNS_STEPS:
                raise OverflowError(f"more than RUNS_STEPS={RUNS_STEPS:,} steps to lay a node's GPUs out in runs")
            for stack in (*self.admitted[gpu], ()):
                if search(gpu + 1, *self._advance(gpu, stack, need, into)):
                    self.feasible.add(key)
                    return True
            self.failed.add(key)
            return False

        return search(0, demand, (0,) * sum(self.steps))


def _suffix_counts(flags: Sequence[bool]) -> list[int]:
    """Per position ``i`` (to ``len(flags)`` inclusive), how many of ``flags[i:]`` are set: one
    pass from the end, where counting each suffix anew took a node's GPUs squared per pair of
    classes (72-GPU nodes of ``wide strides``, laid out node pattern by node pattern)."""
    counts = [0] * (len(flags) + 1)
    for i in range(len(flags) - 1, -1, -1):
        counts[i] = counts[i + 1] + bool(flags[i])
    return counts


def typed_patterns(
    widths: Sequence[int],
    mask: Sequence[bool],
    stacks: tuple[tuple[int, ...], ...],
    capacity: int,
    keep_off: tuple[tuple[int, ...], ...],
    runs: tuple[int, ...],
    limit: int,
    check: Callable[[str], None],
    loads: tuple[FixedLoad | None, ...] = (),
    fits: FitsBeside | None = None,
    steps: tuple[int, ...] = (),
) -> Iterator[tuple[int, ...]]:
    """Every vector of group counts (empty first, in lexicographic order) whose GPUs the node
    holds (``loads``: the rank strings' on each GPU, ``fits``: what fits beside one): by GPU
    type (:func:`typed_cover`), or GPU by GPU when a class takes runs (:func:`runs_cover`, ids
    ``steps[k]`` apart); each class bounded by the GPUs it may use. More groups never fit where
    fewer do not, so a vector that does not fit with the later classes still empty ends its
    class's values. Raises ``OverflowError`` past ``limit`` vectors (the caller's pattern limit)
    or when a search passes ``RUNS_STEPS`` (not decided exactly). Listed by the walk in arrays
    where it applies (:func:`walked_patterns`: the same vectors), else searched vector by
    vector (:func:`searched_patterns`)."""
    walked = walked_patterns(widths, mask, stacks, capacity, keep_off, runs, check, loads, fits, steps)
    if walked is None:
        yield from searched_patterns(widths, mask, stacks, capacity, keep_off, runs, limit, check, loads, fits, steps)
        return
    if walked.shape[0] > limit:
        raise OverflowError
    yield from (tuple(row) for row in walked.tolist())


def searched_patterns(
    widths: Sequence[int],
    mask: Sequence[bool],
    stacks: tuple[tuple[int, ...], ...],
    capacity: int,
    keep_off: tuple[tuple[int, ...], ...],
    runs: tuple[int, ...],
    limit: int,
    check: Callable[[str], None],
    loads: tuple[FixedLoad | None, ...] = (),
    fits: FitsBeside | None = None,
    steps: tuple[int, ...] = (),
) -> Iterator[tuple[int, ...]]:
    """:func:`typed_patterns` searched vector by vector: each vector's GPUs checked by GPU type
    or, where a class takes runs, GPU by GPU (:class:`RunsCovers`)."""
    blocks = []
    for classes, off, low, size in independent_blocks(keep_off, capacity):
        on_span = tuple(loads[low : low + size]) if loads else ()
        inside = tuple(k in classes for k in range(len(widths)))  # the demand's entries this block holds
        blocks.append((inside, TypedCovers(stacks, gpu_types(size, off, on_span)[0], fits), RunsCovers(stacks, off, size, runs, on_span, fits, steps)))
    strided = any(run > 1 for run in runs)
    most = [(capacity - len(off)) // w if allowed else 0 for off, w, allowed in zip(keep_off, widths, mask)]
    listed = None if strided else grid_patterns([(inside, covers) for inside, covers, _ in blocks], most, widths, check)
    if listed is not None:  # by GPU types over one array (``typed_grid.py``): the same patterns in the same order
        if listed.shape[0] > limit:
            raise OverflowError
        yield from map(tuple, listed.tolist())
        return
    counts = [0] * len(widths)
    produced = examined = 0

    def holds() -> bool:
        nonlocal examined
        examined += 1
        if examined % 256 == 0:
            check("enumerating node patterns")
        demand = tuple(g * w for g, w in zip(counts, widths))
        for inside, covers, in_runs in blocks:
            wanted = tuple(d if held else 0 for d, held in zip(demand, inside))
            if any(wanted) and not (in_runs.holds(wanted) if strided else covers.cover(wanted) is not None):
                return False
        return True

    def walk(k: int) -> Iterator[tuple[int, ...]]:
        nonlocal produced
        if k == len(widths):
            produced += 1
            if produced > limit:
                raise OverflowError
            yield tuple(counts)
            return
        for value in range(most[k] + 1):
            counts[k] = value
            if value and not holds():
                break
            yield from walk(k + 1)
        counts[k] = 0

    yield from walk(0)


def walked_patterns(
    widths: Sequence[int],
    mask: Sequence[bool],
    stacks: tuple[tuple[int, ...], ...],
    capacity: int,
    keep_off: tuple[tuple[int, ...], ...],
    runs: tuple[int, ...],
    check: Callable[[str], None],
    loads: tuple[FixedLoad | None, ...] = (),
    fits: FitsBeside | None = None,
    steps: tuple[int, ...] = (),
) -> np.ndarray | None:
    """:func:`typed_patterns`' vectors, all of them, by the walk over the node's GPUs in arrays
    (``local_costs.node_patterns``, its costs unweighed): the same vectors in the same order,
    in milliseconds where the search here checks one vector at a time (``other hardware`` on
    331 nodes: seven shapes, 11,050 vectors, 0.5 s). None where it does not apply: a class
    whose groups are not whole runs (``widths[k]`` not a multiple of ``runs[k]``), or a walk
    past its states (``TooManyWalkStates``).

    Why the same vectors: both walk the node's GPUs, each taking a stack (or nothing) that its
    GPU admits and that fits beside its load, and both close a class's GPUs in whole runs (one
    open per residue of its step). The search here takes maximal stacks and lets a class's
    run break or exceed its need; the walk takes any subset of them (stacks are closed under
    removing a class, beside a load too) and never breaks a run, so a layout either finds is,
    with the class dropped from the GPUs of a broken or surplus run, one the other finds; and
    where every group is whole runs, GPUs in whole runs are whole groups. Both list vectors in
    ascending lexicographic order, the empty one first."""
    if any(width % run for width, run in zip(widths, runs)):
        return None
    closed = sorted({sub for stack in stacks for size in range(1, len(stack) + 1) for sub in itertools.combinations(stack, size)})
    walk = NodeWalk(capacity, (0,) * len(widths), tuple(widths), tuple(mask), keep_off, runs, tuple(closed), loads, fits if loads else None, steps)
    try:
        patterns, _ = node_patterns(walk, check)
    except TooManyWalkStates:
        return None
    return patterns
