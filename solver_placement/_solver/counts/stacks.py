"""Which classes may share one GPU, node by node: never when exclusive, with ``memory_gb`` only
when their memory fits together, and under ``max_processes_per_hardware`` only when their
processes on one GPU stay within the limit.

Components with memory time-share a GPU (``rules/memory.py`` states the rule for the flat
model): while one process runs (its active memory) every other on the GPU keeps its idle memory,
and every such mix must fit the GPU, in whole megabytes as the flat model counts them. GPU memory
differs between nodes, so the pairs that may not share differ too: the nodes of one GPU memory
get one graph.

The count model states "may not share" pair by pair. That is exact when every set of classes
that may share two by two also fits together; memory can break it (three that fit in pairs may
not fit all at once), and so can a limit on processes per GPU (three classes of one process
per GPU each fit a limit of two in pairs, not all three): such a set is returned as a
:class:`Misfit` for ``separate.py``.

A GPU of a class holds one process of each of its members' components (shared-rule copies
included, ``rules/capacity.py`` counts them the same way), so a class's *load* per GPU is a
number, and ``max_processes_per_hardware`` of any component in a stack bounds the stack's load.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from solver_placement._arrays import sorted_row_groups
from solver_placement._solver.counts.covers import Fits
from solver_placement._solver.counts.graphs import ApartGraph, apart_graph
from solver_placement._solver.rules.memory import megabytes, memory_per_gpu
from solver_placement._specification.grammar import Memory
from solver_placement._specification.placement_spec import PlacementSpec

#: Most sets of three or more classes checked for fitting together, per GPU memory size: past
#: it the count model declines rather than spend seconds proving pairs are enough.
MAX_STACKS_CHECKED = 4_096

#: Each member of a class with memory: its name and its memory need (members without it count 0).
Holders = tuple[tuple[str, Memory], ...]


@dataclass(frozen=True)
class Load:
    """What a class puts on each of its GPUs: ``processes`` (one per component whose rule owner
    is a member) and the lowest ``max_processes_per_hardware`` among those components (None:
    no limit)."""

    processes: int
    limit: int | None


def loads(spec: PlacementSpec, classes: Sequence[Sequence[str]]) -> list[Load]:
    """Each class's :class:`Load`: the components a member owns the rule of, and their limits."""
    owned: dict[str, list[int | None]] = {}
    for component in spec.components.values():  # one pass: a scan per class is quadratic in components
        owned.setdefault(component.rule_owner, []).append(component.constraints.max_processes_per_hardware)
    found = []
    for members in classes:
        caps = [cap for name in members for cap in owned.get(name, [])]
        limits = [cap for cap in caps if cap is not None]
        found.append(Load(len(caps), min(limits) if limits else None))
    return found


def _within(loads_: Sequence[Load], stack: Sequence[int]) -> bool:
    """Whether the classes of ``stack`` on one GPU keep every limit among them."""
    limits = [limit for c in stack if (limit := loads_[c].limit) is not None]
    return not limits or sum(loads_[c].processes for c in stack) <= min(limits)


@dataclass(frozen=True)
class Misfit:
    """Classes that may share a GPU two by two but do not fit one all together: pairs cannot
    state that (``separate.py`` keeps one pair of them apart at a time instead)."""

    classes: tuple[int, ...]
    reason: str


def _node_kinds(limits: list[int | None], reach: np.ndarray) -> dict[tuple[int | None, tuple[bool, ...]], list[int]]:
    """The nodes (ascending) of each distinct (GPU memory in MB, which classes reach the node),
    found by one sort of the nodes' rows rather than a key per node (65,536 nodes, a few kinds)."""
    if not limits:
        return {}
    megabytes_or_none = np.array([-1 if limit is None else limit for limit in limits], dtype=np.int64)
    groups = sorted_row_groups(np.column_stack([megabytes_or_none, reach.T]))  # by lexsort: np.unique over rows took 0.05-0.1 s
    return {(limits[int(nodes[0])], tuple(reach[:, int(nodes[0])].tolist())): nodes.tolist() for nodes in groups}


