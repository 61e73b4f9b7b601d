"""Weighed ``contiguity`` in the count model: the sum of the ranks taken, stated by counts.

Why this is exact with counts: the count path's windows hold whole nodes (``rules/per_process.py``),
listed group after group with a node's GPUs in local order (``Cluster.resources``), so a
member's rank of GPU ``g`` on node ``n`` is ``base(n) + g``. A node's contiguity then splits in
two: ``sum over classes of GPUs x base`` (which nodes hold what) and the local ids its classes
take (what the node holds, once its pattern is chosen):

- *where*: within a run of nodes of one shape whose bases rise evenly (``base(n_i) = first + i x
  step`` per class; ``split`` cuts shapes into such runs, the same for every regular cluster),
  putting pattern ``p`` on the ``i``-th node costs ``lead(p) + i x rise(p)``. The best order puts
  the patterns of larger ``rise`` first (rearrangement), and its cost is a convex function of
  the counts: with the distinct rises ``v_1 > v_2 > ...`` and ``N_j`` the nodes whose pattern
  rises at least ``v_j``, it is ``sum_j (v_j - v_(j+1)) x N_j (N_j - 1) / 2`` plus a constant;
  ``add_term`` states it per level with chords (up to ``SECANTS`` nodes) or a product;
- *local*: the least sum of local ids is a search over the node's GPUs (priced for every pattern
  at once by ``local_costs.py``, laid out for the patterns an answer uses by ``Local``): the node's free
  GPUs in ascending order each take a *stack* (classes that may share a GPU), every class its
  demand; stacks are independent sets of the graph of classes kept apart (or the sets a hole's
  covers allow, ``covers.py``), a process of consecutive GPUs on consecutive GPUs, and one of
  GPUs a stride apart on such a progression (``strided.py``: every class whose root has a
  stride is priced in progressions here). It leaves out the strides of collocated followers of
  other shapes (the layout tiles them in blocks, the flat model may spread them), so it is a
  lower bound there; the layout realises it whenever its stacks keep every class in whole
  blocks, and the answer is proven only when the layout's own value meets the model's bound.

Nothing here grows with the GPU count: the rank bases are one pass over the windows, the model
one product per rise level and shape.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._cluster.cluster import Cluster
from solver_placement._solver.counts.fixed_loads import FixedLoad
from solver_placement._solver.counts.patterns import Shape
from solver_placement._solver.counts.problem import CountClass, CountProblem
from solver_placement._solver.counts.typed import FitsBeside
from solver_placement._specification.candidates import ComponentRequest

if TYPE_CHECKING:
    from solver_placement._solver.counts.kind_ranks import SplitWalk

#: Most (position, remaining demand) states the local search of one part remembers: past it the
#: count model declines rather than spend seconds on one node's arithmetic.
MAX_LOCAL_STATES = 200_000
#: Local states searched between two budget checks.
STATES_PER_CHECK = 4_096
#: Nodes of a run up to which the positions' sum is stated by chords alone (one per node);
#: longer runs take a product and this many chords.
SECANTS = 64

Uses = Mapping[tuple[int, int, int], cp_model.IntVar]


class TooManyLocalStates(Exception):
    """The local search passed ``MAX_LOCAL_STATES``."""


def rank_bases(problem: CountProblem, requests: Mapping[str, ComponentRequest], cluster: Cluster) -> np.ndarray | str:
    """Per class and node, the sum over its members of the rank local id 0 of the node would have
    in the member's window (rank minus local id, one number per node; a GPU listed twice, by
    overlapping groups, keeps its lowest rank, as the flat model would pick); why not, when some
    member's ranks on a node do not follow local ids.

    Such a window is one over node groups of several kinds (``kinds.py``): its ranks run group
    after group (all its GPUs, then all its robots, or the other way), so a node's items of two
    kinds have two bases, whose gap changes from node to node by the items of each kind before
    it. A node's cost then depends on how many of a class's items there are of each kind, which
    a pattern (items per class) does not say: ``weighed.py`` then splits the patterns by base
    (``kind_ranks.py``)."""
    bases = np.zeros((len(problem.classes), cluster.num_nodes), dtype=np.int64)
    for c, count_class in enumerate(problem.classes):
        for member in count_class.members:
            request = requests[member]
            rank_of = np.full(cluster.num_hardware, np.iinfo(np.int64).max, dtype=np.int64)
            if np.bincount(request.cand_hw, minlength=cluster.num_hardware).max(initial=0) <= 1:  # each listed once: written at once
                rank_of[request.cand_hw] = request.cand_rank
            else:
                np.minimum.at(rank_of, request.cand_hw, request.cand_rank)
            held = request.window_items
            nodes = cluster.hw_node[held]
            offset = rank_of[held] - cluster.hw_local[held]  # one number per node when ranks follow local ids
            low = np.full(cluster.num_nodes, np.iinfo(np.int64).max, dtype=np.int64)
            high = np.full(cluster.num_nodes, np.iinfo(np.int64).min, dtype=np.int64)
            np.minimum.at(low, nodes, offset)
            np.maximum.at(high, nodes, offset)
            if (low[nodes] != high[nodes]).any():
                return f"{member}: a window whose ranks on a node do not follow the node's GPU order"
            per_node = np.zeros(cluster.num_nodes, dtype=np.int64)
            per_node[nodes] = low[nodes]
            bases[c] += per_node
    return bases


@dataclass(frozen=True)
class Ranked:
    """One run of nodes of a shape whose bases rise evenly, with what its patterns cost.

    ``lead[k]`` and ``step[k]``: the rank cost of one group of class ``part[k]`` on the run's
    first node, and how much more on each next node; ``local[p]``: the least sum of local ids of
    pattern ``p`` (its members' GPUs weighed by the members holding them). The shape's table
    lists only patterns some stacks hold (``local_costs.py``).
    """

    shape: Shape
    lead: tuple[int, ...]
    step: tuple[int, ...]
    local: tuple[int, ...]
    rises: tuple[int, ...] = ()  # per pattern, its rise where items of several kinds split it (``kind_ranks.py``; ``()``: by ``step``)
    split: SplitWalk | None = None  # the walk whose columns ``splits`` count (``kind_ranks.py``)
    splits: tuple[tuple[int, ...], ...] = ()  # per pattern, the items of each column of ``split``
    chords: tuple[tuple[int, tuple[int, ...]], ...] = ()  # per rise level (its value), further chords of its positions' sum (``level_chords.py``)

    def rise(self, pattern: Sequence[int], row: int = -1) -> int:
        """How much more the pattern (row ``row`` of the run's table) costs on each next node of
        the run."""
        if self.rises:
            return self.rises[row]
        return sum(s * g for s, g in zip(self.step, pattern, strict=True))

    def first(self, pattern: Sequence[int]) -> int:
        """The pattern's rank cost on the run's first node."""
        return sum(a * g for a, g in zip(self.lead, pattern, strict=True))


def even_runs(nodes: np.ndarray, bases: np.ndarray) -> list[np.ndarray]:
    """``nodes`` (ascending, alike) cut into maximal runs whose bases rise by one step per node
    for every class (``bases``: the part's rows)."""
    if nodes.size <= 2:
        return [nodes] if nodes.size else []
    values = bases[:, nodes]
    steps = values[:, 1:] - values[:, :-1]  # column i: from node i to node i + 1
    # A run's second node always joins it; a later node i joins while its step is the one before
    # (so the run's first): the run breaks at the first i >= start + 2 whose step differs. By
    # arrays, one search per run (a pass node by node took 0.6 s on 65,536 nodes).
    breaks = np.flatnonzero((steps[:, 1:] != steps[:, :-1]).any(axis=0)) + 2
    starts = [0]
    while (at := int(np.searchsorted(breaks, starts[-1] + 2))) < breaks.size:
        starts.append(int(breaks[at]))
    return np.split(nodes, starts[1:])


def add_term(model: cp_model.CpModel, ranked: Sequence[Ranked], uses: Uses) -> cp_model.LinearExpr:
    """The contiguity of the counts ``uses[run, 0, pattern]``, with the patterns of each run
    ordered by falling rise (see the module's note): exact, one product per rise level."""
    terms: list[cp_model.LinearExprT] = []
    constant = 0
    for s, run in enumerate(ranked):  # arrays per run, summed once: the same proto as a product per pattern
        count = int(run.shape.nodes.size)
        patterns = np.array(run.shape.tables[0].patterns, dtype=np.int64).reshape(len(run.shape.tables[0].patterns), len(run.lead))
        counts = [uses[s, 0, p] for p in range(patterns.shape[0])]
        rise = np.array(run.rises, dtype=np.int64) if run.rises else patterns @ np.array(run.step, dtype=np.int64)
        cost = (patterns @ np.array(run.lead, dtype=np.int64) + np.array(run.local, dtype=np.int64)).tolist()
        paying = [p for p, c in enumerate(cost) if c]
        terms.append(cp_model.LinearExpr.weighted_sum([counts[p] for p in paying], [cost[p] for p in paying]))
        rises = sorted(set(rise.tolist()), reverse=True)
        further = dict(run.chords)
        for j, level in enumerate(rises[:-1]):
            at_least = model.new_int_var(0, count, "")
            model.add(at_least == cp_model.LinearExpr.sum([counts[p] for p in np.flatnonzero(rise >= level).tolist()]))
            terms.append((level - rises[j + 1]) * _pairs_of(model, at_least, count, further.get(level, ())))
        constant += rises[-1] * (count * (count - 1) // 2)
    return cp_model.LinearExpr.sum(terms) + constant


def _pairs_of(model: cp_model.CpModel, nodes: cp_model.IntVar, most: int, further: tuple[int, ...] = ()) -> cp_model.IntVar:
    """A variable at least ``nodes (nodes - 1) / 2`` (the sum of positions 0 .. nodes - 1), which
    the objective presses down to it: the chords of that convex function between consecutive
    integers, every one up to ``SECANTS`` nodes (exact at integers, and tight for the search),
    and beyond that a product with some chords to guide it, and the ``further`` ones (each
    valid at every integer: only where the search looks changes)."""
    pairs = model.new_int_var(0, most * (most - 1) // 2, "")
    points = range(most) if most <= SECANTS else sorted({round(i * (most - 1) / SECANTS) for i in range(SECANTS + 1)} | {k for k in further if 0 <= k < most})
    for k in points:
        model.add(pairs >= k * nodes - k * (k + 1) // 2)
    if most > SECANTS:
        square = model.new_int_var(0, most * most, "")
        model.add_multiplication_equality(square, [nodes, nodes])
        model.add(2 * pairs == square - nodes)
    return pairs


@dataclass
class Local:
    """The least sum of local ids a node's demand takes, and the stacks that take it.

    One search per part of the classes, GPU count and GPUs kept off, remembered across the
    patterns of a call: the least cost of giving ``demand`` (GPUs per class of the part) to the
    GPUs from local id ``gpu`` on, each GPU one stack (or none), where a class of ``runs[k]`` > 1
    takes its GPUs in whole runs of that many consecutive ones (``open[k]``: how far into its
    current run it is, which the next GPU must continue), or ``steps[k]`` apart (one open run per
    residue, continued ``steps[k]`` GPUs further: progressions, ``strided.py``).
    """

    weights: tuple[int, ...]  # per class of the part: the members holding each of its GPUs
    stacks: tuple[tuple[int, ...], ...]  # positions in the part that may share one GPU
    capacity: int
    kept_off: tuple[tuple[int, ...], ...]  # per class of the part, local ids it may not take
    runs: tuple[int, ...]  # per class of the part, the consecutive GPUs a process takes (1: any)
    check: Callable[[str], None]
    loads: tuple[FixedLoad | None, ...] = ()  # per local id, the rank strings' load (``fixed_loads.py``; ``()``: none)
    fits: FitsBeside | None = None  # whether classes of the part (positions) fit beside a load
    steps: tuple[int, ...] = ()  # per class, the ids apart of its runs' GPUs (``()``: all 1; above 1: progressions, ``strided.py``)
    known: dict[tuple[int, tuple[int, ...], tuple[int, ...]], float] = field(default_factory=dict)
    offered: dict[tuple[int, tuple[bool, ...], tuple[bool, ...]], list[tuple[int, ...]]] = field(default_factory=dict)

    def layout(self, demand: tuple[int, ...]) -> list[tuple[int, ...]]:
        """The stack of each GPU from local id 0 (empty: unused) of a least-cost layout of
        ``demand``; a tie keeps the previous GPU's stack, so alike stacks lie side by side."""
        chosen: list[tuple[int, ...]] = []
        gpu, left, opened = 0, demand, (0,) * sum(self._steps)
        while any(left):
            target = self._best(gpu, left, opened)
            previous = chosen[-1] if chosen else None
            options = sorted(self._startable(gpu, left, opened), key=lambda stack: stack != previous)
            stack = next(s for s in options if self._price(gpu, s) + self._best(gpu + 1, *self._take(gpu, s, left, opened)) == target)
            chosen.append(stack)
            left, opened = self._take(gpu, stack, left, opened)
            gpu += 1
        return chosen

    @cached_property
    def _steps(self) -> tuple[int, ...]:
        return self.steps or (1,) * len(self.runs)

    @cached_property
    def _slots(self) -> tuple[int, ...]:
        """Per class, its first open run in ``opened`` (one per residue of its step)."""
        return tuple(sum(self._steps[:k]) for k in range(len(self._steps)))

    @cached_property
    def _consecutive(self) -> bool:
        """Whether every class's runs are of consecutive GPUs (step 1): one open run per class."""
        return all(step == 1 for step in self._steps)

    def _now(self, gpu: int, opened: tuple[int, ...]) -> tuple[int, ...]:
        """Per class, how far into the open run GPU ``gpu`` may continue it is (the run of its
        residue modulo its step): ``opened`` itself with every step 1, the search's usual case."""
        if self._consecutive:
            return opened
        return tuple(opened[slot + gpu % step] for slot, step in zip(self._slots, self._steps, strict=True))

    def _startable(self, gpu: int, demand: tuple[int, ...], opened: tuple[int, ...]) -> list[tuple[int, ...]]:
        """:meth:`_options` less the stacks that begin a progression its class's demand cannot
        end beside the ones it has open (several open at once, one per residue, may otherwise
        use up the demand half way; consecutive runs never are)."""
        options = self._options(gpu, demand, opened)
        if self._consecutive:
            return options
        now, steps, owed = self._now(gpu, opened), self._steps, []
        for k, step in enumerate(steps):
            first = self._slots[k]
            owed.append(sum(self.runs[k] - into for into in opened[first : first + step] if into))
        return [stack for stack in options if all(now[k] or demand[k] - owed[k] >= self.runs[k] for k in stack)]

    def _options(self, gpu: int, demand: tuple[int, ...], opened: tuple[int, ...]) -> list[tuple[int, ...]]:
        """Stacks GPU ``gpu`` may take toward ``demand``: every class in the middle of a run
        among them (the empty stack last, when no run is open), and none that a class of any
        GPUs (run 1) still short could join: moving one of its later GPUs here costs less, so
        such a stack is never the only best. Remembered by which classes are still short."""
        short = tuple(need > 0 for need in demand)
        key = (gpu, short, tuple(into > 0 for into in self._now(gpu, opened)))
        if key not in self.offered:
            self.offered[key] = self._offer(gpu, demand, opened)
        return self.offered[key]

    def _offer(self, gpu: int, demand: tuple[int, ...], opened: tuple[int, ...]) -> list[tuple[int, ...]]:
        """The stacks of :meth:`_options`, in ``stacks`` order, by bit masks of their classes (a
        set per stack and GPU state cost 0.07 s of ``other hardware:331:11``'s layout)."""
        must = sum(1 << k for k, into in enumerate(self._now(gpu, opened)) if into)
        load = self.loads[gpu] if self.loads else None
        open_to = sum(1 << k for k, need in enumerate(demand) if need > 0 and gpu not in self.kept_off[k])  # classes this GPU may hold
        usable = [
            (stack, mask) for stack, mask in zip(self.stacks, self._masks)
            if mask & must == must and mask & ~open_to == 0 and (load is None or self.fits is None or self.fits(load, stack))
        ]  # fmt: skip
        if not must:
            usable.append(((), 0))
        joiners = [1 << k for k in range(len(demand)) if open_to >> k & 1 and self.runs[k] == 1]
        valid = {mask for _, mask in usable}
        return [stack for stack, mask in usable if not any(not mask & bit and mask | bit in valid for bit in joiners)]

    @cached_property
    def _masks(self) -> tuple[int, ...]:
        """Per stack, its classes as a bit mask (a stack lists each class once, in order: one
        mask per stack, as one tuple per stack)."""
        return tuple(sum(1 << k for k in stack) for stack in self.stacks)

    def _take(self, gpu: int, stack: tuple[int, ...], demand: tuple[int, ...], opened: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        left = list(demand)
        for k in stack:
            left[k] -= 1
        if not self.longer:
            return tuple(left), opened
        moved, steps = list(opened), self._steps
        for k in stack:
            slot = self._slots[k] + gpu % steps[k]
            moved[slot] = (opened[slot] + 1) % self.runs[k]
        return tuple(left), tuple(moved)

    @cached_property
    def longer(self) -> bool:
        """Whether some class takes its GPUs in runs longer than one."""
        return any(run > 1 for run in self.runs)

    def _price(self, gpu: int, stack: tuple[int, ...]) -> int:
        if stack not in self._weighs:
            self._weighs[stack] = sum(self.weights[k] for k in stack)
        return gpu * self._weighs[stack]

    @cached_property
    def _weighs(self) -> dict[tuple[int, ...], int]:
        """Per stack met, the members holding one GPU of it (each stack summed once)."""
        return {}

    def _best(self, gpu: int, demand: tuple[int, ...], opened: tuple[int, ...]) -> float:
        if not any(demand):
            return 0.0
        if max(demand) > self.capacity - gpu:
            return float("inf")
        key = (gpu, demand, opened)
        if key not in self.known:
            if len(self.known) >= MAX_LOCAL_STATES:
                raise TooManyLocalStates
            if len(self.known) % STATES_PER_CHECK == 0:
                self.check("pricing the contiguity of node patterns")
            self.known[key] = min(
                (self._price(gpu, stack) + self._best(gpu + 1, *self._take(gpu, stack, demand, opened)) for stack in self._startable(gpu, demand, opened)),
                default=float("inf"),
            )
        return self.known[key]


def local_run(count_class: CountClass, requests: Mapping[str, ComponentRequest]) -> tuple[int, int]:
    """The run and step a class's GPUs take in the local search: a class of progressions its own
    (stated exactly, ``strided.py``), any other the consecutive run of its members
    (:func:`consecutive_run`, step 1)."""
    if count_class.step > 1:
        return count_class.run, count_class.step
    return consecutive_run([(int(requests[m].amount[0]), int(requests[m].stride or 1)) for m in count_class.members]), 1


def consecutive_run(amounts_and_strides: Sequence[tuple[int, int]]) -> int:
    """The consecutive GPUs a class's processes are made of, as the flat model states it: a
    process of ``amount`` GPUs with stride 1 takes that many consecutive ranks; the longest such
    run when it is a multiple of every other (1 otherwise, and for strided followers, whose
    progressions the layout tiles in blocks but the flat model may spread: a lower bound)."""
    consecutive = [amount for amount, stride in amounts_and_strides if amount > 1 and stride == 1]
    longest = max(consecutive, default=1)
    return longest if all(longest % amount == 0 for amount in consecutive) else 1
