"""Node patterns: what one node may hold, as a vector of group counts per class.

A pattern fits a node when every clique of classes that may not share a GPU there (exclusive, or
memory that does not fit together) fits its GPUs, and, in a part of that graph that is not
chordal, when GPU stacks over its independent sets hold it (``covers.py``; listed as the sums
of those stacks, ``stack_sums.py``). Classes that no such pair connects never
compete for a node's GPUs, so patterns are formed per connected part of that graph, unless the
``balance`` term needs whole-node loads (then one part holds every class). Patterns are
enumerated per shape of node; past ``MAX_PATTERNS`` whole-node patterns the count path lists
them per maximal clique instead (``junction.py``), and past that many clique patterns it gives
way to the flat model."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from solver_placement._arrays import row_groups
from solver_placement._solver.counts.covers import Covers
from solver_placement._solver.counts.graphs import ApartGraph, connected_parts
from solver_placement._solver.counts.junction import Link, clique_tree, glue, maximal_cliques
from solver_placement._solver.counts.problem import CountClass, CountProblem
from solver_placement._solver.counts.runs import typed_patterns
from solver_placement._solver.counts.stack_sums import stack_sums
from solver_placement._solver.counts.typed import FitsBeside, needs_types, part_stacks
from solver_placement._solver.counts.uniform_runs import runs_cap, widths_of

#: Most patterns the count model enumerates over all shapes (each is one integer variable): past
#: a few thousand, enumerating them in Python and solving take seconds, and the flat model or
#: first fit answer sooner.
MAX_PATTERNS = 4_000
#: Patterns enumerated between two budget checks.
PATTERNS_PER_CHECK = 256


class TooManyPatterns(Exception):
    """The enumeration passed ``MAX_PATTERNS``."""


class NotChordal(Exception):
    """Patterns by clique were asked of a part that is not chordal: its cliques do not state it
    (whole-node patterns, checked by stacks, do)."""


@dataclass(frozen=True)
class Table:
    """What one node may hold of some classes of a part: ``columns`` are positions in the part,
    ``patterns[p][k]`` the groups of class ``part[columns[k]]`` pattern ``p`` puts on the node
    (pattern 0 is the empty one)."""

    columns: tuple[int, ...]
    patterns: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Shape:
    """Nodes alike for one part of the classes: same GPU count, the same room for each class
    (its GPUs less those of the rank-string components it avoids), the same allowed classes, the
    same domains for each class that has required ones, the same graph of classes that may not
    share a GPU, and the same load of components placed first (``preset.py``).

    ``tables`` list what a node may hold: one table of whole-node patterns over the part, or one
    per maximal clique joined by ``links`` (``junction.py``) when whole-node patterns are too
    many. ``nodes`` are the node ranks of this shape, ascending; ``domains[k]`` are the domains
    of class ``part[k]`` on these nodes, one per level of its required domains
    (``domain_levels.py``).
    """

    part: tuple[int, ...]
    capacity: int
    nodes: np.ndarray
    tables: tuple[Table, ...]
    domains: tuple[tuple[int, ...], ...]
    links: tuple[Link, ...] = ()
    load: int = 0  # GPUs of components placed first on each of these nodes (``preset.py``), for ``balance``

    @property
    def size(self) -> int:
        """Local patterns over all tables: the count model's integer variables for this shape."""
        return sum(len(table.patterns) for table in self.tables)

    def home(self, k: int) -> int:
        """The table that counts class ``part[k]``'s groups (the first that holds it)."""
        return next(t for t, table in enumerate(self.tables) if k in table.columns)

    def whole_patterns(self, used: Mapping[tuple[int, int], int]) -> list[tuple[tuple[int, ...], int]]:
        """Whole-node patterns and their node counts from ``used[table, pattern]``."""
        columns = [table.columns for table in self.tables]
        return glue(columns, [table.patterns for table in self.tables], self.links, used, len(self.part))


def parts(problem: CountProblem, joint: bool) -> list[tuple[int, ...]]:
    """The classes in connected parts of the graph of classes that may not share a GPU somewhere
    (one part when ``joint``)."""
    if joint:
        return [tuple(range(len(problem.classes)))]
    return connected_parts(len(problem.classes), problem.apart_somewhere)