def apart_graphs(
    spec: PlacementSpec,
    classes: Sequence[Sequence[str]],
    exclusive: frozenset[tuple[int, int]],
    reach: np.ndarray,
    separate: frozenset[tuple[int, int]] = frozenset(),
    relaxed: bool = False,
    stacked: bool = False,
) -> tuple[tuple[ApartGraph, ...], np.ndarray] | Misfit | str:
    """One graph per distinct set of pairs that may not share a GPU, and per node the index of
    its graph; or why the pairs do not state the rule (a :class:`Misfit`, or a text: too many
    sets to check). ``classes`` are the member names of each class (rule
    owners); ``reach[c, n]`` says whether class ``c``'s window holds node ``n``: a pair only
    matters where both may go, and leaving out the others keeps graphs chordal (cheaper to
    count, ``graphs.py``) that would not be as a whole. ``separate`` are pairs kept apart besides; ``relaxed`` skips the check of
    sets of three or more, so the graphs allow more than the rule (a relaxation, for bounds);
    ``stacked`` states memory that fits two by two but not all together exactly, as a process
    limit is always stated: one hole of the classes whose mix may not fit, its stacks the sets
    that do (its walk may pass its limit where the hole joins long chains of exclusions)."""
    holders = [_holders(spec, members) for members in classes]
    load = loads(spec, classes)
    crowded = _load_pairs(load)
    limits = [None if limit < 0 else limit for limit in memory_per_gpu(spec.cluster.gpu_memory_gb).tolist()]
    graphs: list[ApartGraph] = []
    index: dict[tuple[frozenset[tuple[int, int]], tuple[int, ...]], int] = {}
    graph_of = np.zeros(spec.cluster.num_nodes, dtype=np.int64)
    kinds = _node_kinds(limits, reach)
    for (limit, here), nodes in sorted(kinds.items(), key=lambda item: item[1][0]):
        present = [c for c, there in enumerate(here) if there]
        pairs = frozenset((a, b) for a, b in exclusive | separate | crowded | _memory_pairs(holders, exclusive, limit) if here[a] and here[b])
        gpus = "GPUs of unknown memory" if limit is None else f"{limit / 1024:g} GB GPUs"
        try:
            misfit = () if relaxed else _misfit_in_pairs(holders, load, present, pairs, limit)
        except _TooManyStacks:
            return f"memory_gb, max_processes_per_hardware: more than {MAX_STACKS_CHECKED:,} sets of components that may share a GPU to check (MAX_STACKS_CHECKED)"
        limited = any(load[c].limit is not None for c in present)
        if misfit and not limited and not stacked:
            return Misfit(misfit, f"memory_gb: {', '.join(classes[c][0] for c in misfit)} fit {gpus} two by two but not all together")
        # one hole of the classes whose mix may not fit, its stacks stating every mix exactly: with a
        # process limit every class's processes count, memory alone counts only its holders
        crowded_here = () if not misfit else tuple(c for c in present if limited or holders[c])
        key = (pairs, crowded_here)
        if key not in index:
            index[key] = len(graphs)
            graphs.append(apart_graph(len(classes), pairs, crowded_here, _stack_fits(holders, load, limit)))
        graph_of[nodes] = index[key]
    return tuple(graphs), graph_of


def _stack_fits(holders: Sequence[Holders], load: Sequence[Load], limit: int | None) -> Fits:
    """Whether classes fit one GPU of ``limit`` MB together: memory and process limits."""

    def fits(stack: tuple[int, ...]) -> bool:
        return _fits(holders, stack, limit) and _within(load, stack)

    return fits


def _holders(spec: PlacementSpec, members: Sequence[str]) -> Holders:
    """The memory holders of a class: every component whose rule owner is a member."""
    return tuple(
        (component.name, memory)
        for name in members
        for component in spec.components.values()
        if component.rule_owner == name and (memory := component.constraints.memory) is not None
    )


def _fits(holders: Sequence[Holders], stack: Sequence[int], limit: int | None) -> bool:
    """Whether the classes of ``stack`` fit one GPU of ``limit`` MB whichever of them runs."""
    memories = [memory for c in stack for _, memory in holders[c]]
    if limit is None or not memories:
        return True
    idle = sum(megabytes(m.idle) for m in memories)
    return idle + max(megabytes(m.active) - megabytes(m.idle) for m in memories) <= limit


def _memory_pairs(holders: Sequence[Holders], exclusive: frozenset[tuple[int, int]], limit: int | None) -> set[tuple[int, int]]:
    """Pairs of classes, not already exclusive, whose memory does not fit one GPU together."""
    with_memory = [c for c, held in enumerate(holders) if held]
    return {(a, b) for a, b in combinations(with_memory, 2) if (a, b) not in exclusive and not _fits(holders, (a, b), limit)}


def _load_pairs(load: Sequence[Load]) -> set[tuple[int, int]]:
    """Pairs of classes whose processes on one GPU pass a limit of either (on every node); only
    pairs with a limited class can, so the scan starts from those."""
    limited = [c for c, held in enumerate(load) if held.limit is not None]
    return {(min(a, b), max(a, b)) for a in limited for b in range(len(load)) if a != b and not _within(load, (a, b))}


def _misfit_in_pairs(
    holders: Sequence[Holders], load: Sequence[Load], present: Sequence[int], pairs: frozenset[tuple[int, int]], limit: int | None
) -> tuple[int, ...]:
    """A set of three or more ``present`` classes that may share two by two but does not fit
    together (memory of ``limit`` MB, or a process limit), or (); raises ``_TooManyStacks`` past
    ``MAX_STACKS_CHECKED`` sets. Only sets holding memory (on GPUs of known memory) or a limited
    class can fail, so the search grows from those."""
    limited = any(load[c].limit is not None for c in present)
    candidates = [c for c in present if limited or (limit is not None and holders[c])]
    if len(candidates) < 3:
        return ()
    checked = 0

    def grow(stack: tuple[int, ...], rest: Sequence[int]) -> tuple[int, ...]:
        nonlocal checked
        for k, c in enumerate(rest):
            if any((min(c, s), max(c, s)) in pairs for s in stack):
                continue
            bigger = (*stack, c)
            if len(bigger) >= 3:
                checked += 1
                if checked > MAX_STACKS_CHECKED:
                    raise _TooManyStacks
                if not (_fits(holders, bigger, limit) and _within(load, bigger)):
                    return bigger
            found = grow(bigger, rest[k + 1:])
            if found:
                return found
        return ()

    return grow((), candidates)


class _TooManyStacks(Exception):
    """More sets than ``MAX_STACKS_CHECKED`` share pairwise."""

