"""Required topology domains of a count class, as counts: each domain holds whole units of groups.

A required ``topology`` rule keeps every unit (a tensor-parallel group, or a pipeline of
``tp * pp`` processes) of one component inside one value of a node label. In the count model a
class is counted in groups of ``width`` GPUs, each on one node, and every member (the root and
the components collocated with it) holds each GPU of the class once, in the class's node order.
So a unit of ``size`` GPUs of any member spans ``size / width`` of the class's groups in that
order, and the rule holds exactly when every value of the label holds a multiple of
``size / gcd(size, width)`` groups (necessary: a domain's GPUs are whole units of that member;
sufficient: the layout numbers processes domain by domain, so units start where domains do).
A group on one node lies in one value of every label, so a unit of one group needs nothing.

Several rules of a class make *levels*, one per distinct multiple. They are exact together
when the multiples divide each other (each unit of a smaller multiple then lies inside one unit
of every larger one, so it also keeps their labels): each level's key is its labels and those of
every coarser level, and nodes are numbered by the coarsest key first. Multiples that do not
divide each other (say a root's pipelines of 2 groups in a rack and a follower's of 3 in a
zone) make units that overlap, and no one order of the class's GPUs keeps both; but each
member numbers its own processes, so each member gets its own chain of levels (one member's
multiples always divide each other: its tensor-parallel group divides its pipeline) and its
own order. That is exact too: every domain of every member's chain holds whole units of that
member (necessary), and numbering each member domain by domain keeps its units inside them
(sufficient); the class's groups are then whole units of every multiple (their least common
multiple, ``problem.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from math import gcd

import numpy as np

from solver_placement._solver.labels import label_values
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec


@dataclass(frozen=True)
class DomainLevel:
    """Each value of ``key`` (per node, an index) holds a multiple of ``multiple`` groups of the
    class; ``rules`` names the rules it states, for messages."""

    multiple: int
    key: np.ndarray
    rules: tuple[str, ...]
    member: str | None = None  # the member whose order it shapes when members have chains of their own; None: every member


@dataclass(frozen=True)
class PricedLevel:
    """A preferred domain of ``member`` its units may span: per node its domain (``key``), a
    group of the class is ``scale`` slots and a unit ``modulus`` slots; ``reach[d]`` are the
    remainders domain ``d`` may leave (0 first), ``groupings`` the minimal sets of remainders
    that close whole units (``zero_sums.py``); ``rule`` names it, for messages."""

    member: str
    scale: int
    modulus: int
    key: np.ndarray
    reach: tuple[tuple[int, ...], ...]
    groupings: tuple[tuple[int, ...], ...]
    rule: str
    ordered: bool = True  # the member numbers its processes by this level's sets (else its term is a bound)


@dataclass(frozen=True)
class JointLevel:
    """``member``'s preferred pipeline domains on several labels, stated together: per node its
    cell (``key``); a group of the class holds ``per_group`` of the member's tensor-parallel
    groups (of ``part_size`` processes), a pipeline ``parts`` of them; ``boxes[b]`` are the cells
    a box holds and ``costs[b]`` what each pipeline counted in it costs (domains beyond the
    first, summed over the preferred labels); ``rules`` names the rules, for messages."""

    member: str
    key: np.ndarray
    per_group: int
    part_size: int
    parts: int
    boxes: tuple[tuple[int, ...], ...]
    costs: tuple[int, ...]
    rules: tuple[str, ...]


def domain_levels(spec: PlacementSpec, requests: Mapping[str, ComponentRequest], members: tuple[str, ...], width: int, own: bool = False) -> tuple[DomainLevel, ...]:
    """The levels of the required domains of a class's ``members`` (coarsest first), counted in
    its groups of ``width`` GPUs: one chain for the class when their multiples divide each
    other, else (or with ``own``: a member's preferred domain is priced, ``spanning.py``) one
    chain per member (its ``member`` set)."""
    found = {member: _member_rules(spec, requests, member, width) for member in members}
    shared: dict[int, list[tuple[str, np.ndarray]]] = {}
    for rules in found.values():
        for multiple, named in rules.items():
            shared.setdefault(multiple, []).extend(named)
    if _nested(shared) and not own:
        return _chain(shared, None)
    return tuple(level for member, rules in found.items() for level in _chain(rules, member))


def _member_rules(spec: PlacementSpec, requests: Mapping[str, ComponentRequest], member: str, width: int) -> dict[int, list[tuple[str, np.ndarray]]]:
    """A member's required rules by the multiple of ``width``-GPU groups each unit spans (those
    of more than one group), each named with its label's value per node."""
    rules = spec.components[member].constraints
    amount = int(requests[member].amount[0])
    found: dict[int, list[tuple[str, np.ndarray]]] = {}
    for rule in rules.topology:
        if not rule.required:
            continue
        size = rules.tensor_parallel_size * (rules.pipeline_parallel_size if rule.group == "pipeline_parallel" else 1) * amount
        multiple = size // gcd(size, width)
        if multiple > 1:
            found.setdefault(multiple, []).append((f"{member}: topology.{rule.group}.{rule.label}", label_values(spec.cluster, rule.label)))
    return found


def _nested(found: Mapping[int, list[tuple[str, np.ndarray]]]) -> bool:
    """Whether the multiples divide each other (one chain orders every member)."""
    multiples = sorted(found, reverse=True)
    return all(coarse % fine == 0 for coarse, fine in zip(multiples, multiples[1:]))


def _chain(found: Mapping[int, list[tuple[str, np.ndarray]]], member: str | None) -> tuple[DomainLevel, ...]:
    """Nested levels, coarsest first, each keyed by its labels and those of every coarser one."""
    levels = []
    keys: list[np.ndarray] = []
    names: list[str] = []
    for multiple in sorted(found, reverse=True):
        keys += [values for _, values in found[multiple]]
        names += [name for name, _ in found[multiple]]
        combined = np.unique(np.stack(keys, axis=1), axis=0, return_inverse=True)[1].reshape(-1)
        levels.append(DomainLevel(multiple, combined.astype(np.int64), tuple(names), member))
    return tuple(levels)


def member_levels(levels: tuple[DomainLevel, ...], member: str) -> tuple[DomainLevel, ...]:
    """The levels that shape ``member``'s order: the class's chain, or the member's own."""
    return tuple(level for level in levels if level.member in (None, member))


def node_order(levels: tuple[DomainLevel, ...], num_nodes: int) -> np.ndarray:
    """Per node, its position in the order a member numbers its processes (``levels``: those of
    :func:`member_levels`): node rank, or with levels, domain by domain from the coarsest level
    (each domain where its first node is), so every value of every level's key holds
    consecutive processes."""
    if not levels:
        return np.arange(num_nodes)
    columns = [np.arange(num_nodes)]
    for level in reversed(levels):  # np.lexsort sorts by its last key first
        _, first = np.unique(level.key, return_index=True)
        columns.append(first[level.key])
    order = np.lexsort(tuple(columns))
    position = np.empty(num_nodes, dtype=np.int64)
    position[order] = np.arange(num_nodes)
    return position


__all__ = ["DomainLevel", "JointLevel", "PricedLevel", "domain_levels", "member_levels", "node_order"]
