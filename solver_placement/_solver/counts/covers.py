"""GPU stacks over independent sets: what one node may hold when the graph of classes that may
not share a GPU is not chordal.

Every GPU of a node holds classes no two of which are apart: an independent set of the graph, its
*stack*. So a node holds ``demand[c]`` GPUs of each class ``c`` exactly when ``room`` GPUs, each
given a maximal independent set (a class may leave a GPU of its stack unused), cover every class
at least its demand. For a chordal graph the sums over its cliques already say that (it is a
perfect graph: its weighted clique number is its weighted chromatic number), which is what the
count model states; for a cycle of four or more with no chord they do not (five classes in a
cycle, one GPU each, fit no two GPUs but three), so the count model checks each whole-node
pattern of such a part here, and the layout gives the node's GPUs the stacks found. The sets are
those of one part of the graph, a few classes, so listing them and searching covers by memo stays
small, and none of it depends on the number of GPUs in the cluster.

The same holds when a set of classes that may share two by two may still not share all together
(a ``max_processes_per_hardware`` that three classes of one process per GPU pass): the stacks
are then the maximal independent sets that also *fit* (``stacks.py`` says which), a part of the
graph where no pair is apart is a hole too, and covers by those stacks state the rule exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

Pairs = Collection[tuple[int, int]]
#: Whether classes (by index) may all share one GPU, besides no two of them being apart.
Fits = Callable[[tuple[int, ...]], bool]


@dataclass(frozen=True)
class Hole:
    """A connected part of the graph that is not chordal: its ``classes`` (ascending), its
    maximal independent sets and its maximal cliques, both as positions in ``classes``."""

    classes: tuple[int, ...]
    sets: tuple[tuple[int, ...], ...]
    cliques: tuple[tuple[int, ...], ...]


def hole(classes: Sequence[int], pairs: Pairs, fits: Fits | None = None) -> Hole:
    """The :class:`Hole` of a connected part (``pairs`` may hold edges of other parts); with
    ``fits``, of any set of classes, its stacks the maximal independent sets that fit."""
    ordered = tuple(sorted(classes))
    position = {c: k for k, c in enumerate(ordered)}
    neighbours: list[set[int]] = [set() for _ in position]
    for a, b in pairs:
        if a in position and b in position:
            neighbours[position[a]].add(position[b])
            neighbours[position[b]].add(position[a])
    everyone = set(range(len(position)))
    apart = [frozenset(near) for near in neighbours]
    together = [frozenset(everyone - near - {k}) for k, near in enumerate(neighbours)]
    if fits is None:
        return Hole(ordered, _maximal(together), _maximal(apart))
    return Hole(ordered, _maximal_fitting(together, lambda stack: fits(tuple(ordered[k] for k in stack))), _maximal(apart))


def _maximal_fitting(together: Sequence[frozenset[int]], fits: Fits) -> tuple[tuple[int, ...], ...]:
    """Every maximal set of vertices, pairwise adjacent in ``together``, that ``fits`` (a rule
    that holds of every subset of a set it holds of), sorted: grown in index order, a set is
    kept when no vertex can join it."""
    found: list[tuple[int, ...]] = []

    def grow(stack: tuple[int, ...], start: int) -> None:
        grown = False
        for v in range(start, len(together)):
            if all(v in together[u] for u in stack) and fits((*stack, v)):
                grown = True
                grow((*stack, v), v + 1)
        if not grown and not any(v not in stack and all(v in together[u] for u in stack) and fits(tuple(sorted((*stack, v))))
                                 for v in range(len(together))):
            found.append(stack)

    grow((), 0)
    return tuple(sorted(found))


def _maximal(adjacent: Sequence[frozenset[int]]) -> tuple[tuple[int, ...], ...]:
    """Every maximal clique of the graph given by ``adjacent`` (Bron-Kerbosch with a pivot),
    sorted: of the complement graph, they are the maximal independent sets."""
    found: list[tuple[int, ...]] = []

    def grow(clique: frozenset[int], candidates: frozenset[int], excluded: frozenset[int]) -> None:
        if not candidates and not excluded:
            found.append(tuple(sorted(clique)))
            return
        pivot = min(candidates | excluded, key=lambda v: (-len(adjacent[v] & candidates), v))
        for v in sorted(candidates - adjacent[pivot]):
            grow(clique | {v}, candidates & adjacent[v], excluded & adjacent[v])
            candidates = candidates - {v}
            excluded = excluded | {v}

    grow(frozenset(), frozenset(range(len(adjacent))), frozenset())
    return tuple(sorted(found))


class Covers:
    """Stacks covering the demands of one hole's classes, remembered across the patterns of a
    call (many patterns share their remainders once a few GPUs are given)."""

    def __init__(self, found: Hole) -> None:
        self.hole = found
        self._known: dict[tuple[tuple[int, ...], int], tuple[int, ...] | None] = {}

    def cover(self, demand: tuple[int, ...], room: int) -> tuple[int, ...] | None:
        """Indices into the hole's sets, one per GPU given (at most ``room``), that hold every
        class at least ``demand`` times (positions as the hole's classes), or None when no
        ``room`` GPUs do. The first class still short must be on some GPU, so only the sets that
        hold it are tried for the next one: each cover is found once, in a fixed order."""
        key = (demand, room)
        if key not in self._known:
            self._known[key] = self._search(demand, room)
        return self._known[key]

    def _search(self, demand: tuple[int, ...], room: int) -> tuple[int, ...] | None:
        first = next((k for k, need in enumerate(demand) if need > 0), None)
        if first is None:
            return ()
        if any(sum(demand[k] for k in clique) > room for clique in self.hole.cliques):
            return None  # a clique's GPUs add up, in every graph
        for index, stack in enumerate(self.hole.sets):
            if first in stack:
                rest = self.cover(tuple(max(need - (k in stack), 0) for k, need in enumerate(demand)), room - 1)
                if rest is not None:
                    return (index, *rest)
        return None