def shapes(
    problem: CountProblem,
    gpus_per_node: np.ndarray,
    part: tuple[int, ...],
    check: Callable[[str], None],
    by_clique: bool = False,
    whole: bool = True,
) -> list[Shape]:
    """The shapes of the nodes where some class of ``part`` may go, each with what a node may
    hold: whole-node patterns, or with ``by_clique`` patterns per maximal clique. Without
    ``whole`` (a caller that needs no whole-node loads), a part joined only beside rank strings'
    loads (``fixed_loads.py``) is listed piece by piece on the nodes without such loads, where
    its pieces do not compete: the sum of their patterns, not the product."""
    num_nodes = gpus_per_node.size
    allowed = problem.allowed[list(part)]
    useful = np.flatnonzero(allowed.any(axis=0))
    room = np.stack([gpus_per_node - problem.blocked_per_node(c, num_nodes) for c in part])
    room[:] = np.where(allowed, room, -1).max(axis=0)  # one room per node where the classes there are kept off the same GPUs
    domains = [class_domains(problem.classes[c], num_nodes) for c in part]
    keep_off = [problem.blocked_locals(c) for c in part]
    beside = problem.beside
    loaded = beside.loaded_nodes if beside is not None else frozenset()
    touched = {node for off in keep_off for node in off} | loaded  # the only nodes that may need checks by GPU
    runs = tuple(problem.classes[c].run for c in part)
    steps = tuple(problem.classes[c].step for c in part)
    progressions = any(step > 1 for step in steps)
    if progressions:  # (``strided.py``): every node is checked GPU by GPU, but where cliques' sums and a cap state it (``uniform_runs.py``)
        group_widths = widths_of(problem, part)  # the cap read once per distinct (classes allowed, GPUs): a node at a time took 1.3 s of 65,536 nodes
        for group in row_groups(np.column_stack([allowed[:, useful].T, gpus_per_node[useful]])):
            first = int(useful[group[0]])
            if runs_cap(runs, steps, group_widths, allowed[:, first].tolist(), int(gpus_per_node[first])) is None:
                touched |= set(useful[group].tolist())
    load = problem.load if problem.load is not None else np.zeros(num_nodes, dtype=np.int64)

    def key_of(node: int) -> tuple:
        here = beside.on_node(node, int(gpus_per_node[node])) if node in loaded and beside is not None else ()
        return (int(gpus_per_node[node]), tuple(allowed[:, node].tolist()), tuple(room[:, node].tolist()), tuple(tuple(levels[node].tolist()) for levels in domains),
                int(problem.graph_of[node]), _kept_off(keep_off, allowed[:, node], runs, int(gpus_per_node[node]), node, bool(here), steps) if node in touched else (), here,
                int(load[node]))  # fmt: skip

    masks = [problem.blocked_masks(c) for c in part]
    by_masks = all(mask is not None for mask in masks)
    # nodes kept off alike (by masks) and loaded alike (their GPUs' loads, ``Beside.table``) share a key: grouped by rows
    one_by_one = touched - {node for off in keep_off for node in off} - loaded if by_masks else touched
    rows = np.column_stack([gpus_per_node[useful], allowed[:, useful].T, room[:, useful].T, *(levels[useful] for levels in domains), problem.graph_of[useful], load[useful],
                            *(mask[useful] for mask in masks if by_masks and mask is not None), *([beside.table[useful]] if beside is not None else [])])  # fmt: skip
    keys = _nodes_by_key(useful, rows, one_by_one, key_of)
    check("grouping nodes by shape")
    widths = [problem.classes[c].width for c in part]
    by_gpu: dict[tuple, Table] = {}  # classes kept off GPUs unevenly, or GPUs with a fixed load: whole-node patterns checked by GPU (``typed.py``)
    for key in sorted((key for key in keys if key[5]), key=_roomiest):
        check("enumerating node patterns")
        capacity, mask, graph, kept_off, here = key[0], key[1], key[4], key[5], key[6]
        stacks = part_stacks(problem.graphs[graph], part)
        fits = beside_of(problem, part) if here else None
        try:
            by_gpu[key] = Table(tuple(range(len(part))), tuple(typed_patterns(widths, mask, stacks, capacity, kept_off, runs, MAX_PATTERNS, check, here, fits, steps)))
        except OverflowError:
            raise TooManyPatterns from None
    found, listed = [], 0
    for (capacity, mask, rooms, domain, graph, kept_off, here, loaded), nodes in keys.items():
        check("enumerating node patterns")
        if kept_off:
            table = by_gpu[capacity, mask, rooms, domain, graph, kept_off, here, loaded]
            found.append(Shape(part, capacity, nodes, (table,), domain, load=loaded))
            listed += found[-1].size
            continue
        cliques = [tuple(part.index(c) for c in clique) for clique in problem.graphs[graph].cliques if set(clique) <= set(part)]
        holes = [(tuple(part.index(c) for c in found.classes), Covers(found)) for found in problem.graphs[graph].holes if set(found.classes) <= set(part)]
        pieces = _pieces(problem, graph, part) if not whole else [tuple(range(len(part)))]
        if by_clique:
            if holes:
                raise NotChordal
            tables = tuple(_clique_table(clique, widths, mask, rooms, check) for clique in maximal_cliques(cliques))
            links = clique_tree([table.columns for table in tables])
        elif len(pieces) > 1:  # a part joined beside rank strings' loads, whose pieces do not compete on these nodes
            tables = tuple(_piece_table(piece, widths, mask, cliques, rooms, check, holes) for piece in pieces)
            links = clique_tree([table.columns for table in tables])
        else:
            tables, links = (Table(tuple(range(len(part))), _whole_table(problem.graphs[graph], part, widths, mask, cliques, rooms, check, holes)),), ()
        if progressions:  # alike GPUs: the class in progressions at most the groups its chains' runs hold
            tables = _capped(tables, runs_cap(runs, steps, widths, mask, capacity))
        found.append(Shape(part, capacity, nodes, tables, domain, links, loaded))
        listed += found[-1].size  # a running total: summed anew per shape, 384 shapes took 0.2 s (``infeasible:766:245``)
        if listed > MAX_PATTERNS:
            raise TooManyPatterns
    return found


