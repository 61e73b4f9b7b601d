"""Collocated components as one count class: the group a node holds whole, and the order in
which each member takes the class's GPUs.

``collocate_with`` (``rules/collocation.py``, ``build``) asks two things of a component: the
same GPU set as its target (a GPU used by one is used by the other), and, when one of its
processes fits in one of the target's tensor-parallel groups, each process inside one such
group. A free component without a filled window takes each GPU once (``max_share`` 1, a filled
window is placed first, ``preset.py``), so collocated components hold the same GPUs, each once,
and the set is the same along any chain, tree or cycle of ``collocate_with``: such a connected
set of components is one class of the count model, its GPUs counted once. Each member may only
use the GPUs every member's window holds (:func:`common_window`), and two members exclusive
with each other have no layout (the count path declines; the flat model names the conflict).

Per node, the class's GPUs are whole tensor-parallel groups of every member (a group lies on one
node, ``rules/domains.py``), so their number is a multiple of the least common multiple of the
members' group sizes (the class's ``unit``), whatever the layout: counting the class in units
loses no layout. A strided member's processes are laid out in blocks of ``amount * stride``
consecutive GPUs; where a block does not divide the unit and one member's processes are tiled by
every other's, the class is counted in that member's progressions, exactly (``strided.py``,
``progression_shape``). Otherwise a block that does not divide the unit asks more than the rule does (a
:class:`Loose` class, as is a holey root's class no member's progressions state): counted in
units of whole blocks too (``Blocks.WHOLE``; a holey root's class in whole progressions every
member tiles where the strides share a factor, ``strided.common_progression``) the answer is a
valid layout, and counted in the rule's units with no blocks (``Blocks.SPLIT``, a relaxation)
the model bounds every layout, so the count path returns the first when it meets the second's
bound, and declines otherwise (``counts/__init__.py``).

The layout deals a node's GPUs of the class (ascending, in whole runs of consecutive GPUs) to
every member in order (:func:`tile`), or, for members of one GPU per process, in the order of
the processes of a member with a longer block (their groups are then whole processes of that
member: a target of one GPU per process whose groups must each hold whole processes of a
strided follower). Which order nests every follower in its target is checked once, on one period
of the tiling: nodes hold whole units and take processes in the class's node order, so the
processes of all nodes are one long tiling that repeats with that period. The count model states
a class only when the check holds, so every layout it makes keeps the rule; when no order nests
them it declines, and the flat model decides.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from enum import Enum
from math import lcm

import numpy as np

from solver_placement._solver.bounds.needs import tensor_group_on_node
from solver_placement._solver.collocated_sets import linked_sets
from solver_placement._solver.counts.strided import class_layout, common_progression, holey, progression_shape, shape_of
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec

#: Most positions of the one period the nesting check tiles: a target whose tensor-parallel
#: groups may span nodes (a required domain) makes the period the unit times its group, and past
#: this the count model declines rather than tile an array that large.
MAX_PERIOD = 1 << 16


class Blocks(Enum):
    """How a class whose strided blocks do not divide its unit is counted: declined as a
    :class:`Loose` class (``ASKED``), in units of whole blocks (``WHOLE``: a restriction whose
    answers are layouts), or in the rule's units with no blocks (``SPLIT``: a relaxation, for
    its bound only)."""

    ASKED = "asked"
    WHOLE = "whole"
    SPLIT = "split"


class Untiled(Exception):
    """A class's GPUs on a node that are not whole blocks of a member's processes: only the
    relaxation that drops the blocks (``Blocks.SPLIT``) counts such nodes, and it is read for
    its bound, never laid out. ``bound``: that relaxation's bound, once its counts are solved
    (the layout that raised this has no way to know it: None)."""

    def __init__(self, reason: str, bound: int | None = None) -> None:
        super().__init__(reason)
        self.bound = bound


@dataclass(frozen=True)
class Loose:
    """A class whose strided blocks do not divide its unit, and why (for the notes)."""

    reason: str


@dataclass(frozen=True)
class Collocation:
    """A class's members (``root`` first, then config order), the GPUs of one of its groups on a
    node (``unit``), the consecutive GPUs its layout is made of (``run``: every member's block
    divides it), and the members of one GPU per process that take the class's GPUs in the order
    of ``leader``'s processes (``follows``; empty: every member in GPU order)."""

    root: str
    members: tuple[str, ...]
    unit: int
    run: int
    step: int = 1  # above 1: the root's progressions leave holes in its groups (``strided.py``)
    follows: tuple[str, ...] = ()
    leader: str = ""


