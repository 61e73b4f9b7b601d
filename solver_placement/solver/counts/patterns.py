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

from solver_placement.solver.counts.problem import CountProblem, connected_parts

#: Most patterns the count model enumerates over all shapes (each is one integer variable): past
#: a few thousand, enumerating them in Python and solving take seconds, and the flat model or
#: first fit answer sooner.
MAX_PATTERNS = 4_000
#: Patterns enumerated between two budget checks.
PATTERNS_PER_CHECK = 256


class TooManyPatterns(Exception):
    """The enumeration passed ``MAX_PATTERNS``."""


@dataclass(frozen=True)
class Shape:
    """Nodes alike for one part of the classes: same GPU count, the same room for each class
    (its GPUs less those of the rank-string components it avoids), the same allowed classes and
    the same pipeline domain for each class that has one.

    ``patterns[p][k]`` is the number of groups of class ``part[k]`` pattern ``p`` puts on a node
    (pattern 0 is the empty one); ``nodes`` are the node ranks of this shape, ascending;
    ``domains[k]`` is the pipeline domain of class ``part[k]`` on these nodes (-1: none).
    """

    part: tuple[int, ...]
    capacity: int
    nodes: np.ndarray
    patterns: tuple[tuple[int, ...], ...]
    domains: tuple[int, ...]


def parts(problem: CountProblem, joint: bool) -> list[tuple[int, ...]]:
    """The classes in connected parts of the exclusivity graph (one part when ``joint``)."""
    if joint:
        return [tuple(range(len(problem.classes)))]
    return connected_parts(len(problem.classes), problem.exclusive)


def shapes(problem: CountProblem, gpus_per_node: np.ndarray, part: tuple[int, ...], check: Callable[[str], None]) -> list[Shape]:
    """The shapes of the nodes where some class of ``part`` may go, each with its patterns."""
    num_nodes = gpus_per_node.size
    allowed = problem.allowed[list(part)]
    useful = np.flatnonzero(allowed.any(axis=0))
    room = np.stack([gpus_per_node - problem.blocked_per_node(c, num_nodes) for c in part])
    domains = np.stack([_domains(problem.classes[c].domain, num_nodes) for c in part])
    keys: dict[tuple, list[int]] = {}
    for node in useful.tolist():
        key = (int(gpus_per_node[node]), tuple(allowed[:, node].tolist()), tuple(room[:, node].tolist()), tuple(domains[:, node].tolist()))
        keys.setdefault(key, []).append(node)
    cliques = [tuple(part.index(c) for c in clique) for clique in problem.cliques if set(clique) <= set(part)]
    widths = [problem.classes[c].width for c in part]
    found = []
    for (capacity, mask, rooms, domain), nodes in keys.items():
        check("enumerating node patterns")
        patterns = tuple(_fitting(widths, mask, cliques, rooms, check))
        found.append(Shape(part, capacity, np.array(nodes, dtype=np.int64), patterns, domain))
    if sum(len(shape.patterns) for shape in found) > MAX_PATTERNS:
        raise TooManyPatterns
    return found


def _domains(domain: np.ndarray | None, num_nodes: int) -> np.ndarray:
    """Per node, the class's pipeline domain, -1 for a class without one."""
    return np.full(num_nodes, -1, dtype=np.int64) if domain is None else domain


def _fitting(
    widths: list[int], mask: tuple[bool, ...], cliques: list[tuple[int, ...]], rooms: tuple[int, ...], check: Callable[[str], None]
) -> Iterator[tuple[int, ...]]:
    """Every vector of group counts (empty first) that fits each clique's room (the room of its
    members, one number: they avoid the same rank-string GPUs)."""
    size = len(widths)
    counts = [0] * size
    produced = 0

    def fits(upto: int) -> bool:
        return all(sum(counts[k] * widths[k] for k in clique if k <= upto) <= rooms[clique[0]] for clique in cliques)

    def walk(k: int) -> Iterator[tuple[int, ...]]:
        nonlocal produced
        if k == size:
            produced += 1
            if produced > MAX_PATTERNS:
                raise TooManyPatterns
            if produced % PATTERNS_PER_CHECK == 0:
                check("enumerating node patterns")
            yield tuple(counts)
            return
        most = max(rooms[k], 0) // widths[k] if mask[k] else 0
        for value in range(most + 1):
            counts[k] = value
            if fits(k):
                yield from walk(k + 1)
        counts[k] = 0

    yield from walk(0)
