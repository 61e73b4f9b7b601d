"""Node patterns: what one node may hold, as a vector of group counts per class.

A pattern fits a node when every clique of pairwise exclusive classes fits its GPUs. Classes that
no exclusivity connects never compete for a node's GPUs, so patterns are formed per connected
part of the exclusivity graph, unless the ``balance`` term needs whole-node loads (then one part
holds every class). Patterns are enumerated per distinct (GPU count, allowed classes) shape and
bounded by ``MAX_PATTERNS``: past it the count model gives way to the flat model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from solver_placement.solver.counts.problem import CountProblem

#: Most patterns the count model enumerates over all shapes (each is one integer variable).
MAX_PATTERNS = 20_000


class TooManyPatterns(Exception):
    """The enumeration passed ``MAX_PATTERNS``."""


@dataclass(frozen=True)
class Shape:
    """Nodes alike for one part of the classes: same GPU count and the same allowed classes.

    ``patterns[p][k]`` is the number of groups of class ``part[k]`` pattern ``p`` puts on a node
    (pattern 0 is the empty one); ``nodes`` are the node ranks of this shape, ascending.
    """

    part: tuple[int, ...]
    capacity: int
    nodes: np.ndarray
    patterns: tuple[tuple[int, ...], ...]


def parts(problem: CountProblem, joint: bool) -> list[tuple[int, ...]]:
    """The classes in connected parts of the exclusivity graph (one part when ``joint``)."""
    size = len(problem.classes)
    if joint:
        return [tuple(range(size))]
    part_of = list(range(size))

    def find(v: int) -> int:
        while part_of[v] != v:
            v = part_of[v]
        return v

    for a, b in sorted(problem.exclusive):
        part_of[find(a)] = find(b)
    grouped: dict[int, list[int]] = {}
    for v in range(size):
        grouped.setdefault(find(v), []).append(v)
    return [tuple(members) for members in sorted(grouped.values())]


def shapes(problem: CountProblem, gpus_per_node: np.ndarray, part: tuple[int, ...], check: Callable[[str], None]) -> list[Shape]:
    """The shapes of the nodes where some class of ``part`` may go, each with its patterns."""
    allowed = problem.allowed[list(part)]
    useful = np.flatnonzero(allowed.any(axis=0))
    keys: dict[tuple[int, tuple[bool, ...]], list[int]] = {}
    for node, capacity, mask in zip(useful.tolist(), gpus_per_node[useful].tolist(), allowed[:, useful].T.tolist()):
        keys.setdefault((int(capacity), tuple(mask)), []).append(node)
    cliques = [tuple(part.index(c) for c in clique) for clique in problem.cliques if set(clique) <= set(part)]
    widths = [problem.classes[c].width for c in part]
    found = []
    for (capacity, mask), nodes in keys.items():
        check("enumerating node patterns")
        patterns = tuple(_fitting(widths, mask, cliques, capacity))
        found.append(Shape(part, capacity, np.array(nodes, dtype=np.int64), patterns))
    if sum(len(shape.patterns) for shape in found) > MAX_PATTERNS:
        raise TooManyPatterns
    return found


def _fitting(widths: list[int], mask: tuple[bool, ...], cliques: list[tuple[int, ...]], capacity: int) -> Iterator[tuple[int, ...]]:
    """Every vector of group counts (empty first) that fits ``capacity`` on every clique."""
    size = len(widths)
    counts = [0] * size
    produced = 0

    def fits(upto: int) -> bool:
        return all(sum(counts[k] * widths[k] for k in clique if k <= upto) <= capacity for clique in cliques)

    def walk(k: int) -> Iterator[tuple[int, ...]]:
        nonlocal produced
        if k == size:
            produced += 1
            if produced > MAX_PATTERNS:
                raise TooManyPatterns
            yield tuple(counts)
            return
        most = capacity // widths[k] if mask[k] else 0
        for value in range(most + 1):
            counts[k] = value
            if fits(k):
                yield from walk(k + 1)
        counts[k] = 0

    yield from walk(0)
