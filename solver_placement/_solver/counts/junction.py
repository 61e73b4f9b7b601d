"""Node patterns by clique, for parts whose whole-node patterns are too many to list.

A chain of a dozen pairwise exclusive components has millions of whole-node patterns, but a
node's feasibility is a property of each clique of the graph of classes that may not share a GPU
(the GPUs of a clique add up to at most the node's room). So patterns are listed per maximal
clique, and the cliques are joined in a clique tree (a junction tree: a maximum-weight spanning
tree of the cliques by shared classes, which for a chordal graph has the running-intersection
property). The count model then counts nodes per (clique, local pattern) and requires adjacent
cliques to agree on the classes they share, value by value. Because of the running intersection,
any counts that agree along the tree are the marginals of whole-node patterns, which
:func:`glue` rebuilds: the model stays exact and its size follows the cliques, not the product
of every class's choices.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from solver_placement._errors import InternalError

#: A link of the clique tree: (parent table, child table, the columns both hold).
Link = tuple[int, int, tuple[int, ...]]


def maximal_cliques(cliques: Sequence[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """The cliques no other clique contains, in the given order."""
    sets = [frozenset(clique) for clique in cliques]
    return [clique for clique, mine in zip(cliques, sets) if not any(mine < other for other in sets)]


def clique_tree(cliques: Sequence[tuple[int, ...]]) -> tuple[Link, ...]:
    """Links of a maximum-weight spanning tree of the cliques (weight: classes shared), rooted at
    clique 0, parents before children. Cliques that share nothing are joined with an empty
    separator (their counts only have to add up to the same nodes, which every table does)."""
    parent_of = list(range(len(cliques)))

    def find(v: int) -> int:
        while parent_of[v] != v:
            v = parent_of[v]
        return v

    weighted = sorted(
        ((-len(set(cliques[i]) & set(cliques[j])), i, j) for i in range(len(cliques)) for j in range(i + 1, len(cliques))),
    )
    neighbours: dict[int, list[int]] = {i: [] for i in range(len(cliques))}
    for _, i, j in weighted:
        if find(i) != find(j):
            parent_of[find(i)] = find(j)
            neighbours[i].append(j)
            neighbours[j].append(i)
    links: list[Link] = []
    seen, queue = {0}, [0]
    while queue:
        current = queue.pop(0)
        for other in sorted(neighbours[current]):
            if other not in seen:
                seen.add(other)
                queue.append(other)
                links.append((current, other, tuple(sorted(set(cliques[current]) & set(cliques[other])))))
    return tuple(links)


def glue(
    columns: Sequence[tuple[int, ...]],
    patterns: Sequence[Sequence[tuple[int, ...]]],
    links: Sequence[Link],
    used: Mapping[tuple[int, int], int],
    width: int,
) -> list[tuple[tuple[int, ...], int]]:
    """Whole-node patterns (over ``width`` columns) with their node counts, from the counts of
    each table's local patterns (``used[table, pattern]``) that agree along ``links``.

    Table 0's patterns start the list; each child table is matched to the entries already built
    value by value on the columns it shares with its parent, splitting counts where two entries
    meet part way (deterministic: both sides in their listed order)."""
    built: list[tuple[dict[int, int], int]] = [
        (dict(zip(columns[0], patterns[0][p])), n) for (t, p), n in sorted(used.items()) if t == 0 and n
    ]
    for _, child, shared in links:
        mine = [(patterns[child][p], n) for (t, p), n in sorted(used.items()) if t == child and n]
        positions = [columns[child].index(c) for c in shared]
        waiting_by: dict[tuple[int, ...], list[list]] = {}
        for values, n in built:
            waiting_by.setdefault(tuple(values[c] for c in shared), []).append([values, n])
        coming_by: dict[tuple[int, ...], list[list]] = {}
        for local, n in mine:
            coming_by.setdefault(tuple(local[k] for k in positions), []).append([local, n])
        merged: list[tuple[dict[int, int], int]] = []
        for key in sorted(waiting_by.keys() | coming_by.keys()):
            waiting, coming = waiting_by.get(key, []), coming_by.get(key, [])
            while waiting and coming:
                take = min(waiting[0][1], coming[0][1])
                merged.append(({**waiting[0][0], **dict(zip(columns[child], coming[0][0]))}, take))
                for queue in (waiting, coming):
                    queue[0][1] -= take
                    if not queue[0][1]:
                        queue.pop(0)
            if waiting or coming:
                raise InternalError("the count model's clique counts disagree on the classes they share")
        built = merged
    return [(tuple(values.get(k, 0) for k in range(width)), n) for values, n in built]