def collocations(spec: PlacementSpec, free: Mapping[str, ComponentRequest], blocks: Blocks = Blocks.ASKED) -> list[Collocation] | Loose | str:
    """The classes of the free components (in config order of their first member), or why the
    count model does not state one (:class:`Loose`: strided blocks that do not divide a class's
    unit, counted as ``blocks`` says)."""
    targets: dict[str, str] = {}
    for name in free:
        target = spec.components[name].constraints.collocate_with
        if target is None:
            continue
        owner = spec.owner_of(target)
        if owner not in free:
            return f"{name}: collocated with the rank string {owner} (placed first, counts/preset.py)"
        if owner != name:  # a component of the key its target is on shares its layout already
            targets[name] = owner
    found = []
    for members in linked_sets(list(free), targets):
        collocation = _collocation(spec, free, members, targets, blocks)
        if isinstance(collocation, (str, Loose)):
            return collocation
        found.append(collocation)
    return found


def _collocation(
    spec: PlacementSpec, free: Mapping[str, ComponentRequest], linked: tuple[str, ...], targets: Mapping[str, str], blocks: Blocks
) -> Collocation | Loose | str:
    """One connected set as a class: its root (the first member collocated with no other, or the
    first of a cycle), unit, run and the order that nests every follower, or why not."""
    root = next((name for name in linked if name not in targets), linked[0])
    members = (root, *(name for name in linked if name != root))
    amount = {m: int(free[m].amount[0]) for m in members}
    for component in spec.components.values():
        apart = [other for other in component.constraints.exclusive_with if spec.owner_of(other) in members]
        if component.rule_owner in members and apart:  # the counting bounds see a direct pair only
            return f"{component.name} and {apart[0]}: exclusive, but collocated through collocate_with (the same GPUs): no layout has that"
    for name in members:
        target = targets.get(name)
        if target is not None and free[name].num_processes * amount[name] != free[target].num_processes * amount[target]:
            return f"{name}: collocated with {target} but holding a different number of GPUs"
    unit = lcm(*(tensor_group_on_node(spec, free[m]) * amount[m] for m in members))
    runs = {m: block(free[m]) for m in members}
    mixed = ""  # a holey root's class no member's progressions state: counted as a loose one
    if holey(spec, free[root]):  # progressions, exact (``strided.py``), where followers nest in them
        layout = class_layout(spec, free, members)
        if isinstance(layout, str):
            mixed = layout
        elif any(amount[m] > 1 and shape_of(free[m]) != shape_of(free[root]) for m in members[1:]):  # processes of another shape: nested as checked
            return _nested(spec, free, (root, members, unit), targets, runs, layout)
        elif unit == tensor_group_on_node(spec, free[root]) * amount[root]:
            return Collocation(root, members, unit, *layout)
    loose = next((name for name in members if unit % runs[name]), None)
    if loose is not None or mixed:
        shape = progression_shape(free, members)
        if not mixed and shape is not None and shape[1] > 1:  # a strided member whose processes every other's tile: the class is them, exactly (``strided.py``)
            return _nested(spec, free, (root, members, unit), targets, runs, shape)
        reason = mixed
        if loose is not None and not mixed:
            reason = f"{loose}: a stride whose blocks of {runs[loose]} GPUs do not tile the groups of {unit} GPUs it holds with the components collocated with it"
        if blocks == Blocks.ASKED:
            return Loose(reason)
        if blocks == Blocks.SPLIT:
            return Collocation(root, members, unit, 1)
        common = common_progression(free, members) if mixed else None
        if common is not None and free[root].num_processes * amount[root] % lcm(unit, common[0]) == 0:
            nested = _nested(spec, free, (root, members, lcm(unit, common[0])), targets, runs, common)
            if isinstance(nested, Collocation):  # whole progressions every member tiles: a restriction, as blocks are
                return nested
        unit = lcm(unit, *runs.values())
        if free[root].num_processes * amount[root] % unit:
            return reason  # not even whole blocks hold every GPU of the class
    return _nested(spec, free, (root, members, unit), targets, runs, (lcm(*runs.values()), 1))


def _nested(
    spec: PlacementSpec,
    free: Mapping[str, ComponentRequest],
    formed: tuple[str, tuple[str, ...], int],
    targets: Mapping[str, str],
    runs: Mapping[str, int],
    layout: tuple[int, int],
) -> Collocation | str:
    """The class ``formed`` (root, members, unit) laid out in ``layout`` (run, step: blocks of
    ``run`` consecutive GPUs for step 1, else progressions, ``strided.py``), in the first order
    that nests every follower in its target's groups on one period of the tiling, or why none
    does."""
    root, members, unit = formed
    run, step = layout
    amount = {m: int(free[m].amount[0]) for m in members}
    nests = [(name, target) for name, target in targets.items() if name in members and amount[name] <= amount[target] * _tp(spec, target)]
    if not nests:
        return Collocation(root, members, unit, run, step)
    period = lcm(unit, *(amount[target] * _tp(spec, target) for _, target in nests))
    if period > MAX_PERIOD:
        return f"{root}: collocated components whose layout repeats only every {period} GPUs, over MAX_PERIOD={MAX_PERIOD}"
    for follows, leader in _orders(members, amount, runs):
        items = member_items(np.arange(period), members, follows, leader, free, step)
        if all(_inside(items[name], items[target], _tp(spec, target), period) for name, target in nests):
            return Collocation(root, members, unit, run, step, follows=follows, leader=leader)
    items = member_items(np.arange(period), members, (), "", free, step)
    name, target = next((n, t) for n, t in nests if not _inside(items[n], items[t], _tp(spec, t), period))
    return f"{name}: processes that the count layout cannot nest in {target}'s tensor-parallel groups"


