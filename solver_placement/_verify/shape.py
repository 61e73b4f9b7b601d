"""What a declarative component asks for: how many processes, how many items each, which
window of ranks, and the stride between a process's ranks.

The solver picks the items; these checks read the declared fields back and test the records
against them, counting ranks over the component's node groups as the cluster tables give them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import numpy as np

from solver_placement._arrays import distinct
from solver_placement._errors import counted
from solver_placement._specification.grammar import Declarative
from solver_placement._verify.placed import Placed, ranked_items


def check_shape(placed: Placed) -> Iterator[str]:
    """``processes`` and ``hardware_per_process`` hold; with ``resources`` every item of the
    window is used evenly, without it no two of the component's processes share an item."""
    for name in placed.held:
        declared = placed.spec.components[name].form
        if not isinstance(declared, Declarative) or _shaped_columns(placed, name, declared):
            continue  # nothing declared, or every rule below holds, tested by arrays
        held = placed.held[name]
        if declared.processes is not None and len(held) != declared.processes:
            yield f"{name}: {counted(len(held), 'process', 'processes')}, asked for {declared.processes}"
        sizes = {len(ids) for ids in held}
        if len(sizes) != 1 or (declared.hardware_per_process is not None and sizes != {declared.hardware_per_process}):
            yield f"{name}: processes hold {sorted(sizes)} items, asked for {declared.hardware_per_process}"
        use = Counter(hw for ids in held for hw in ids)
        if declared.fill:
            physical = ranked_items(placed.spec.components[name], placed.cluster)
            window = physical if declared.resources is None else physical[declared.resources.first:declared.resources.last + 1]
            if set(use) != set(window) or len(set(use.values())) != 1:
                yield f"{name}: does not use every item of resources {declared.resources or 'all'} evenly"
        elif use and max(use.values()) > 1:
            yield f"{name}: two of its processes share an item"


def _shaped_columns(placed: Placed, name: str, declared: Declarative) -> bool:
    """Whether every rule :func:`check_shape` tests holds, tested by arrays (accept only): the
    process count, one size for all (the declared one), and each item's use from a count per item."""
    columns = placed.columns.get(name)
    if columns is None or not columns.ids.size:
        return False
    sizes = distinct(columns.lengths)
    if (declared.processes is not None and columns.node.size != declared.processes) or sizes.size != 1:
        return False
    if declared.hardware_per_process is not None and int(sizes[0]) != declared.hardware_per_process:
        return False
    use = placed.use(name)
    if not declared.fill:
        return int(use.max()) <= 1
    physical = placed.ranked(name)
    window = physical if declared.resources is None else physical[declared.resources.first:declared.resources.last + 1]
    in_window = np.zeros(use.size, dtype=bool)
    in_window[window] = True
    used = use > 0
    return bool(np.array_equal(used, in_window)) and distinct(use[used]).size == 1


def check_stride(placed: Placed) -> Iterator[str]:
    """Each process's ranks are ``h, h+s, ..., h+(g-1)s`` in some order (an item listed in
    two node groups has two ranks and may use either)."""
    for name in placed.held:
        component = placed.spec.components[name]
        if not isinstance(component.form, Declarative):
            continue
        stride = _stride(component.form.stride, name, placed)
        if stride is None:
            continue
        if _strided_columns(placed, name, stride):
            continue
        ranked = ranked_items(component, placed.cluster)
        held = placed.held[name]
        ranks_of: dict[int, list[int]] = {}
        for rank, hw in enumerate(ranked):
            ranks_of.setdefault(hw, []).append(rank)
        for rank, ids in enumerate(held):
            if not ids or any(hw not in ranks_of for hw in ids):
                continue  # no items, or items outside its node groups: other checks report it
            choices = [ranks_of[hw] for hw in ids]
            if not _follows_stride(choices, stride):
                yield f"{name} rank {rank}: ranks {choices} do not follow stride {stride}"


def _strided_columns(placed: Placed, name: str, stride: int) -> bool:
    """Whether every process read as columns takes ranks ``h, h+stride, ...`` (accept only, by
    arrays): processes of one size, and every item of one rank (no overlapping node groups)."""
    columns = placed.columns.get(name)
    if columns is None or not columns.ids.size:
        return False
    size = int(columns.lengths[0])
    if (columns.lengths != size).any():
        return False
    if size == 1:
        return True  # one item each: the progression of one rank, whatever the stride
    physical = placed.ranked(name)
    if distinct(physical).size != physical.size:
        return False
    rank_of = np.full(placed.cluster.num_hardware, -1, dtype=np.int64)
    rank_of[physical] = np.arange(physical.size)
    ranks = rank_of[columns.ids].reshape(-1, size)
    if (ranks < 0).any():
        return False
    ranks.sort(axis=1)
    return bool((np.diff(ranks, axis=1) == stride).all())


def _stride(declared: int | str, name: str, placed: Placed) -> int | None:
    """The declared stride; ``auto`` is the collocation target's items per TP group over this
    component's items per process (None when that is unknown: no target records, uneven sizes)."""
    if isinstance(declared, int):
        return declared
    target = placed.spec.components[name].constraints.collocate_with
    if target is None or target not in placed.held:
        return None
    target_sizes, own_sizes = _sizes(placed, target), _sizes(placed, name)
    if len(target_sizes) != 1 or len(own_sizes) != 1 or not own_sizes[0]:
        return None
    return target_sizes[0] * placed.spec.components[target].constraints.tensor_parallel_size // own_sizes[0]


def _sizes(placed: Placed, name: str) -> list[int]:
    """The distinct numbers of items the processes of ``name`` hold (by its columns when read so)."""
    if name in placed.columns:
        return distinct(placed.columns[name].lengths).tolist()
    return sorted({len(ids) for ids in placed.held[name]})


def _follows_stride(rank_choices: list[list[int]], stride: int) -> bool:
    """Some choice of one rank per item (at least one item) is ``h, h+stride, ...`` in some order."""
    if all(len(choices) == 1 for choices in rank_choices):  # one rank each (no overlapping node groups): the ranks sorted, no search
        ranks = sorted(choices[0] for choices in rank_choices)
        return all(later - earlier == stride for earlier, later in zip(ranks, ranks[1:]))
    for start in rank_choices[0]:
        for first in range(start - stride * (len(rank_choices) - 1), start + 1, stride):
            wanted = {first + k * stride for k in range(len(rank_choices))}
            if _matches(rank_choices, wanted):
                return True
    return False


def _matches(rank_choices: list[list[int]], wanted: set[int]) -> bool:
    """Each item takes a distinct rank of ``wanted`` from its own choices (small: a process's items)."""
    if not rank_choices:
        return not wanted
    return any(_matches(rank_choices[1:], wanted - {rank}) for rank in rank_choices[0] if rank in wanted)