def _roomiest(key: tuple) -> tuple[int, int]:
    """The order :func:`shapes` lists the shapes checked by GPU in: most GPUs first, then
    fewest kept off. The tables are the same in any order, and one past ``MAX_PATTERNS`` ends
    the listing: the roomiest, likeliest to pass it, go first (``other hardware:331:11``: its
    seventh shape, of 15 GPUs, passed it after six others were listed to no use, 7,000
    patterns; it is listed first now, alone)."""
    capacity, kept_off = key[0], key[5]
    return -capacity, sum(len(off) for off in kept_off)


def _capped(tables: tuple[Table, ...], cap: tuple[int, int] | None) -> tuple[Table, ...]:
    """``tables`` less the patterns giving class ``cap[0]`` (a position in the part) more than
    ``cap[1]`` groups: a bound on one class, exact in every table that holds it (tables joined
    by a clique tree agree on the classes they share)."""
    if cap is None:
        return tables
    k, most = cap
    return tuple(
        Table(table.columns, tuple(p for p in table.patterns if p[table.columns.index(k)] <= most)) if k in table.columns else table for table in tables
    )


def beside_of(problem: CountProblem, part: tuple[int, ...]) -> FitsBeside | None:
    """Whether classes of ``part`` (positions) fit one GPU beside a rank strings' load
    (``fixed_loads.py``), for ``typed.py``; None when the problem has no such load."""
    beside = problem.beside
    if beside is None:
        return None
    return lambda load, stack: beside.fits(load, (part[k] for k in stack))


def _kept_off(
    keep_off: list[Mapping[int, tuple[int, ...]]],
    allowed: np.ndarray,
    runs: tuple[int, ...],
    capacity: int,
    node: int,
    loaded: bool = False,
    steps: tuple[int, ...] = (),
) -> tuple[tuple[int, ...], ...]:
    """Per class, the node's local ids it may not use (all for a class not allowed there), when
    the node needs checks GPU by GPU (``typed.needs_types``: GPUs kept off, runs, progressions of
    ``steps`` above 1; or ``loaded``: a GPU with a fixed load); else ``()``: the cliques' sums
    state it."""
    ok = allowed.tolist()
    here = [off.get(node, ()) for off, there in zip(keep_off, ok) if there]
    if not loaded and not needs_types(here, [run for run, there in zip(runs, ok) if there], [step for step, there in zip(steps, ok) if there]):
        return ()
    return tuple(off.get(node, ()) if there else tuple(range(capacity)) for off, there in zip(keep_off, ok))


