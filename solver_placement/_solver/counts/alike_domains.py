"""Alike domains: the dropped spec's node contents moved between alike nodes so every domain holds whole units.

Past ``DROPPED_FIRST_PAST`` domain values the spec is counted with its domain rules dropped
(``dropped_domains.py``), a model the size of the node shapes. Its layout gives a shape's
patterns to the shape's nodes in rank order, so where the counted units do not fill each domain
exactly they are cut at its edges (``topology overlaps:4096:0``: pipelines of 3 nodes in zones
of 32; ``topology mixes:16384:1``: pipelines of 4 nodes after a rack of 5 free nodes), and the
spec as stated is a model per domain, too large for thousands of racks.

Yet the dropped counts need not move to keep the domains, only the nodes they land on: nodes
alike in everything the spec reads (GPUs, memory, the labels rules of components placed first
name, each counted component's candidate GPUs, the GPUs of components placed first: the
signature re-planning uses, ``signatures.py``) are interchangeable, so
moving a node's whole content to an alike node changes no rule but the domains and no term of
the objective but ``topology`` (and ``contiguity``/``changes``, which the value below reads).
A domain holding a multiple of ``q`` nodes of a content whose member has ``c`` processes a
node, with ``q * c`` a multiple of the units of that member's rules on the domain's label,
holds whole units once each member numbers its processes domain by domain (``node_order``).
Labels that nest (racks in zones) are levels filled bottom up, each a multiple of its own
rules' quantum (``domain_fill.py``: pipelines of 5 nodes in racks of 8 beside pipelines of 2 in
zones of 4 racks, ``topology overlaps:4096:2``); labels that cross are filled by their cells
(one value of every label together), each a multiple of every rule's quantum. Alike domains
have the same fills, found once, so the work is one pass over the nodes whatever the number of
racks.

That is a sufficient construction, not a search: where a content's nodes are no multiple of
its ``q``, or the domains have no room for them, nothing is moved (the spec is then counted as
stated, as before). Where it succeeds, the answer is the dropped spec's counts, so its value
meets the dropped spec's bound when no unit spans a domain, and it is proven.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import gcd, lcm

import numpy as np

from solver_placement._arrays import row_groups
from solver_placement._solver.answer import Answer
from solver_placement._solver.assignment import Assignment, window_ranks
from solver_placement._solver.counts.domain_fill import domain_tree, fill
from solver_placement._solver.counts.domain_levels import DomainLevel, node_order
from solver_placement._solver.counts.kinds import item_ids
from solver_placement._solver.counts.preferred import counted_components
from solver_placement._solver.counts.signatures import node_classes
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
    """``answer`` (the dropped spec's) with the counted components' node contents moved between
    alike nodes so every domain rule of theirs holds whole units, each ruled member numbered
    domain by domain; None where the construction does not apply (a process over two nodes, a
    member's tensor-parallel group over two, a content whose nodes the domains cannot hold in
    whole units)."""
    rules = _rules(spec)
    if answer.assignments is None or not rules:
        return None
    cluster = spec.cluster
    taken = answer.assignments
    counted = sorted(set(counted_components(spec)) & set(taken))
    members = sorted({rule.member for rule in rules})
    per_node: dict[str, np.ndarray] = {}
    for name in counted:
        node_of = _process_nodes(spec, taken[name])
        if node_of is None:
            return None
        per_node[name] = np.bincount(node_of, minlength=cluster.num_nodes)
    if any(member not in per_node or np.any(per_node[member] % spec.components[member].constraints.tensor_parallel_size) for member in members):
        return None  # renumbering would cut a tensor-parallel group
    levels, level_of = _levels({rule.label: label_values(cluster, rule.label) for rule in rules})
    read = sorted({rule.label for component in spec.components.values() for rule in component.constraints.topology} - set(level_of))  # rules of components placed first
    units = [sorted({(level_of[rule.label], rule.size) for rule in rules if rule.member == member}) for member in members]
    position = node_order(tuple(DomainLevel(1, key, ()) for key in levels), cluster.num_nodes)  # domain by domain, coarsest level first
    target = _moves(_kinds(node_classes(spec, read), cluster.num_nodes), levels, position, np.column_stack([per_node[member] for member in members]), units)
    if target is None:
        return None
    moved = {name: _moved(spec, name, taken[name], target, position if name in members else None) for name in counted}
    return replace(answer, assignments={**taken, **moved})


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
    return first if np.array_equal(np.repeat(first, np.diff(assignment.indptr)), hw_node[assignment.hardware]) else None


def _levels(keys: dict[str, np.ndarray]) -> tuple[list[np.ndarray], dict[str, int]]:
    """The ruled labels as levels of domains (per node, its domain), coarsest first, and each
    label's level: a level per label where they nest (each value of a finer label inside one
    value of every coarser one: racks in zones), else one level for all, their *cells* (one
    value of every label together), where every rule's units are kept whole."""
    names = sorted(keys, key=lambda label: (np.unique(keys[label]).size, label))
    if all(_inside(keys[fine], keys[coarse]) for coarse, fine in zip(names, names[1:])):
        return [keys[label] for label in names], {label: i for i, label in enumerate(names)}
    cells = np.unique(np.stack([keys[label] for label in names], axis=1), axis=0, return_inverse=True)[1].reshape(-1)
    return [cells.astype(np.int64)], dict.fromkeys(names, 0)


