"""Domain fills: how many nodes of one content each domain of nested levels takes, in whole units.

``alike_domains.py`` moves the dropped spec's node contents so every domain holds whole units.
A content whose ruled member has ``c`` processes a node keeps a rule of units of ``size``
processes when each of that rule's domains takes a multiple of ``size / gcd(size, c)`` of its
nodes: the level's *quantum*. Levels nest (racks inside zones): a rack's total must be a
multiple of the rack rules' quantum, a zone's (the sum of its racks') of the zone rules', so
the fills are chosen bottom up: the totals a domain can take are the sums of its children's
that its own quantum divides (a set of at most its nodes plus one numbers). Domains alike (the
same rooms, all the way down) have the same sets, so they are found once: thousands of alike
racks cost a handful of set sums. Top domains then take, in numbering order, the most each can
(a greedy pass, not a search: where it leaves nodes over, the caller moves nothing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import numpy as np

from solver_placement._arrays import unique_rows


@dataclass
class Leaf:
    """A finest domain's nodes of one kind, in numbering order, the first ``used`` taken."""

    nodes: np.ndarray
    used: int = 0

    @property
    def room(self) -> int:
        return int(self.nodes.size) - self.used


Domain = Union[Leaf, list["Domain"]]


def domain_tree(nodes: np.ndarray, levels: list[np.ndarray]) -> list[Domain]:
    """``nodes`` (in numbering order) by domain, coarsest level first (``levels``: per node, its
    domain at each level), each level's domains in numbering order (of their first node); the
    finest as leaves.

    By one sort, not one grouping per domain: each node's domain at each level is ranked by its
    first node (a domain is its path from the coarsest level, so alike labels under two parents
    stay apart), the nodes ordered by those ranks (stable: numbering order within a leaf) and
    cut where they change, finest first (16,384 racks of 65,536 nodes: 4,098 groupings, 0.4 s)."""
    if not nodes.size:
        return []
    path = np.zeros(nodes.size, dtype=np.int64)
    ranks = []
    for level in levels:
        _, inverse = unique_rows(np.column_stack([path, level[nodes]]))
        first = np.full(int(inverse.max()) + 1, nodes.size, dtype=np.int64)
        np.minimum.at(first, inverse, np.arange(nodes.size, dtype=np.int64))
        rank = np.empty(first.size, dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(first.size, dtype=np.int64)
        path = rank[inverse]
        ranks.append(path)
    order = np.lexsort(ranks[::-1])
    ordered = [rank[order] for rank in ranks]
    starts = np.flatnonzero(np.r_[True, ordered[-1][1:] != ordered[-1][:-1]])
    tree: list[Domain] = [Leaf(part) for part in np.split(nodes[order], starts[1:])]
    for depth in range(len(levels) - 2, -1, -1):
        parents = np.flatnonzero(np.r_[True, ordered[depth][starts][1:] != ordered[depth][starts][:-1]])
        bounds = [*parents.tolist(), len(tree)]
        tree = [tree[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
        starts = starts[parents]
    return tree


def fill(tree: list[Domain], count: int, quanta: list[int]) -> list[np.ndarray] | None:
    """The nodes ``count`` nodes of one content take (their leaves' first free nodes), each
    domain at level ``d`` a multiple of ``quanta[d]`` of them, top domains filled in order,
    each with the most it can take; None where some are left over."""
    sets: dict[tuple[int, object], frozenset[int]] = {}
    taken: list[np.ndarray] = []
    for domain in tree:
        if not count:
            break
        total = max(t for t in _totals(domain, 0, quanta, sets) if t <= count)
        _take(domain, 0, total, quanta, sets, taken)
        count -= total
    return taken if not count else None


def _signature(domain: Domain) -> object:
    """What decides a domain's totals: its leaves' rooms, nested as the domain is."""
    return domain.room if isinstance(domain, Leaf) else tuple(_signature(child) for child in domain)


def _totals(domain: Domain, depth: int, quanta: list[int], sets: dict[tuple[int, object], frozenset[int]]) -> frozenset[int]:
    """The totals ``domain`` (at level ``depth``) can take in whole multiples at every level,
    cached per signature in ``sets``."""
    key = (depth, _signature(domain))
    if key not in sets:
        if isinstance(domain, Leaf):
            found = frozenset(range(0, domain.room + 1, quanta[depth]))
        else:
            sums = _sums([_totals(child, depth + 1, quanta, sets) for child in domain])[-1]
            found = frozenset(t for t in sums if t % quanta[depth] == 0)
        sets[key] = found
    return sets[key]


def _sums(totals: list[frozenset[int]]) -> list[frozenset[int]]:
    """The sums the first ``i`` children can take, for each ``i`` (0 first)."""
    reach = [frozenset({0})]
    for found in totals:
        reach.append(frozenset(a + b for a in reach[-1] for b in found))
    return reach


def _take(domain: Domain, depth: int, total: int, quanta: list[int], sets: dict[tuple[int, object], frozenset[int]], taken: list[np.ndarray]) -> None:
    """``total`` nodes of ``domain`` taken (appended to ``taken``), the earlier children
    filled first: each child from the last takes the least the earlier ones leave it."""
    if isinstance(domain, Leaf):
        taken.append(domain.nodes[domain.used:domain.used + total])
        domain.used += total
        return
    totals = [_totals(child, depth + 1, quanta, sets) for child in domain]
    reach = _sums(totals)
    shares = [0] * len(domain)
    for i in range(len(domain) - 1, -1, -1):
        shares[i] = min(t for t in totals[i] if total - t in reach[i])
        total -= shares[i]
    for child, share in zip(domain, shares):
        _take(child, depth + 1, share, quanta, sets, taken)


__all__ = ["Domain", "Leaf", "domain_tree", "fill"]
