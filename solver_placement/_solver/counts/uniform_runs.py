"""A node's check GPU by GPU without the walk, where its GPUs are alike and one class takes runs.

Why: ``runs.py`` decides whether a node holds a pattern by a walk over its GPUs in id order,
bounded by ``RUNS_STEPS``; on big nodes (72 GPUs, a stride whose progressions leave holes,
``strided.py``) the walk passes the bound and the count model declines, or spends seconds
listing patterns. Where the node's GPUs are alike for the classes there (none kept off some of
them, no rank string's load) and only one class ``k`` takes runs (of ``run`` ids ``step``
apart; the others take any GPU), positions matter only to ``k``, and the check is two counts:

- ``k``'s GPUs must be whole runs: a node of ``capacity`` ids holds at most, per residue of the
  ids modulo ``step``, ``len // run`` progressions of its chain of ``len`` ids
  (:func:`most_runs`; cut from the chain's start, ``strided.progressions_of``);
- the GPUs, each given a stack of classes that may share it, must hold every class its demand
  (``typed.TypedCovers`` with one type of ``capacity`` GPUs).

Both are necessary (a walk's layout is such a cover, its ``k`` ids such runs). They are enough:
give the cover's stacks holding ``k`` to the ids of the lowest runs that fit (every other class
takes any GPU, so the other stacks go anywhere), and drop ``k`` from any stack holding it beyond
them (stacks are closed under removing a class). Nothing grows with the node's GPUs but the
cover's per-type search, which counts GPUs rather than walking them.

The first count is a bound on one class's groups and the second is what the cliques' sums (or
the stacks' sums, in a hole) state on any node, so ``patterns.shapes`` lists such a node as it
lists every other, whole-node or clique by clique, with that class's groups capped
(:func:`runs_cap`): 72-GPU nodes of five GPUs three apart beside two exclusive classes have
too many whole-node patterns for the count model, but some 3,300 by clique.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from solver_placement._solver.counts.covers import hole
from solver_placement._solver.counts.fixed_loads import FixedLoad
from solver_placement._solver.counts.graphs import apart_graph
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.counts.strided import progressions_of
from solver_placement._solver.counts.typed import TypedCovers


def most_runs(capacity: int, run: int, step: int) -> int:
    """The most progressions of ``run`` ids ``step`` apart among local ids ``0 .. capacity - 1``:
    each residue's chain of ids holds ``len // run`` of them."""
    return sum(((capacity - residue + step - 1) // step) // run for residue in range(min(step, capacity)))


@dataclass(frozen=True)
class UniformRuns:
    """The two counts deciding a node of alike GPUs where class ``ranged`` alone takes runs
    (None: no class does), ``run`` ids ``step`` apart; ``admitted`` are the classes the node's
    GPUs may hold, ``cliques`` the cliques of those kept apart where they state the cover (see
    :func:`uniform_runs`), else None (the cover is searched)."""

    capacity: int
    ranged: int | None
    run: int
    step: int
    admitted: frozenset[int]
    covers: TypedCovers
    cliques: tuple[tuple[int, ...], ...] | None

    def _whole(self, demand: tuple[int, ...]) -> tuple[int, ...] | None:
        """``demand`` with the ranged class's GPUs rounded up to whole runs; None when the node
        does not hold that many runs."""
        k = self.ranged
        if k is None or not demand[k]:
            return demand
        runs = -(-demand[k] // self.run)
        if runs > most_runs(self.capacity, self.run, self.step):
            return None
        return (*demand[:k], runs * self.run, *demand[k + 1 :])

    def holds(self, demand: tuple[int, ...]) -> bool:
        """Whether some layout of the node holds ``demand`` (see the module)."""
        whole = self._whole(demand)
        if whole is None or any(need and c not in self.admitted for c, need in enumerate(whole)):
            return False
        if self.cliques is not None:  # a perfect graph: alike GPUs cover every class iff no clique needs more than the node
            return all(sum(whole[c] for c in clique) <= self.capacity for clique in self.cliques)
        return self.covers.cover(whole) is not None

    def cover(self, demand: tuple[int, ...]) -> list[list[int]] | None:
        """Per class, the local ids whose stacks hold it (the ranged class exactly its lowest
        runs); None when no layout holds ``demand``."""
        whole = self._whole(demand)
        given = None if whole is None else self.covers.cover(whole)
        if whole is None or given is None:
            return None
        stacks = list(given[0]) if given else []
        held: list[list[int]] = [[] for _ in demand]
        k = self.ranged
        if k is not None and whole[k]:
            chosen = progressions_of(np.arange(self.capacity, dtype=np.int64), self.run, self.step, whole[k])
            if chosen is None:  # most_runs said they fit: never
                return None
            ranged_ids = sorted(chosen.tolist())
            with_k = [stack for stack in stacks if k in stack]
            rest = [stack for stack in stacks if k not in stack] + [tuple(c for c in stack if c != k) for stack in with_k[len(ranged_ids) :]]
            taken = set(ranged_ids)
            placed = [*zip(ranged_ids, with_k), *zip([gpu for gpu in range(self.capacity) if gpu not in taken], rest)]
        else:
            placed = list(zip(range(self.capacity), stacks))
        for gpu, stack in sorted(placed):
            for c in stack:
                held[c].append(gpu)
        return held


def uniform_runs(
    stacks: tuple[tuple[int, ...], ...],
    keep_off: Sequence[Sequence[int]],
    capacity: int,
    runs: Sequence[int],
    loads: Sequence[FixedLoad | None],
    steps: Sequence[int],
) -> UniformRuns | None:
    """The node's :class:`UniformRuns` when its GPUs are alike (every class kept off none of them
    or all, no fixed load) and at most one class it admits takes runs; None otherwise (the walk
    decides it, ``runs.py``).

    Where the node's stacks are exactly the independent sets of the pairs they keep apart and
    that graph is chordal (so perfect), alike GPUs cover a demand iff no clique of the graph
    needs more GPUs than the node has (a perfect graph's weighted colouring needs its heaviest
    clique's weight): the cliques' sums the count model reads on every other node."""
    if any(load is not None for load in loads):
        return None
    if any(off and len(set(off)) < capacity for off in keep_off):
        return None
    admitted = tuple(k for k, off in enumerate(keep_off) if not off)
    ranged = [k for k in admitted if runs[k] > 1]
    if len(ranged) > 1:
        return None
    covers = TypedCovers(stacks, ((admitted, capacity, None),))
    cliques = _cliques_stating(covers.local[0] if covers.local else (), admitted, len(runs))
    k = ranged[0] if ranged else None
    run, step = (int(runs[k]), int(steps[k]) if steps else 1) if k is not None else (1, 1)
    return UniformRuns(capacity, k, run, step, frozenset(admitted), covers, cliques)


def _cliques_stating(stacks: tuple[tuple[int, ...], ...], admitted: tuple[int, ...], size: int) -> tuple[tuple[int, ...], ...] | None:
    """The cliques (maximal ones and every class alone) of the graph of ``admitted`` classes no
    stack holds together, when the stacks are exactly its maximal independent sets and it is
    chordal; None otherwise."""
    pairs = frozenset((a, b) for a, b in combinations(admitted, 2) if not any(a in stack and b in stack for stack in stacks))
    if not admitted:
        return ()
    found = hole(admitted, pairs)
    independent = {tuple(found.classes[k] for k in stack) for stack in found.sets}
    if independent != set(stacks):
        return None
    graph = apart_graph(size, pairs)
    if not graph.chordal:
        return None
    return tuple(clique for clique in graph.cliques if set(clique) <= set(admitted))


def widths_of(problem: CountProblem, part: tuple[int, ...]) -> tuple[int, ...]:
    """The GPUs of one group of each class of ``part``."""
    return tuple(problem.classes[c].width for c in part)


def runs_cap(runs: Sequence[int], steps: Sequence[int], widths: Sequence[int], allowed: Sequence[bool], capacity: int) -> tuple[int, int] | None:
    """Where a node no class is kept off part of, with no fixed load, is stated by its cliques'
    sums although a class takes progressions: when exactly one class there takes runs, its
    position and the most groups its chains' runs hold (:func:`most_runs`), the module's two
    counts with the first a bound on one class's groups; None otherwise (the node is checked
    GPU by GPU). ``groups x width`` GPUs take whole runs, at least ``groups x width / run`` of
    them, at most the node's: so ``groups x width <= runs x run``."""
    ranged = [k for k, there in enumerate(allowed) if there and runs[k] > 1]
    if len(ranged) != 1:
        return None
    k = ranged[0]
    return k, most_runs(capacity, runs[k], steps[k]) * runs[k] // widths[k]


__all__ = ["UniformRuns", "most_runs", "runs_cap", "uniform_runs", "widths_of"]