def _inside(fine: np.ndarray, coarse: np.ndarray) -> bool:
    """Whether each value of ``fine`` (label indices, ``labels.label_values``) lies inside one
    value of ``coarse``: every node's coarse value is the one the last node of its fine value
    has. One pass (distinct rows of the pairs took 0.04 s on 65,536 nodes)."""
    if not fine.size:
        return True
    last = np.zeros(int(fine.max()) + 1, dtype=coarse.dtype)
    last[fine] = coarse  # whichever node of a repeated index wins, a fine value over two coarse ones leaves a node unequal
    return bool(np.array_equal(last[fine], coarse))


def _kinds(classes: list[np.ndarray], num_nodes: int) -> np.ndarray:
    """Per node, the index of its class of alike nodes (``signatures.py``)."""
    kind = np.empty(num_nodes, dtype=np.int64)
    for k, nodes in enumerate(classes):
        kind[nodes] = k
    return kind


def _moves(kind: np.ndarray, levels: list[np.ndarray], position: np.ndarray, held: np.ndarray, units: list[list[tuple[int, int]]]) -> np.ndarray | None:
    """Per node, the node its content moves to (a node of its kind), or None where the domains
    cannot hold each content in whole units. ``held``: per node, each ruled member's processes;
    ``units``: per member, the (level, size) of each of its rules. A content (a row of ``held``)
    that has some takes its kind's nodes domain by domain in numbering order (``position``),
    each domain a multiple of the level's quantum (``domain_fill.py``), the heaviest content
    first; the other nodes of the kind take the other contents in rank order."""
    target = np.empty(kind.size, dtype=np.int64)
    for nodes in row_groups(kind[:, None]):
        ruled = [nodes[group] for group in row_groups(held[nodes]) if held[nodes[group[0]]].any()]
        ruled.sort(key=lambda sources: tuple(-held[sources[0]]))
        tree = domain_tree(nodes[np.argsort(position[nodes], kind="stable")], levels)
        for sources in ruled:
            placed = fill(tree, int(sources.size), [_quantum(held[sources[0]], units, level) for level in range(len(levels))])
            if placed is None:
                return None
            target[sources] = np.concatenate(placed)
        taken = np.concatenate([target[sources] for sources in ruled]) if ruled else np.zeros(0, dtype=np.int64)
        others = np.setdiff1d(nodes, np.concatenate(ruled)) if ruled else nodes
        target[others] = np.setdiff1d(nodes, taken)
    return target


def _quantum(row: np.ndarray, units: list[list[tuple[int, int]]], level: int) -> int:
    """The fewest nodes of a content holding ``row[m]`` processes of each ruled member ``m``
    whose processes make whole units of that member's rules at ``level``."""
    quantum = 1
    for count, rules in zip(row.tolist(), units):
        for at, size in rules if count else ():
            if at == level:
                quantum = lcm(quantum, size // gcd(size, count))
    return quantum


def _moved(spec: PlacementSpec, name: str, assignment: Assignment, target: np.ndarray, position: np.ndarray | None) -> Assignment:
    """``assignment`` with each node's items moved to its target node (same kinds and local
    ids), its processes renumbered domain by domain where ``position`` is given (stable within a
    node), and its items' ranks in its window read again."""
    cluster = spec.cluster
    nodes = target[cluster.hw_node[assignment.hardware]]
    hardware, indptr = item_ids(cluster, assignment.hardware, nodes), assignment.indptr
    if position is not None and assignment.num_processes:
        order = np.argsort(position[nodes[indptr[:-1]]], kind="stable")
        lengths = np.diff(indptr)[order]
        hardware = np.concatenate([hardware[indptr[p]:indptr[p + 1]] for p in order.tolist()]) if np.any(lengths != 1) else hardware[order]
        indptr = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    request = spec.requests[name]
    ranks = window_ranks(request.cand_hw, request.cand_rank, indptr, hardware, int(request.stride or 1), assignment.num_hardware)
    return Assignment(indptr=indptr, hardware=hardware, ranks=ranks, num_hardware=assignment.num_hardware)


__all__ = ["arranged"]
