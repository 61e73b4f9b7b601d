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

from solver_placement._arrays import unique_rows
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

    The loads are per GPU, only where a load may keep a stack of classes out (a limit is in
    play, or memory of the rank strings meets memory of a class on a GPU of known memory), as
    arrays over those GPUs in id order (node by node, local ids ascending): ``gpu_node``,
    ``gpu_local`` and ``gpu_load`` (its index in ``distinct``, each load made once). Arrays, not
    a mapping per GPU: every GPU of a view of several kinds carries its own memory
    (``item_memory.py``), 524,288 of them on 65,536 nodes, where a dict entry and a Python step
    per GPU took seconds. ``joined`` chains the parts of classes that compete for such a GPU
    although no rule keeps them apart (``typed.beside_joins``), so the count model counts them
    in one part (``patterns.parts``) and the layout gives them their GPUs together
    (``layout.py``).
    """

    gpu_node: np.ndarray
    gpu_local: np.ndarray
    gpu_load: np.ndarray
    distinct: tuple[FixedLoad, ...]
    num_nodes: int  # the cluster's (:attr:`table` has a row per node)
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
        the node carries one (the node needs no check by GPU for it). Asked once per group of
        nodes alike (:meth:`table`), not per node."""
        first, last = np.searchsorted(self.gpu_node, [node, node + 1]).tolist()
        if first == last:
            return ()
        found: list[FixedLoad | None] = [None] * capacity
        for local, load in zip(self.gpu_local[first:last].tolist(), self.gpu_load[first:last].tolist(), strict=True):
            found[local] = self.distinct[load]
        return tuple(found)

    @cached_property
    def table(self) -> np.ndarray:
        """Per node and local id, the index of its GPU's load in ``distinct`` (-1: none): columns
        by which nodes loaded alike are grouped like any other (``patterns.py``,
        ``ranked_runs.py``, ``layout.py``, ``kept_node.py``), since :meth:`on_node` reads nothing
        else. Made once, read by every part."""
        found = np.full((self.num_nodes, int(self.gpu_local.max(initial=-1)) + 1), -1, dtype=np.int64)
        found[self.gpu_node, self.gpu_local] = self.gpu_load
        return found

    @cached_property
    def loaded_nodes(self) -> frozenset[int]:
        """The nodes with a loaded GPU."""
        return frozenset(np.unique(self.gpu_node).tolist())


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
    pairs, which = unique_rows(np.stack([inverse, item_mb[gpus]], axis=1))  # each (kind, memory) made once
    made = tuple(FixedLoad(kinds[kind][0], kinds[kind][1], kinds[kind][2], None if mb < 0 else mb) for kind, mb in pairs.tolist())
    return Beside(cluster.hw_node[gpus], cluster.hw_local[gpus], which, made, cluster.num_nodes, processes, limits, memory, frozenset())


__all__ = ["Beside", "FixedLoad", "fixed_loads"]
