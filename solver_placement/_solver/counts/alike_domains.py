"""Alike domains: the dropped spec's node contents moved between alike nodes so every domain holds whole units.

Past ``DROPPED_FIRST_PAST`` domain values the spec is counted with its domain rules dropped
(``dropped_domains.py``), a model the size of the node shapes. Its layout gives a shape's
patterns to the shape's nodes in rank order, so where the counted units do not fill each domain
exactly they are cut at its edges (``topology overlaps:4096:0``: pipelines of 3 nodes in zones
of 32; ``topology mixes:16384:1``: pipelines of 4 nodes after a rack of 5 free nodes), and the
spec as stated is a model per domain, too large for thousands of racks.

Yet the dropped counts need not move to keep the domains, only the nodes they land on: nodes
alike in everything the spec reads (GPUs, memory, the labels no counted rule names, each counted
component's candidate GPUs, the GPUs of components placed before) are interchangeable, so
moving a node's whole content to an alike node changes no rule but the domains and no term of
the objective but ``topology`` (and ``contiguity``/``changes``, which the value below reads).
Domains are counted together by *cells* (the nodes with one value of every rule's label): a
cell holding a multiple of ``q`` nodes of a content whose member has ``c`` processes a node,
with ``q * c`` a multiple of every unit of that member, holds whole units, and every domain
(a union of cells) then does too, once each member numbers its processes cell by cell. The
cells take their multiples in rank order, alike cells alike, so the work is one pass over the
nodes whatever the number of racks.

That is a sufficient construction, not a search: where a content's nodes are no multiple of
its ``q``, or the cells have no room for them, nothing is moved (the spec is then counted as
stated, as before). Where it succeeds, the answer is the dropped spec's counts, so its value
meets the dropped spec's bound when no unit spans a domain, and it is proven.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from math import gcd, lcm

import numpy as np

from solver_placement._arrays import row_groups
from solver_placement._solver.answer import Answer
from solver_placement._solver.assignment import Assignment, window_ranks
from solver_placement._solver.counts.preferred import counted_components
from solver_placement._solver.labels import label_values
from solver_placement._specification.placement_spec import PlacementSpec


@dataclass(frozen=True)
class _Rule:
    """One domain rule of a counted component: ``member`` keeps units of ``size`` consecutive
    processes inside one value of ``label``."""

    member: str
    label: str
    size: int


def arranged(spec: PlacementSpec, answer: Answer) -> Answer | None:
    """``answer`` (the dropped spec's) with node contents moved between alike nodes so every
    domain rule of the counted components holds whole units, each ruled member numbered cell by
    cell; None where the construction does not apply (hardware other than GPUs, a process over
    two nodes, a content whose nodes the cells cannot hold in whole units)."""
    cluster = spec.cluster
    if answer.assignments is None:
        return None
    rules = _rules(spec)
    if not rules:
        return None
    taken = answer.assignments
    start = np.concatenate(([0], np.cumsum(cluster.gpus_per_node)[:-1])).astype(np.int64)
    per_node = {}
    counted = counted_components(spec)
    for name in sorted(set(taken) & set(counted)):
        node_of = _process_nodes(spec, taken[name])
        if node_of is None or np.any(taken[name].hardware >= cluster.num_accelerators):  # GPUs only: robots and nodes have no local ids here
            return None
        per_node[name] = np.bincount(node_of, minlength=cluster.num_nodes)
    members = sorted({rule.member for rule in rules})
    if any(member not in taken for member in members):
        return None
    for member in members:
        tp = spec.components[member].constraints.tensor_parallel_size
        if np.any(per_node[member] % tp):
            return None  # renumbering would cut a tensor-parallel group
    labels = sorted({rule.label for rule in rules})
    cell = _cells(cluster.num_nodes, [label_values(cluster, label) for label in labels])
    target = _moves(_alike(spec, taken, start, labels), cell, np.column_stack([per_node[m] for m in members]), [sorted({rule.size for rule in rules if rule.member == m}) for m in members])
    if target is None:
        return None
    position = _cell_positions(cell)
    moved = {name: _moved(spec, name, assignment, target, start, position if name in members else None) if name in counted else assignment for name, assignment in taken.items()}
    return replace(answer, assignments=moved)


def _rules(spec: PlacementSpec) -> list[_Rule]:
    """The domain rules of the counted components (required or preferred) whose units span
    more than one process."""
    found = []
    for name, component in counted_components(spec).items():
        rules = component.constraints
        if component.rule_owner != name:
            continue
        for rule in rules.topology:
            size = rules.tensor_parallel_size * (rules.pipeline_parallel_size if rule.group == "pipeline_parallel" else 1)
            if size > 1:
                found.append(_Rule(name, rule.label, size))
    return found


def _process_nodes(spec: PlacementSpec, assignment: Assignment) -> np.ndarray | None:
    """Per process, its node; None where a process holds items of two nodes."""
    hw_node = spec.cluster.hw_node
    first = hw_node[assignment.hardware[assignment.indptr[:-1]]] if assignment.num_processes else np.zeros(0, dtype=np.int64)
    every = np.repeat(first, np.diff(assignment.indptr))
    return first if np.array_equal(every, hw_node[assignment.hardware]) else None


def _cells(num_nodes: int, keys: list[np.ndarray]) -> np.ndarray:
    """Per node, its cell: one index per distinct value of every rule's label together."""
    if not keys:
        return np.zeros(num_nodes, dtype=np.int64)
    return np.unique(np.stack(keys, axis=1), axis=0, return_inverse=True)[1].reshape(-1).astype(np.int64)


def _cell_positions(cell: np.ndarray) -> np.ndarray:
    """Per node, its position when nodes are taken cell by cell (cells where their first node
    is), in rank order within a cell."""
    _, first = np.unique(cell, return_index=True)
    order = np.lexsort((np.arange(cell.size), first[cell]))
    position = np.empty(cell.size, dtype=np.int64)
    position[order] = np.arange(cell.size)
    return position


def _alike(spec: PlacementSpec, taken: Mapping[str, Assignment], start: np.ndarray, ruled: list[str]) -> np.ndarray:
    """Per node, an index of its kind: nodes of one kind are alike in everything the spec reads
    but the ruled labels (GPUs, their type, model and memory, a stated GPU topology, the labels
    other rules name, each counted component's candidate GPUs; a node holding items of a
    component not counted is a kind of its own, as it stays put)."""
    cluster = spec.cluster
    widest = int(cluster.gpus_per_node.max(initial=0))
    gpus = cluster.num_accelerators  # GPUs come first among the physical ids
    local = np.arange(gpus, dtype=np.int64) - start[cluster.hw_node[:gpus]]
    columns = [cluster.gpus_per_node.astype(np.int64)]
    counted = counted_components(spec)
    for name in sorted(spec.components):
        mask = np.zeros((cluster.num_nodes, widest), dtype=np.int64)
        if name in counted:
            request = spec.requests[name]
            window = request.cand_hw[request.indptr[0]:request.indptr[1]] if request.shared_window else request.cand_hw
        else:
            window = taken[name].hardware if name in taken else spec.requests[name].cand_hw
            columns.append(np.where(np.bincount(cluster.hw_node[window], minlength=cluster.num_nodes) > 0, np.arange(cluster.num_nodes), -1))  # stays put
        window = window[window < gpus]
        mask[cluster.hw_node[window], local[window]] = 1
        columns += list(mask.T)
    memory = np.array([-1.0 if m is None else float(m) for m in cluster.gpu_memory_gb])
    columns.append(np.unique(memory, return_inverse=True)[1].reshape(-1))
    columns.append(np.array([-1 if t is None else n for n, t in enumerate(cluster.gpu_topology)], dtype=np.int64))  # a stated GPU topology: stays put
    columns.append(np.unique(np.array([f"{t}|{m}" for t, m in zip(cluster.accelerator_types, cluster.accelerator_models)]), return_inverse=True)[1].reshape(-1))
    others = sorted({rule.label for component in spec.components.values() for rule in component.constraints.topology} - set(ruled))  # read by rules of components placed before
    columns += [label_values(cluster, label) for label in others]
    kind = np.empty(cluster.num_nodes, dtype=np.int64)
    for k, nodes in enumerate(row_groups(np.column_stack(columns))):
        kind[nodes] = k
    return kind


def _moves(kind: np.ndarray, cell: np.ndarray, held: np.ndarray, sizes: list[list[int]]) -> np.ndarray | None:
    """Per node, the node its content moves to (a node of its kind), or None where the cells
    cannot hold each content in whole units. ``held``: per node, each ruled member's processes;
    a content (a row of ``held``) that has some takes its cells in multiples of its quantum
    (the fewest nodes holding whole units of every rule), cells in rank order of their first
    node, the heaviest content first; the rest of a kind's nodes keep their order."""
    target = np.empty(kind.size, dtype=np.int64)
    _, first = np.unique(cell, return_index=True)
    for nodes in row_groups(kind[:, None]):
        contents = row_groups(held[nodes])
        ruled = [group for group in contents if held[nodes[group[0]]].any()]
        ruled.sort(key=lambda group: tuple(-held[nodes[group[0]]]))
        free = nodes[np.lexsort((nodes, first[cell[nodes]]))]  # this kind's nodes, cell by cell
        by_cell = row_groups(cell[free][:, None])
        room = [free[group] for group in by_cell]
        used = [0] * len(room)
        chosen: list[np.ndarray] = []
        for group in ruled:
            quantum = _quantum(held[nodes[group[0]]], sizes)
            left, places = group.size, []
            if left % quantum:
                return None
            for i, spots in enumerate(room):
                take = min(left, (spots.size - used[i]) // quantum * quantum)
                places.append(spots[used[i]:used[i] + take])
                used[i] += take
                left -= take
                if not left:
                    break
            if left:
                return None
            target[nodes[group]] = np.concatenate(places)
            chosen += places
        rest = np.setdiff1d(nodes, np.concatenate(chosen) if chosen else np.zeros(0, dtype=np.int64))
        sources = np.setdiff1d(nodes, np.concatenate([nodes[group] for group in ruled]) if ruled else np.zeros(0, dtype=np.int64))
        target[sources] = rest
    return target


def _quantum(row: np.ndarray, sizes: list[list[int]]) -> int:
    """The fewest nodes of a content holding ``row[m]`` processes of each ruled member whose
    processes make whole units of every size of that member."""
    quantum = 1
    for count, units in zip(row.tolist(), sizes):
        for size in units:
            if count:
                quantum = lcm(quantum, size // gcd(size, count))
    return quantum


def _moved(spec: PlacementSpec, name: str, assignment: Assignment, target: np.ndarray, start: np.ndarray, position: np.ndarray | None) -> Assignment:
    """``assignment`` with each node's items moved to its target node (same local ids), its
    processes renumbered cell by cell where ``position`` is given (stable within a node), and
    its items' ranks in its window read again."""
    hw_node = spec.cluster.hw_node
    nodes = hw_node[assignment.hardware]
    hardware = start[target[nodes]] + assignment.hardware - start[nodes]
    indptr = assignment.indptr
    if position is not None and assignment.num_processes:
        order = np.argsort(position[target[nodes[indptr[:-1]]]], kind="stable")
        lengths = np.diff(indptr)[order]
        hardware = np.concatenate([hardware[indptr[p]:indptr[p + 1]] for p in order.tolist()]) if np.any(lengths != 1) else hardware[order]
        indptr = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    request = spec.requests[name]
    ranks = window_ranks(request.cand_hw, request.cand_rank, indptr, hardware, int(request.stride or 1), assignment.num_hardware)
    return Assignment(indptr=indptr, hardware=hardware, ranks=ranks, num_hardware=assignment.num_hardware)


__all__ = ["arranged"]
