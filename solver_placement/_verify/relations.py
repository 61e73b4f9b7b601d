"""Rules between components: ``collocate_with``, ``exclusive_with`` and
``max_processes_per_hardware`` (a cap on everyone's processes on the items a component uses).

A rule naming a component without records is skipped: the bookkeeping check already reports
that component, and a comparison with nothing would only add noise to the report.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from solver_placement._arrays import distinct
from solver_placement._errors import counted
from solver_placement._verify.placed import Placed


def check_collocation(placed: Placed) -> Iterator[str]:
    """The same hardware set as the target, each process inside one of the target's TP groups
    when it fits in one."""
    for name in placed.held:
        target = placed.spec.components[name].constraints.collocate_with
        if target is None or target not in placed.held:
            continue
        if not np.array_equal(placed.use(name) > 0, placed.use(target) > 0):
            yield f"{name}: hardware set differs from {target}'s (collocate_with)"
        if not _nested_columns(name, target, placed):
            yield from _nesting(name, target, placed)


def _nested_columns(name: str, target: str, placed: Placed) -> bool:
    """Whether :func:`_nesting` finds nothing, tested by arrays (accept only): each process of
    ``name`` keeps to one TP group of ``target`` (the least and the greatest group of its items
    agree), or the nesting is not defined (the target's items uneven or shared, or a process of
    ``name`` larger than one group)."""
    if name not in placed.columns or target not in placed.columns:
        return False
    mine, theirs = placed.columns[name], placed.columns[target]
    sizes = distinct(theirs.lengths)
    if sizes.size != 1 or int(placed.use(target).max(initial=0)) > 1:
        return True  # uneven or shared items: no groups to keep to (what _nesting skips)
    tp = placed.spec.components[target].constraints.tensor_parallel_size
    if not mine.ids.size or int(mine.lengths.max()) > int(sizes[0]) * tp:
        return True
    group_of = np.full(placed.cluster.num_hardware, -1, dtype=np.int64)
    group_of[theirs.ids] = theirs.row // tp
    groups = group_of[mine.ids]
    starts = mine.indptr[:-1][mine.lengths > 0]
    return bool(np.array_equal(np.minimum.reduceat(groups, starts), np.maximum.reduceat(groups, starts)))


def _nesting(name: str, target: str, placed: Placed) -> Iterator[str]:
    """Skipped when the target's TP groups are not well defined (uneven or shared items) or a
    process of ``name`` is larger than one group (it then spans groups by necessity)."""
    tp = placed.spec.components[target].constraints.tensor_parallel_size
    target_held = placed.held[target]
    sizes = {len(ids) for ids in target_held}
    flat = [hw for ids in target_held for hw in ids]
    if len(sizes) != 1 or len(set(flat)) != len(flat):
        return
    if max(len(ids) for ids in placed.held[name]) > sizes.pop() * tp:
        return
    group_of = {hw: rank // tp for rank, ids in enumerate(target_held) for hw in ids}
    for rank, ids in enumerate(placed.held[name]):
        if len({group_of.get(hw) for hw in ids}) > 1:
            yield f"{name} rank {rank}: spans several tensor-parallel groups of {target}"


def check_exclusion(placed: Placed) -> Iterator[str]:
    """No item shared with any component named in ``exclusive_with``."""
    for name in placed.held:
        for other in placed.spec.components[name].constraints.exclusive_with:
            if other in placed.held and np.any((placed.use(name) > 0) & (placed.use(other) > 0)):
                yield f"{name}: shares hardware with {other} (exclusive_with)"


def check_capacity(placed: Placed) -> Iterator[str]:
    """Processes of all components counted on every item the capped component uses."""
    capped = {name: limit for name in placed.held if (limit := placed.spec.components[name].constraints.max_processes_per_hardware) is not None}
    if not capped:
        return  # no component caps its items
    load = np.sum([placed.use(name) for name in placed.held], axis=0)
    for name, limit in capped.items():
        if np.any((placed.use(name) > 0) & (load > limit)):
            yield f"{name}: an item holds more than {counted(limit, 'process', 'processes')} (max_processes_per_hardware)"
