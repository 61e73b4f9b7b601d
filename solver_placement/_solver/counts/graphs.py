"""Graphs of classes that may not share a GPU: connected parts, elimination orders, cliques.

The count model states "these classes may not share a GPU" as one capacity row per clique of
such a graph, which is exact only for a chordal graph; a perfect elimination order (reversed)
then also lets the per-node construction give every class the GPUs its placed neighbours left.
A connected part that is not chordal (a cycle of four or more with no chord) is a *hole*: its
patterns are checked, and its GPUs given, by stacks over independent sets (``covers.py``).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from solver_placement._solver.counts.covers import Fits, Hole, hole

Pairs = Collection[tuple[int, int]]


@dataclass(frozen=True)
class ApartGraph:
    """Which classes may not share a GPU on some nodes (``pairs``, low index first), its
    cliques (maximal ones plus every class alone) and ``order``: placing classes in it, each
    one's neighbours placed before it form a clique, in every part but the ``holes`` (parts that
    are not chordal, or whose classes do not all fit together, whose cliques are their maximal
    ones)."""

    pairs: frozenset[tuple[int, int]]
    cliques: tuple[tuple[int, ...], ...]
    order: tuple[int, ...]
    holes: tuple[Hole, ...] = ()

    @property
    def chordal(self) -> bool:
        """Whether the cliques state the graph exactly (no hole)."""
        return not self.holes

    @property
    def linked(self) -> frozenset[tuple[int, int]]:
        """Pairs that compete for a node's GPUs: apart ones, and the classes of each hole (a
        hole whose classes fit only some together need not be connected by apart pairs)."""
        chained = {(a, b) for found in self.holes for a, b in zip(found.classes, found.classes[1:])}
        return self.pairs | chained


def apart_graph(size: int, pairs: Pairs, crowded: tuple[int, ...] = (), fits: Fits | None = None) -> ApartGraph:
    """The graph on ``size`` classes; a graph that is not chordal has holes. ``crowded`` classes
    (with ``fits``: some of them may share in pairs but not all together) make one hole whatever
    the pairs, its stacks the sets that fit, and the parts they touch join it."""
    elimination = _search_order(size, pairs)
    broken = _not_chordal(size, pairs, elimination)
    if not broken and not crowded:
        return ApartGraph(frozenset(pairs), _cliques(size, pairs, elimination), tuple(reversed(elimination)))
    if crowded:
        joined = sorted({c for part in connected_parts(size, pairs) if set(part) & set(crowded) for c in part})
        holes = (hole(joined, pairs, fits), *(hole(part, pairs) for part in connected_parts(size, pairs) if broken & set(part) and not set(part) & set(joined)))
    else:
        holes = tuple(hole(part, pairs) for part in connected_parts(size, pairs) if broken & set(part))
    in_holes = {c for found in holes for c in found.classes}
    kept = {clique for clique in _cliques(size, pairs, elimination) if not in_holes & set(clique)}
    kept |= {tuple(found.classes[k] for k in clique) for found in holes for clique in found.cliques}
    kept |= {(c,) for c in in_holes}
    return ApartGraph(frozenset(pairs), tuple(sorted(kept)), tuple(reversed(elimination)), holes)


def connected_parts(size: int, edges: Pairs) -> list[tuple[int, ...]]:
    """The vertices of each connected part of a graph, parts in order of their first vertex."""
    part_of = list(range(size))

    def find(v: int) -> int:
        while part_of[v] != v:
            v = part_of[v]
        return v

    for a, b in sorted(edges):
        part_of[find(a)] = find(b)
    grouped: dict[int, list[int]] = {}
    for v in range(size):
        grouped.setdefault(find(v), []).append(v)
    return [tuple(members) for members in sorted(grouped.values())]


def _neighbours(size: int, edges: Pairs) -> list[set[int]]:
    neighbours: list[set[int]] = [set() for _ in range(size)]
    for a, b in edges:
        neighbours[a].add(b)
        neighbours[b].add(a)
    return neighbours


def _search_order(size: int, edges: Pairs) -> list[int]:
    """Maximum cardinality search, reversed: a perfect elimination order of every chordal part
    (the search restricted to one part is a search of that part)."""
    neighbours = _neighbours(size, edges)
    weight = [0] * size
    visited: list[int] = []
    for _ in range(size):
        pick = max((v for v in range(size) if v not in visited), key=lambda v: (weight[v], -v))
        visited.append(pick)
        for other in neighbours[pick]:
            weight[other] += 1
    return visited[::-1]


def _not_chordal(size: int, edges: Pairs, order: list[int]) -> set[int]:
    """The vertices where ``order`` fails to be a perfect elimination order: none exactly when
    the graph is chordal, and otherwise only in the parts that are not."""
    neighbours = _neighbours(size, edges)
    position = {v: i for i, v in enumerate(order)}
    broken = set()
    for v in order:
        later = [u for u in neighbours[v] if position[u] > position[v]]
        if later:
            first = min(later, key=lambda u: position[u])
            if not set(later) - {first} <= neighbours[first]:
                broken.add(v)
    return broken


def _cliques(size: int, edges: Pairs, order: list[int]) -> tuple[tuple[int, ...], ...]:
    """Every vertex with its later neighbours in a perfect elimination order: these include every
    maximal clique of a chordal graph (and each vertex's own clique)."""
    neighbours = _neighbours(size, edges)
    position = {v: i for i, v in enumerate(order)}
    cliques = {tuple(sorted({v, *(u for u in neighbours[v] if position[u] > position[v])})) for v in range(size)}
    return tuple(sorted(cliques))
