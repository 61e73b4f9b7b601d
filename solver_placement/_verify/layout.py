"""Where a component may be and, for rank strings, exactly where it is.

``node_group`` and ``unit`` say which items the component's ranks count; ``placement`` (a rank
string or explicit lists) fixes each process's ranks by RLinf's even split, re-derived here from
the parsed segments. Components on one comma-joined key share that rule and so one layout.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import counted
from solver_placement._specification.grammar import ComponentSpec, Declarative, ExplicitRanks, RankSegments
from solver_placement._verify.columns import Columns
from solver_placement._verify.placed import Placed, ranked_items


def check_layout(placed: Placed) -> Iterator[str]:
    """Every process holds items of its node groups, on one node, of one type; rank-string
    components hold exactly the items their string gives each process."""
    cluster = placed.cluster
    for name in placed.held:
        component = placed.spec.components[name]
        if name in placed.columns and _accepted(component, placed.columns[name], placed.ranked(name), cluster):
            continue  # every rule below holds, tested by arrays
        held = placed.held[name]
        allowed = set(ranked_items(component, cluster))
        for rank, ids in enumerate(held):
            if any(hw not in allowed for hw in ids):
                yield f"{name} rank {rank}: uses hardware outside node_group {','.join(component.node_groups)}"
            if len({int(cluster.hw_node[hw]) for hw in ids}) > 1:
                yield f"{name} rank {rank}: spans several nodes"
            if len({int(cluster.hw_kind[hw]) for hw in ids}) > 1:
                yield f"{name} rank {rank}: mixes hardware types"
        if not isinstance(component.form, Declarative):
            yield from _segments(component, component.form, held, cluster)


def check_shared_rule(placed: Placed) -> Iterator[str]:
    """Components named together on one comma-joined key take the same placement; the key
    itself (not any value under it) states this, so the check owns no config key."""
    for name in placed.held:
        owner = placed.spec.components[name].shares_rule_with
        if owner is not None and owner in placed.held and not _same(placed, name, owner):
            yield f"{name}: differs from {owner}, which shares its placement rule"


def _same(placed: Placed, name: str, owner: str) -> bool:
    """Whether two components hold the same items process by process (by their columns when
    both were read so: the lists are made from them)."""
    if name in placed.columns and owner in placed.columns:
        mine, theirs = placed.columns[name], placed.columns[owner]
        return np.array_equal(mine.indptr, theirs.indptr) and np.array_equal(mine.ids, theirs.ids)
    return placed.held[name] == placed.held[owner]


def _segments(component: ComponentSpec, form: RankSegments | ExplicitRanks, held: list[list[int]], cluster: Cluster) -> Iterator[str]:
    physical = ranked_items(component, cluster)
    expected = [[physical[r] for r in ranks] for ranks in _expected_ranks(form, len(physical))]
    if len(expected) != len(held):
        yield f"{component.name}: {counted(len(held), 'process', 'processes')}, the placement string gives {len(expected)}"
        return
    for rank, (want, got) in enumerate(zip(expected, held, strict=True)):
        if sorted(want) != sorted(got):
            yield f"{component.name} rank {rank}: holds {got}, the placement string gives {want}"


def _expected_ranks(form: RankSegments | ExplicitRanks, total: int) -> list[list[int]]:
    """RLinf's even split (or the explicit lists), re-derived: per process the ranks it must
    hold, ``total`` being how many ranks the component's node groups count."""
    if isinstance(form, ExplicitRanks):
        return [form.of(process) for process in range(form.num_processes)]
    expected: list[list[int]] = []
    for segment in form.segments:
        ranks = list(range(total)) if segment.resources is None else list(range(segment.resources.first, segment.resources.last + 1))
        count = len(segment.processes) if segment.processes is not None else len(ranks)
        if len(ranks) >= count:
            share = len(ranks) // count
            expected.extend(ranks[i * share:(i + 1) * share] for i in range(count))
        else:
            sharers = count // len(ranks)
            expected.extend([ranks[i // sharers]] for i in range(count))
    return expected


def _accepted(component: ComponentSpec, columns: Columns, physical: np.ndarray, cluster: Cluster) -> bool:
    """Whether every rule :func:`check_layout` tests holds, tested by arrays (explicit rank
    lists too: a re-plan pins every surviving process by one, 2.6 s of loop on 65,536 nodes);
    ``physical``: the items the component's ranks count (:func:`ranked_items`)."""
    allowed = np.zeros(cluster.num_hardware, dtype=bool)
    allowed[physical] = True
    ids, lengths = columns.ids, columns.lengths
    first = ids[np.repeat(columns.indptr[:-1], lengths)]  # each item's record's first item
    if not allowed[ids].all() or np.any(cluster.hw_node[ids] != cluster.hw_node[first]) or np.any(cluster.hw_kind[ids] != cluster.hw_kind[first]):
        return False
    if isinstance(component.form, Declarative):
        return True
    expected = _listed_columns(component.form, physical.size) if isinstance(component.form, ExplicitRanks) else _expected_columns(component.form, physical.size)
    if expected is None:
        return False
    want_lengths, want_ranks = expected
    if not np.array_equal(want_lengths, lengths):
        return False
    want = physical[want_ranks]
    want_sorted = want[np.lexsort((want, columns.row))] if want.size else want
    return np.array_equal(want_sorted, columns.sorted_rows())


def _listed_columns(form: ExplicitRanks, total: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Explicit rank lists by arrays: ranks per process and the ranks, flat; None when a rank
    is past the ``total`` counted (the loop words it)."""
    lengths, ranks = np.diff(form.indptr), form.ranks
    if ranks.size and (ranks.min() < 0 or ranks.max() >= total):
        return None
    return lengths, ranks


def _expected_columns(form: RankSegments, total: int) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_expected_ranks` by arrays: ranks per process and the ranks, flat; None for a
    segment the arrays do not state (no processes, or ranks past the ``total`` counted)."""
    lengths: list[np.ndarray] = []
    ranks: list[np.ndarray] = []
    for segment in form.segments:
        first, last = (0, total - 1) if segment.resources is None else (segment.resources.first, segment.resources.last)
        available = last - first + 1
        count = len(segment.processes) if segment.processes is not None else available
        if count <= 0 or available <= 0 or last >= total:
            return None
        if available >= count:
            share = available // count
            lengths.append(np.full(count, share, dtype=np.int64))
            ranks.append(first + np.arange(count * share, dtype=np.int64))
        else:
            taken = np.arange(count, dtype=np.int64) // (count // available)
            if taken.max() >= available:
                return None
            lengths.append(np.ones(count, dtype=np.int64))
            ranks.append(first + taken)
    return np.concatenate(lengths), np.concatenate(ranks)
