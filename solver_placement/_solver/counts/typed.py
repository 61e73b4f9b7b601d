"""Nodes where classes that compete for GPUs are kept off different GPUs: GPU stacks by type.

A rank-string component one class is exclusive with and its partner is not (or windows that
leave out different GPUs of a node) make a node's GPUs unlike: class ``a`` may use the rank
string's GPUs, class ``b`` may not. Then a clique's room is no longer one number, and its sums
state the rule neither way. What does state it, for any graph: every GPU holds a *stack* of
classes no two of which are apart (and that fit together, ``covers.py``), made only of the
classes its GPU admits. GPUs that admit the same classes are interchangeable, so a node is a few
*types* (the classes a GPU admits, how many such GPUs), and a node pattern fits exactly when the
types' GPUs, each given a stack within what it admits, hold every class its demand
(:func:`typed_cover`). Such nodes are few (those holding rank strings or the edge of a window),
so the count model lists their whole-node patterns by this check, and the layout gives each
GPU the stack found; every other node keeps the cliques' sums. None of it depends on the number
of GPUs in the cluster: types are per node shape, classes per connected part.

A GPU holding rank-string processes that load it (their ``memory_gb``, their processes under a
``max_processes_per_hardware``, ``fixed_loads.py``) is a type of its own: its stacks are cut to
those that fit beside the load, so two classes that each fit beside a rank string but not both
never share its GPUs. Such loads also join parts of classes that no rule connects but that
compete for a loaded GPU (:func:`beside_joins`), so their patterns are checked together.

A class whose processes take runs of consecutive GPUs (a stride's blocks) or progressions is
checked GPU by GPU in id order instead (``runs.py``), with the stacks each GPU admits
(:func:`admitted_stacks`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

from solver_placement._solver.counts.covers import hole
from solver_placement._solver.counts.fixed_loads import FixedLoad
from solver_placement._solver.counts.graphs import ApartGraph

#: Most mixes of stacks (one per part) checked beside one GPU's fixed load before its parts are
#: joined without the check (``beside_joins``): a few parts of a few stacks each make far fewer.
MAX_MIXES_CHECKED = 4_096
#: One type of GPU on a node: the classes (positions in the part) it admits, how many GPUs, and
#: the rank strings' load on each (None: none that matters).
GpuType = tuple[tuple[int, ...], int, FixedLoad | None]
#: Whether classes (positions in the part) fit one GPU beside a fixed load (``fixed_loads.py``).
FitsBeside = Callable[[FixedLoad, tuple[int, ...]], bool]


def gpu_types(
    capacity: int, keep_off: Sequence[Sequence[int]], loads: Sequence[FixedLoad | None] = ()
) -> tuple[tuple[GpuType, ...], tuple[tuple[int, ...], ...]]:
    """The node's GPU types (sorted, so nodes alike compare equal) and, per type, its local ids
    ascending; ``keep_off[k]`` are the local ids class ``k`` may not use, ``loads[gpu]`` what
    rank strings hold on each GPU (``()``: none anywhere)."""
    admits: dict[tuple[tuple[int, ...], FixedLoad | None], list[int]] = {}
    for gpu in range(capacity):
        admitted = tuple(k for k, off in enumerate(keep_off) if gpu not in off)
        admits.setdefault((admitted, loads[gpu] if loads else None), []).append(gpu)
    ordered = sorted(admits, key=lambda key: (key[0], () if key[1] is None else key[1].key()))
    return tuple((classes, len(admits[classes, load]), load) for classes, load in ordered), tuple(tuple(admits[key]) for key in ordered)


def part_stacks(graph: ApartGraph, part: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """The maximal stacks of the classes of ``part`` (class indices) on a node of ``graph``, as
    positions in ``part``: one stack of each hole inside the part (its sets are those that fit),
    combined with one maximal independent set of the part's other classes."""
    position = {c: k for k, c in enumerate(part)}
    inside = [found for found in graph.holes if set(found.classes) <= set(part)]
    in_holes = {c for found in inside for c in found.classes}
    rest = [c for c in part if c not in in_holes]
    choices = [[tuple(found.classes[k] for k in stack) for stack in found.sets] for found in inside]
    if rest:
        free = hole(rest, graph.pairs)
        choices.append([tuple(free.classes[k] for k in stack) for stack in free.sets])
    return tuple(sorted({tuple(sorted(position[c] for stack in combo for c in stack)) for combo in itertools.product(*choices)}))


