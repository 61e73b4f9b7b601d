"""Graphs of classes that may not share a GPU: connected parts, elimination orders, cliques.

The count model states "these classes may not share a GPU" as one capacity row per clique of
such a graph, which is exact only for a chordal graph; a perfect elimination order (reversed)
then also lets the per-node construction give every class the GPUs its placed neighbours left.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

Pairs = Collection[tuple[int, int]]


@dataclass(frozen=True)
class ApartGraph:
    """Which classes may not share a GPU on some nodes (``pairs``, low index first), its
    cliques (maximal ones plus every class alone) and ``order``: placing classes in it, each
    one's neighbours placed before it form a clique."""

    pairs: frozenset[tuple[int, int]]
    cliques: tuple[tuple[int, ...], ...]
    order: tuple[int, ...]


def apart_graph(size: int, pairs: Pairs) -> ApartGraph | None:
    """The graph on ``size`` classes, or None when it is not chordal."""
    elimination = _perfect_elimination_order(size, pairs)
    if elimination is None:
        return None
    return ApartGraph(frozenset(pairs), _cliques(size, pairs, elimination), tuple(reversed(elimination)))


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


def _perfect_elimination_order(size: int, edges: Pairs) -> list[int] | None:
    """A perfect elimination order of the graph (maximum cardinality search, reversed), or None
    when the graph is not chordal."""
    neighbours = _neighbours(size, edges)
    weight = [0] * size
    visited: list[int] = []
    for _ in range(size):
        pick = max((v for v in range(size) if v not in visited), key=lambda v: (weight[v], -v))
        visited.append(pick)
        for other in neighbours[pick]:
            weight[other] += 1
    order = visited[::-1]
    position = {v: i for i, v in enumerate(order)}
    for v in order:
        later = [u for u in neighbours[v] if position[u] > position[v]]
        if later:
            first = min(later, key=lambda u: position[u])
            if not set(later) - {first} <= neighbours[first]:
                return None
    return order


def _cliques(size: int, edges: Pairs, order: list[int]) -> tuple[tuple[int, ...], ...]:
    """Every vertex with its later neighbours in a perfect elimination order: these include every
    maximal clique of a chordal graph (and each vertex's own clique)."""
    neighbours = _neighbours(size, edges)
    position = {v: i for i, v in enumerate(order)}
    cliques = {tuple(sorted({v, *(u for u in neighbours[v] if position[u] > position[v])})) for v in range(size)}
    return tuple(sorted(cliques))