def _tp(spec: PlacementSpec, name: str) -> int:
    return spec.components[name].constraints.tensor_parallel_size


def _orders(members: tuple[str, ...], amount: Mapping[str, int], runs: Mapping[str, int]) -> Iterator[tuple[tuple[str, ...], str]]:
    """The orders the layout may deal a class's GPUs in: every member in GPU order, then the
    members of one GPU per process in the order of the processes of each member whose block is
    longer than a GPU, longest first."""
    yield (), ""
    ones = tuple(m for m in members if amount[m] == 1)
    if ones:
        for leader in sorted((m for m in members if runs[m] > 1), key=lambda m: -runs[m]):
            yield ones, leader


def _inside(mine: np.ndarray, theirs: np.ndarray, tp: int, period: int) -> bool:
    """Whether every process of ``mine`` (processes x positions) lies in one tensor-parallel
    group of ``theirs`` (``tp`` processes each), on positions ``0 .. period - 1``."""
    group_of = np.empty(period, dtype=np.int64)
    group_of[theirs] = (np.arange(theirs.shape[0]) // tp)[:, None]
    groups = group_of[mine]
    return bool((groups == groups[:, :1]).all())


def block(request: ComponentRequest) -> int:
    """The consecutive GPUs a member's processes are laid out in: ``amount * stride`` for a
    process of several GPUs (``stride`` such processes interleaved), else 1 (any GPU will do)."""
    amount = int(request.amount[0])
    return amount * int(request.stride or 1) if amount > 1 else 1


def tile(gpus: np.ndarray, request: ComponentRequest, class_step: int = 1) -> np.ndarray:
    """``gpus`` (in order) split among the request's processes (``amount`` each): a block of
    ``amount * k`` positions interleaved among ``k`` processes, ``k`` its stride over the
    class's (``class_step``: the ids apart of consecutive positions, 1 for ids ascending, the
    progressions' step for GPUs in progression order, ``strided.py``; ``k`` is 1 for a member of
    the class's own shape): processes x amount."""
    amount, step = int(request.amount[0]), int(request.stride or 1) // class_step
    width = amount * step if amount > 1 and step > 1 else amount  # a stride moves nothing for one GPU a process
    flat = gpus.reshape(-1)
    if flat.size % width:
        raise Untiled(f"{request.name}: {flat.size} GPUs of its class on a node, not whole blocks of {width}")
    if amount > 1 and step > 1:
        flat = flat.reshape(-1, amount, step).transpose(0, 2, 1).reshape(-1)
    return flat.reshape(-1, amount)


def member_items(
    gpus: np.ndarray,
    members: tuple[str, ...],
    follows: tuple[str, ...],
    leader: str,
    requests: Mapping[str, ComponentRequest],
    class_step: int = 1,
) -> dict[str, np.ndarray]:
    """Each member's processes x GPUs on a class's ``gpus`` of one node (in order): dealt by
    :func:`tile`, the members of ``follows`` one GPU each in the order of ``leader``'s processes."""
    items = {member: tile(gpus, requests[member], class_step) for member in members if member not in follows}
    if follows:
        order = items[leader].reshape(-1, 1)
        items |= {member: order for member in follows}
    return items


def common_window(free: Mapping[str, ComponentRequest], members: tuple[str, ...]) -> ComponentRequest:
    """The root's request cut to the GPUs every member's window holds (what the class may use;
    read by the window helpers, never placed)."""
    root = free[members[0]]
    size = max(int(free[m].cand_hw.max(initial=-1)) for m in members) + 1
    keep = np.ones(root.cand_hw.size, dtype=bool)
    for member in members[1:]:  # a mark per item (ids are small): no sort, where intersecting sorted arrays took 0.05-0.2 s
        held = np.zeros(size, dtype=bool)
        held[free[member].cand_hw] = True
        keep &= held[root.cand_hw]
    if keep.all():
        return root
    return replace(root, indptr=np.array([0, int(keep.sum())]), cand_hw=root.cand_hw[keep], cand_rank=root.cand_rank[keep], shared_window=True)


__all__ = ["MAX_PERIOD", "Blocks", "Collocation", "Loose", "Untiled", "block", "collocations", "common_window", "member_items", "tile"]