def typed_cover(
    stacks: tuple[tuple[int, ...], ...], types: tuple[GpuType, ...], demand: tuple[int, ...], fits: FitsBeside | None = None
) -> tuple[tuple[tuple[int, ...], ...], ...] | None:
    """Per type, the stacks its GPUs hold (``stacks`` restricted to what the type admits and, on
    a GPU with a fixed load, to what ``fits`` beside it; GPUs left over stay idle), so that every
    class ``k`` is on at least ``demand[k]`` GPUs; None when no such stacks exist. A class may
    leave a GPU of its stack unused (stacks are closed under removing a class, beside a load
    too), so "at least" is exact."""
    return TypedCovers(stacks, types, fits).cover(demand)


class TypedCovers:
    """:func:`typed_cover` of one node for many demands: the search's steps are remembered
    across them (the patterns of a node share most of their remainders)."""

    def __init__(self, stacks: tuple[tuple[int, ...], ...], types: tuple[GpuType, ...], fits: FitsBeside | None = None) -> None:
        self.types = types
        self.local = tuple(admitted_stacks(stacks, admitted, load, fits) for admitted, _, load in types)
        holds = tuple(frozenset(k for stack in stacks_here for k in stack) for stacks_here in self.local)
        classes = sorted({k for held in holds for k in held})
        #: per type and class: the GPUs of this type (when it holds the class) plus every later type's that do
        self.room = [{k: sum(types[u][1] for u in range(t, len(types)) if k in holds[u]) for k in classes} for t in range(len(types))]
        self.holds = holds
        self.search = lru_cache(maxsize=None)(self._search)

    def cover(self, demand: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], ...], ...] | None:
        """Per type, the stacks its GPUs hold for ``demand`` (see :func:`typed_cover`)."""
        found = self.search(0, self.types[0][1] if self.types else 0, 0, demand)
        if found is None:
            return None
        return tuple(tuple(self.local[t][i] for i in chosen) for t, chosen in enumerate(found))

    def _search(self, t: int, left: int, start: int, need: tuple[int, ...]) -> tuple[tuple[int, ...], ...] | None:
        types, local, holds = self.types, self.local, self.holds
        if not any(need):
            return tuple(() for _ in types[t:])  # this type's and the later types' GPUs stay idle
        if t == len(types):
            return None
        later_room = self.room[t + 1] if t + 1 < len(types) else {}
        if any(n > left * (k in holds[t]) + later_room.get(k, 0) for k, n in enumerate(need) if n):
            return None  # a class with more demand than the GPUs that admit it
        for index in range(start, len(local[t]) if left else 0):
            stack = local[t][index]
            if any(need[k] for k in stack):
                rest = self.search(t, left - 1, index, tuple(max(n - (k in stack), 0) for k, n in enumerate(need)))
                if rest is not None:
                    return ((index, *rest[0]), *rest[1:])
        later = self.search(t + 1, types[t + 1][1] if t + 1 < len(types) else 0, 0, need)
        return None if later is None else ((), *later)


def needs_types(keep_off: Sequence[tuple[int, ...]], runs: Sequence[int], steps: Sequence[int] = ()) -> bool:
    """Whether a node's classes (of one connected part) need checks GPU by GPU: they are kept off
    different GPUs, or one that takes runs of consecutive GPUs is kept off some (then its room
    is not a count of GPUs but of the runs between the GPUs it may not use), or one takes
    progressions of ids ``steps[k]`` > 1 apart (its room is the progressions that fit between
    the others' GPUs, ``strided.py``)."""
    return len(set(keep_off)) > 1 or any(run > 1 and bool(off) for off, run in zip(keep_off, runs)) or any(step > 1 for step in steps)


def independent_blocks(keep_off: Sequence[Sequence[int]], capacity: int) -> list[tuple[frozenset[int], tuple[tuple[int, ...], ...], int, int]]:
    """The node's classes in blocks no GPU joins (a GPU admits classes of one block only: GPU
    classes and robot classes side by side, ``kinds.py``), each with its keep-off lists on the
    span of GPUs its classes admit (ids shifted to start at 0; every other class kept off all of
    it), the span's first id and its size. A node holds a pattern exactly when each block holds
    its part (stacks are closed under removing a class, a rank string's load on a GPU only
    narrows the stacks there, and the GPUs cut off the span's ends admit none of the block's
    classes, so no run of theirs crosses them), and searching the blocks one by one adds their
    costs where searching them together multiplies them."""
    root = list(range(len(keep_off)))

    def find(k: int) -> int:
        while root[k] != k:
            k = root[k]
        return k

    for gpu in range(capacity):
        admitting = [k for k, off in enumerate(keep_off) if gpu not in off]
        for k in admitting[1:]:
            root[find(k)] = find(admitting[0])
    members: dict[int, set[int]] = {}
    for k in range(len(keep_off)):
        members.setdefault(find(k), set()).add(k)
    found = []
    for block in members.values():
        admitted = [gpu for gpu in range(capacity) if any(gpu not in keep_off[k] for k in block)]
        low, size = (admitted[0], admitted[-1] + 1 - admitted[0]) if admitted else (0, 0)
        span = tuple(range(size))
        off = tuple(tuple(g - low for g in keep_off[k] if low <= g < low + size) if k in block else span for k in range(len(keep_off)))
        found.append((frozenset(block), off, low, size))
    return found