def _pieces(problem: CountProblem, graph: int, part: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The pieces of ``part`` (positions) that compete on nodes of ``graph`` (its linked pairs),
    when the part was joined beside rank strings' loads; the whole part otherwise."""
    if problem.beside is None or not problem.beside.joined:
        return [tuple(range(len(part)))]
    position = {c: k for k, c in enumerate(part)}
    linked = [(position[a], position[b]) for a, b in problem.graphs[graph].linked if a in position and b in position]
    return connected_parts(len(part), linked)


def _whole_table(
    graph: ApartGraph,
    part: tuple[int, ...],
    widths: list[int],
    mask: tuple[bool, ...],
    cliques: list[tuple[int, ...]],
    rooms: tuple[int, ...],
    check: Callable[[str], None],
    holes: Sequence[tuple[tuple[int, ...], Covers]],
) -> tuple[tuple[int, ...], ...]:
    """The whole-node patterns of a part on nodes of one room (every class's, ``shapes``). With a
    hole, the sums of its stacks (``stack_sums.py``, milliseconds, where the covers take a
    second) when their table is small; else, and in a chordal part, by :func:`_fitting` (by
    arrays, as many steps as patterns). Both list the same patterns in the same order: a
    chordal graph's clique sums are what its stacks cover (a perfect graph), and a hole's covers
    are its stacks."""
    check("enumerating node patterns")
    summed = stack_sums(graph, part, widths, mask, rooms[0] if rooms else 0) if holes else None
    if summed is None:
        return tuple(_fitting(widths, mask, cliques, rooms, check, holes))
    if summed.shape[0] > MAX_PATTERNS:
        raise TooManyPatterns
    return tuple(tuple(row) for row in summed.tolist())


def _piece_table(
    piece: tuple[int, ...],
    widths: list[int],
    mask: tuple[bool, ...],
    cliques: list[tuple[int, ...]],
    rooms: tuple[int, ...],
    check: Callable[[str], None],
    holes: Sequence[tuple[tuple[int, ...], Covers]],
) -> Table:
    """The whole patterns of one piece of a part (positions ``piece``): its cliques and holes,
    which lie inside it (pieces share no linked pair)."""
    inside = set(piece)
    local = {k: i for i, k in enumerate(piece)}
    own_cliques = [tuple(local[k] for k in clique) for clique in cliques if set(clique) <= inside]
    own_holes = [(tuple(local[k] for k in columns), covers) for columns, covers in holes if set(columns) <= inside]
    found = _fitting([widths[k] for k in piece], tuple(mask[k] for k in piece), own_cliques, tuple(rooms[k] for k in piece), check, own_holes)
    return Table(piece, tuple(found))


def _clique_table(
    clique: tuple[int, ...], widths: list[int], mask: tuple[bool, ...], rooms: tuple[int, ...], check: Callable[[str], None]
) -> Table:
    """The local patterns of one clique: its classes' GPUs add up to at most its room."""
    columns = tuple(sorted(clique))
    pick = list(columns)
    local = _fitting([widths[k] for k in pick], tuple(mask[k] for k in pick), [tuple(range(len(pick)))], tuple(rooms[k] for k in pick), check)
    return Table(columns, tuple(local))


def _nodes_by_key(nodes: np.ndarray, rows: np.ndarray, one_by_one: set[int], key_of: Callable[[int], tuple]) -> dict[tuple, np.ndarray]:
    """The ``nodes`` grouped by ``key_of(node)`` (ascending, the keys in order of their first
    node), the key made once per distinct row of ``rows`` (one per node) for the nodes not
    ``one_by_one``, whose key is a function of their row alone: the same keys, without a tuple or
    a dict entry per node (0.3-0.6 s of 65,536 nodes that share a handful of shapes)."""
    checked = np.isin(nodes, np.array(sorted(one_by_one), dtype=np.int64))
    plain = nodes[~checked]
    grouped: dict[tuple, list[np.ndarray]] = {}
    for group in row_groups(rows[~checked]):
        grouped.setdefault(key_of(int(plain[group[0]])), []).append(plain[group])
    for node in nodes[checked].tolist():
        grouped.setdefault(key_of(node), []).append(np.array([node], dtype=np.int64))
    merged = {key: np.sort(np.concatenate(found)) for key, found in grouped.items()}
    return dict(sorted(merged.items(), key=lambda item: int(item[1][0])))


def class_domains(count_class: CountClass, num_nodes: int) -> np.ndarray:
    """Per node, the class's domain at each of its levels, then of its priced preferred domains,
    then its cell of each joint level (``crossing.py``) (nodes x levels)."""
    keys = [*(level.key for level in count_class.levels), *(level.key for level in count_class.priced), *(level.key for level in count_class.joint)]
    return np.stack(keys, axis=1) if keys else np.zeros((num_nodes, 0), dtype=np.int64)


def _fitting(
    widths: list[int],
    mask: tuple[bool, ...],
    cliques: list[tuple[int, ...]],
    rooms: tuple[int, ...],
    check: Callable[[str], None],
    holes: Sequence[tuple[tuple[int, ...], Covers]] = (),
) -> list[tuple[int, ...]]:
    """Every vector of group counts (empty first, then ascending lexicographically) that fits
    each clique's room (the room of its members, one number: they avoid the same rank-string
    GPUs) and that stacks cover in each hole (its columns and covers): with no hole, by arrays
    (:func:`_clique_sums`), else walked (:func:`_covered`)."""
    if holes:
        return list(_covered(widths, mask, cliques, rooms, check, holes))
    return _clique_sums(widths, mask, cliques, rooms, check)


def _clique_sums(
    widths: list[int], mask: tuple[bool, ...], cliques: list[tuple[int, ...]], rooms: tuple[int, ...], check: Callable[[str], None]
) -> list[tuple[int, ...]]:
    """:func:`_fitting` with no hole, one class at a time over arrays: each vector so far
    repeated once per count of the next class, the vectors whose cliques' GPUs so far pass their
    room dropped. Every vector kept ends, with zeros after it, in a pattern (the rooms bound
    sums of counts that are never negative), so the vectors kept never outnumber the patterns
    and past ``MAX_PATTERNS`` of them the patterns are too many."""
    size = len(widths)
    member = np.array([[k in clique for clique in cliques] for k in range(size)], dtype=np.int64).reshape(size, len(cliques))
    limit = np.array([rooms[clique[0]] for clique in cliques], dtype=np.int64)
    vectors = np.zeros((1, 0), dtype=np.int64)
    sums = np.zeros((1, len(cliques)), dtype=np.int64)  # per vector and clique, its GPUs so far
    for k in range(size):
        check("enumerating node patterns")
        values = np.arange((max(rooms[k], 0) // widths[k] if mask[k] else 0) + 1, dtype=np.int64)
        counts = np.tile(values, vectors.shape[0])
        sums = np.repeat(sums, values.size, axis=0) + counts[:, None] * (widths[k] * member[k])[None, :]
        fits = (sums <= limit).all(axis=1)
        vectors = np.concatenate((np.repeat(vectors, values.size, axis=0), counts[:, None]), axis=1)[fits]
        sums = sums[fits]
        if vectors.shape[0] > MAX_PATTERNS:
            raise TooManyPatterns
    return [tuple(row) for row in vectors.tolist()]


def _covered(
    widths: list[int],
    mask: tuple[bool, ...],
    cliques: list[tuple[int, ...]],
    rooms: tuple[int, ...],
    check: Callable[[str], None],
    holes: Sequence[tuple[tuple[int, ...], Covers]],
) -> Iterator[tuple[int, ...]]:
    """:func:`_fitting` with holes, walked class by class: cliques prune as counts are chosen,
    covers judge whole vectors."""
    size = len(widths)
    counts = [0] * size
    produced = 0

    deepest = [max((len(stack) for stack in covers.hole.sets), default=0) for _, covers in holes]

    def fits(upto: int) -> bool:
        """Every clique within its room, and every hole within what its room's stacks can hold
        (each GPU holds at most its largest stack's classes): cheap checks of partial vectors
        that the covers would refuse whole."""
        if not all(sum(counts[k] * widths[k] for k in clique if k <= upto) <= rooms[clique[0]] for clique in cliques):
            return False
        return all(sum(counts[k] * widths[k] for k in columns if k <= upto) <= rooms[columns[0]] * most for (columns, _), most in zip(holes, deepest))

    def walk(k: int) -> Iterator[tuple[int, ...]]:
        nonlocal produced
        if k == size:
            if any(covers.cover(tuple(counts[j] * widths[j] for j in columns), rooms[columns[0]]) is None for columns, covers in holes):
                return
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
