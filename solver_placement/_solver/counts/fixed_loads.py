"""Rank-string processes as a fixed load on their GPUs: the memory they hold, the processes they
add to a limit, and the limits they bring.

A rank-string component's processes sit on GPUs it names, so what they put on each GPU is known
before any choice: with ``memory_gb`` they hold memory there (``rules/memory.py``: while one
process runs with its active memory, every other keeps its idle memory, every such mix fits the
GPU, in whole megabytes), their processes count towards any ``max_processes_per_hardware`` of a
component on that GPU, and a limited rank string bounds every process that joins it
(``rules/capacity.py``'s ``build``: the fixed load plus the free takers, shared-rule copies
counted, at most the limit on each item a limited component uses). So a GPU holding rank-string
processes admits fewer stacks of classes than one without, and two classes that each fit beside
the rank string may not fit there together: pairs cannot state that, stacks can. This module
says which GPUs carry such a load (:class:`FixedLoad`) and whether a stack of classes fits beside
one (:meth:`Beside.fits`); ``typed.py`` tells a node's GPUs apart by it and gives each GPU a stack
that fits. The fit only ever gets harder as classes join (more memory, more processes, more
limits), so the stacks that fit are closed under removing a class.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from solver_placement._constants import ACCELERATOR
from solver_placement._solver.counts.item_memory import item_memory_mb, stated_per_item
from solver_placement._solver.rules.memory import megabytes
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec

#: A memory holder on one GPU: its processes there, its active and its idle memory (MB).
Held = tuple[int, int, int]


@dataclass(frozen=True)
class FixedLoad:
    """What the rank strings put on one GPU: ``processes`` (each shared-rule copy counted, as the
    capacity rule's fixed load), the lowest ``max_processes_per_hardware`` among them (None: no
    limit), their ``memory`` holders (sorted) and the GPU's memory in MB (None: unknown, not
    checked)."""

    processes: int
    limit: int | None
    memory: tuple[Held, ...]
    gpu_mb: int | None

    def key(self) -> tuple[int, int, tuple[Held, ...], int]:
        """A sort key (None as -1), so GPU types sort the same way on every run."""
        return self.processes, -1 if self.limit is None else self.limit, self.memory, -1 if self.gpu_mb is None else self.gpu_mb


@dataclass(frozen=True)
class Beside:
    """The fixed loads of a count problem and what each class adds to one of its GPUs.

    ``loads`` are per GPU (node, local id), only where a load may keep a stack of classes out (a limit is
    in play, or memory of the rank strings meets memory of a class on a GPU of known memory).
    ``joined`` chains the parts of classes that compete for such a GPU although no rule keeps
    them apart (``typed.beside_joins``), so the count model counts them in one part
    (``patterns.parts``) and the layout gives them their GPUs together (``layout.py``).
    """

    loads: Mapping[tuple[int, int], FixedLoad]
    processes: tuple[int, ...]  # per class: processes on each of its GPUs (one per component a member owns)
    limits: tuple[int | None, ...]  # per class: the lowest limit among those components
    memory: tuple[tuple[tuple[int, int], ...], ...]  # per class: (active MB, idle MB) of each holder
    joined: frozenset[tuple[int, int]]

    def fits(self, load: FixedLoad, classes: Iterable[int]) -> bool:
        """Whether one GPU of each class of ``classes`` (class indices) fits beside ``load``:
        every limit in play (the rank strings' and each class's) holds the GPU's processes, and
        every mix of running and idle memory fits the GPU, as the flat model counts them."""
        chosen = tuple(classes)
        total = load.processes + sum(self.processes[c] for c in chosen)
        caps = [cap for cap in (load.limit, *(self.limits[c] for c in chosen)) if cap is not None]
        if caps and total > min(caps):
            return False
        holders = [*load.memory, *((1, active, idle) for c in chosen for active, idle in self.memory[c])]
        if load.gpu_mb is None or not holders:
            return True
        idle = sum(count * idle_mb for count, _, idle_mb in holders)
        return idle + max(count * (active - idle_mb) for count, active, idle_mb in holders) <= load.gpu_mb

    def on_node(self, node: int, capacity: int) -> tuple[FixedLoad | None, ...]:
        """Per local id of ``node`` (``capacity`` GPUs), its load or None; ``()`` when no GPU of
        the node carries one (the node needs no check by GPU for it)."""
        key = (node, capacity)
        if key not in self._per_gpu:  # asked once a part and shape, node by node: each node's tuple built once
            found: list[FixedLoad | None] = [None] * capacity
            held = False
            for gpu, load in self._by_node.get(node, {}).items():  # local ids ascending: those past the capacity end it
                if gpu >= capacity:
                    break
                found[gpu], held = load, True
            self._per_gpu[key] = tuple(found) if held else ()
        return self._per_gpu[key]

    @cached_property
    def _per_gpu(self) -> dict[tuple[int, int], tuple[FixedLoad | None, ...]]:
        """:meth:`on_node`'s answers, per node and capacity (``kinds memory:423:11``: 1,688 of
        them, 0.04 s built each time)."""
        return {}

    @cached_property
    def _by_node(self) -> dict[int, dict[int, FixedLoad]]:
        """``loads`` per node, then per local id ascending: asked node by node (every node of a
        shape's key, ``patterns.py``), where one look-up per GPU of the whole map was most of the
        time."""
        found: dict[int, dict[int, FixedLoad]] = {}
        for (node, gpu), load in sorted(self.loads.items(), key=lambda item: item[0]):
            found.setdefault(node, {})[gpu] = load
        return found


def fixed_loads(spec: PlacementSpec, requests: Mapping[str, ComponentRequest], classes: Iterable[Iterable[str]]) -> Beside | None:
    """The :class:`Beside` of a count problem whose classes have the members ``classes`` (its
    ``joined`` left empty: ``problem.py`` says which classes compete, from the graphs); None
    when no rank-string GPU carries a load that matters."""
    members = [tuple(names) for names in classes]
    cluster = spec.cluster
    owned: dict[str, list[tuple[int | None, tuple[int, int] | None]]] = {}
    for component in spec.components.values():
        need = component.constraints.memory
        owned.setdefault(component.rule_owner, []).append(
            (component.constraints.max_processes_per_hardware, None if need is None else (megabytes(need.active), megabytes(need.idle)))
        )
    processes = tuple(sum(len(owned.get(m, [])) for m in names) for names in members)
    caps = [[cap for m in names for cap, _ in owned.get(m, []) if cap is not None] for names in members]
    limits = tuple(min(found) if found else None for found in caps)
    memory = tuple(tuple(held for m in names for _, held in owned.get(m, []) if held is not None) for names in members)
    class_limited, class_memory = any(cap is not None for cap in limits), any(memory)
    size = cluster.num_hardware
    on = np.zeros(size, dtype=np.int64)  # rank-string processes per GPU, each shared-rule copy counted
    cap = np.full(size, np.iinfo(np.int64).max, dtype=np.int64)  # the lowest limit among them
    holders: list[tuple[np.ndarray, int, int]] = []  # per memory holder: its processes per GPU, active and idle MB
    for name, request in requests.items():
        if not request.determined:
            continue
        count = np.bincount(request.cand_hw, minlength=size)
        for limit, held in owned.get(name, []):
            on += count
            if limit is not None:
                cap[count > 0] = np.minimum(cap[count > 0], limit)
            if held is not None:
                holders.append((count, *held))
    item_mb = item_memory_mb(cluster)  # per GPU: its node's, or on a view of several kinds its own (``item_memory.py``)
    memory_known = item_mb >= 0
    holding = np.zeros(size, dtype=bool)
    for count, _, _ in holders:
        holding |= count > 0
    limited = cap < np.iinfo(np.int64).max
    is_gpu = cluster.hw_kind == (cluster.kinds.index(ACCELERATOR) if ACCELERATOR in cluster.kinds else -1)  # classes take GPUs only
    per_item = class_memory & (stated_per_item(cluster) >= 0)  # a GPU of a view of several kinds: its memory is a load of its own
    matters = is_gpu & (((on > 0) & (limited | class_limited | (memory_known & holding & class_memory))) | per_item)  # else nothing a class could break there
    gpus = np.flatnonzero(matters)
    if not gpus.size:
        return None
    columns = [on[gpus], np.where(limited[gpus], cap[gpus], -1), *(count[gpus] for count, _, _ in holders)]
    rows, inverse = unique_rows(np.stack(columns, axis=1))  # GPUs loaded alike, found once
    kinds = [(row[0], None if row[1] < 0 else row[1], tuple(sorted((n, active, idle) for n, (_, active, idle) in zip(row[2:], holders) if n)))
             for row in rows.tolist()]  # fmt: skip
    # Each (kind, memory) made once and every GPU's arrays read as lists: one Python step per GPU
    # (every GPU of a view of several kinds carries its own memory: 6,761 on 613 nodes).
    pairs, which = unique_rows(np.stack([inverse, item_mb[gpus]], axis=1))
    made = [FixedLoad(kinds[kind][0], kinds[kind][1], kinds[kind][2], None if mb < 0 else mb) for kind, mb in pairs.tolist()]
    loads = {(node, local): made[at] for node, local, at in zip(cluster.hw_node[gpus].tolist(), cluster.hw_local[gpus].tolist(), which.tolist())}
    return Beside(loads, processes, limits, memory, frozenset())


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(rows, axis=0, return_inverse=True)`` of a 2-D integer array (the distinct
    rows in the same lexicographic order, each row's position among them), by one lexsort:
    ``np.unique`` sorts the rows as records, 4.5 ms for the 4,904 loaded GPUs of ``kinds
    memory:613:5`` where this takes a tenth of it."""
    order = np.lexsort(rows.T[::-1])
    ordered = rows[order]
    starts = np.ones(len(rows), dtype=bool)
    starts[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    inverse = np.empty(len(rows), dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    return ordered[starts], inverse


__all__ = ["Beside", "FixedLoad", "fixed_loads", "unique_rows"]