@lru_cache(maxsize=4_096)
def admitted_stacks(
    stacks: tuple[tuple[int, ...], ...], admitted: tuple[int, ...], load: FixedLoad | None, fits: FitsBeside | None
) -> tuple[tuple[int, ...], ...]:
    """The maximal stacks a GPU holds: ``stacks`` cut to the classes it ``admitted``, and beside
    a ``load``, each cut further to its largest subsets that ``fits``. Remembered: a node's few
    types ask the same over every pattern enumerated."""
    cut = tuple(sorted({tuple(k for k in stack if k in admitted) for stack in stacks}))
    if load is None or fits is None:
        return _maximal(cut)
    return _fitting(cut, load, fits)


def _fitting(stacks: tuple[tuple[int, ...], ...], load: FixedLoad, fits: FitsBeside) -> tuple[tuple[int, ...], ...]:
    """The largest subsets of ``stacks`` that ``fits`` beside ``load``: a fit never breaks by
    removing a class, so these are every stack a GPU with that load holds."""
    found: set[tuple[int, ...]] = set()
    seen: set[tuple[int, ...]] = set()
    pending = list(stacks)
    while pending:
        stack = pending.pop()
        if stack in seen:
            continue
        seen.add(stack)
        if fits(load, stack):
            found.add(stack)
        else:
            pending += [stack[:i] + stack[i + 1:] for i in range(len(stack))]
    return _maximal(tuple(sorted(found)))


def beside_joins(
    parts: Sequence[tuple[int, ...]], gpus: Iterable[tuple[ApartGraph, frozenset[int], FixedLoad]], fits: FitsBeside
) -> frozenset[tuple[int, int]]:
    """Pairs of classes (one per part, chained) joining the parts that compete for a GPU with a
    fixed load: ``gpus`` are each such GPU's graph, the classes it admits and its load, ``fits``
    judges classes (by index) beside a load. Parts no rule connects share a GPU freely when
    every mix of their stacks that each fit beside the load fits together; where one mix does
    not (two classes that each fit beside a rank string, not both), the count model must count
    them in one part. Joined parts are checked again until none changes (past
    ``MAX_MIXES_CHECKED`` mixes on a GPU, its parts are joined without the check: still exact,
    only larger)."""
    joined: set[tuple[int, int]] = set()
    kinds = list(dict.fromkeys(gpus))  # alike GPUs once, in the order given (deterministic)
    changed = True
    while changed:
        changed = False
        current = _merged(parts, joined)
        for graph, admitted, load in kinds:
            present = []
            for part in current:
                here = tuple(k for k, c in enumerate(part) if c in admitted)
                if here:
                    local = _fitting(tuple(sorted({tuple(k for k in stack if k in here) for stack in part_stacks(graph, part)})), load, _by_class(fits, part))
                    present.append((part, [tuple(part[k] for k in stack) for stack in local]))
            if len(present) < 2:
                continue
            mixes = 1
            for _, stacks in present:
                mixes *= len(stacks)
            if mixes > MAX_MIXES_CHECKED or any(not fits(load, tuple(c for stack in mix for c in stack)) for mix in itertools.product(*(s for _, s in present))):
                joined |= {(a[0], b[0]) for (a, _), (b, _) in zip(present, present[1:])}
                changed = True
                break
    return frozenset(joined)


def _merged(parts: Sequence[tuple[int, ...]], joined: set[tuple[int, int]]) -> list[tuple[int, ...]]:
    """``parts`` with those ``joined`` chains connect made one (classes ascending)."""
    merged = [set(part) for part in parts]
    for a, b in sorted(joined):
        first = next(group for group in merged if a in group)
        second = next(group for group in merged if b in group)
        if first is not second:
            first |= second
            merged.remove(second)
    return sorted(tuple(sorted(group)) for group in merged)


def _by_class(fits: FitsBeside, part: tuple[int, ...]) -> FitsBeside:
    """``fits`` of classes by index, asked by position in ``part``."""
    return lambda load, stack: fits(load, tuple(part[k] for k in stack))


def _maximal(stacks: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, ...], ...]:
    """The stacks no other one contains (the empty one only when it is alone)."""
    return tuple(s for s in stacks if not any(set(s) < set(other) for other in stacks)) or ((),)
