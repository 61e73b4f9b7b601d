"""Rules between components: ``collocate_with``, ``exclusive_with`` and
``max_processes_per_hardware`` (a cap on everyone's processes on the items a component uses).

A rule naming a component without records is skipped: the bookkeeping check already reports
that component, and a comparison with nothing would only add noise to the report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from solver_placement._errors import counted
from solver_placement._verify.placed import Placed


def check_collocation(placed: Placed) -> Iterator[str]:
    """The same hardware set as the target, each process inside one of the target's TP groups
    when it fits in one."""
    for name in placed.held:
        target = placed.spec.components[name].constraints.collocate_with
        if target is None or target not in placed.held:
            continue
        if placed.used(name) != placed.used(target):
            yield f"{name}: hardware set differs from {target}'s (collocate_with)"
        yield from _nesting(name, target, placed)


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
            if other in placed.held and placed.used(name) & placed.used(other):
                yield f"{name}: shares hardware with {other} (exclusive_with)"


def check_capacity(placed: Placed) -> Iterator[str]:
    """Processes of all components counted on every item the capped component uses."""
    capped = {name: limit for name in placed.held if (limit := placed.spec.components[name].constraints.max_processes_per_hardware) is not None}
    if not capped:
        return  # no component caps its items
    load = Counter(hw for processes in placed.held.values() for ids in processes for hw in ids)
    for name, limit in capped.items():
        if any(load[hw] > limit for hw in placed.used(name)):
            yield f"{name}: an item holds more than {counted(limit, 'process', 'processes')} (max_processes_per_hardware)"
