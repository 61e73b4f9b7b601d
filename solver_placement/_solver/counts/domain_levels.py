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
divide each other make units that overlap; the count model declines them (the flat model
states them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from math import gcd

import numpy as np

from solver_placement._cluster.cluster import Cluster
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


def domain_levels(spec: PlacementSpec, requests: Mapping[str, ComponentRequest], members: tuple[str, ...], width: int) -> tuple[DomainLevel, ...] | str:
    """The levels of the required domains of a class's ``members`` (coarsest first), counted in
    its groups of ``width`` GPUs; why not, when their units overlap."""
    found: dict[int, list[tuple[str, np.ndarray]]] = {}
    for member in members:
        rules = spec.components[member].constraints
        amount = int(requests[member].amount[0])
        for rule in rules.topology:
            if not rule.required:
                continue
            size = rules.tensor_parallel_size * (rules.pipeline_parallel_size if rule.group == "pipeline_parallel" else 1) * amount
            multiple = size // gcd(size, width)
            if multiple > 1:
                found.setdefault(multiple, []).append((f"{member}: topology.{rule.group}.{rule.label}", label_values(spec.cluster, rule.label)))
    multiples = sorted(found, reverse=True)
    for coarse, fine in zip(multiples, multiples[1:]):
        if coarse % fine:
            first, second = found[coarse][0][0], found[fine][0][0]
            return f"{first} and {second}: required domains whose units overlap ({coarse} and {fine} groups of {width} GPUs, neither a multiple of the other)"
    levels = []
    keys: list[np.ndarray] = []
    names: list[str] = []
    for multiple in multiples:
        keys += [values for _, values in found[multiple]]
        names += [name for name, _ in found[multiple]]
        combined = np.unique(np.stack(keys, axis=1), axis=0, return_inverse=True)[1].reshape(-1)
        levels.append(DomainLevel(multiple, combined.astype(np.int64), tuple(names)))
    return tuple(levels)


def node_order(levels: tuple[DomainLevel, ...], cluster: Cluster) -> np.ndarray:
    """Per node, its position in the order a class numbers its processes: node rank, or with
    levels, domain by domain from the coarsest level (each domain where its first node is), so
    every value of every level's key holds consecutive processes."""
    num_nodes = cluster.num_nodes
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


__all__ = ["DomainLevel", "domain_levels", "node_order"]
