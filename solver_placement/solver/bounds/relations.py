"""The statements counting reads between components, each with the nodes where it bites.

Three kinds matter to a count of items per node:

* *apart*: two components share no item (``exclusive_with``; ``memory_gb`` when the two do not
  fit one GPU together; ``max_processes_per_hardware`` when one process of each already exceeds
  the limit), so their items add up on every node;
* *together*: ``collocate_with``, the two use the same items, so the same number per node;
* *room*: a component may use at most ``room[n]`` items of node ``n`` (its memory exceeds the
  GPU's, or a rank string already fills its items to the limit).

Each relation is worded as the statement the user wrote (the model's own wording where it has
one), so a conflict found by counting reads like one found by the solver.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from solver_placement.constants import ACCELERATOR
from solver_placement.errors import Statement
from solver_placement.solver.bounds.needs import Need
from solver_placement.solver.rules.capacity import capacity_statement
from solver_placement.solver.rules.collocation import collocation_statement
from solver_placement.solver.rules.exclusivity import exclusive_statement
from solver_placement.spec.grammar import Memory
from solver_placement.spec.placement_spec import PlacementSpec

APART, TOGETHER, ROOM = "apart", "together", "room"


@dataclass(frozen=True)
class Relation:
    """One statement: ``kind`` between rule owners ``first`` and ``second`` on the nodes of
    ``nodes`` (a bool per node); for ``room``, ``room[n]`` caps ``first`` on node ``n`` (and
    ``second``, when it differs, is the fixed component whose load makes it so)."""

    statement: Statement
    kind: str
    first: str
    second: str
    nodes: np.ndarray
    room: np.ndarray | None = None


def relations_of(spec: PlacementSpec, needs: dict[str, Need]) -> list[Relation]:
    """Every counting relation of the spec, in config order (one statement may give several)."""
    return [*_exclusive(spec), *_collocated(spec), *_memory(spec, needs), *_capacity(spec, needs)]


def _owner(spec: PlacementSpec, name: str) -> str:
    return spec.components[name].shares_rule_with or name


def _everywhere(spec: PlacementSpec) -> np.ndarray:
    return np.ones(spec.cluster.num_nodes, dtype=bool)


def _exclusive(spec: PlacementSpec) -> Iterator[Relation]:
    for component in spec.components.values():
        for other in component.constraints.exclusive_with:
            first, second = _owner(spec, component.name), _owner(spec, other)
            statement = exclusive_statement(component.name, other)
            if first == second:  # one key's copies place the same processes: nothing is left
                yield Relation(statement, ROOM, first, first, _everywhere(spec), np.zeros(spec.cluster.num_nodes, dtype=np.int64))
            else:
                yield Relation(statement, APART, first, second, _everywhere(spec))


def _collocated(spec: PlacementSpec) -> Iterator[Relation]:
    for component in spec.components.values():
        target = component.constraints.collocate_with
        if target is not None and _owner(spec, component.name) != _owner(spec, target):
            statement = collocation_statement(component.name, target)
            yield Relation(statement, TOGETHER, _owner(spec, component.name), _owner(spec, target), _everywhere(spec))


def _memory(spec: PlacementSpec, needs: dict[str, Need]) -> Iterator[Relation]:
    """GPU memory, per distinct GPU size: one owner alone, then every pair of owners."""
    cluster = spec.cluster
    holders: dict[str, list[tuple[str, Memory]]] = {}
    for component in spec.components.values():
        if component.constraints.memory is not None:
            holders.setdefault(_owner(spec, component.name), []).append((component.name, component.constraints.memory))
    if not holders:
        return
    limits = {m for m in cluster.gpu_memory_gb if m is not None}
    owners = list(holders)
    for limit in sorted(limits):
        on = np.array([m == limit for m in cluster.gpu_memory_gb], dtype=bool)
        for position, first in enumerate(owners):
            gpus = on & _gpu_only(spec, needs[first])
            too_much = _overflow(holders[first], limit)
            if too_much and gpus.any():
                yield Relation(too_much, ROOM, first, first, gpus, np.zeros(cluster.num_nodes, dtype=np.int64))
                continue
            for second in owners[position + 1:]:
                together = _overflow([*holders[first], *holders[second]], limit)
                both = gpus & _gpu_only(spec, needs[second])
                if together and both.any() and needs[first].items[both].any() and needs[second].items[both].any():
                    yield Relation(together, APART, first, second, both)


def _gpu_only(spec: PlacementSpec, need: Need) -> np.ndarray:
    """Per node: every candidate item of ``need`` there is a GPU (the memory rule's items)."""
    cluster = spec.cluster
    others = need.hardware[cluster.hw_kind[need.hardware] != cluster.kinds.index(ACCELERATOR)]
    return np.bincount(cluster.hw_node[others], minlength=cluster.num_nodes) == 0


def _overflow(holders: Sequence[tuple[str, Memory]], limit: float) -> Statement | None:
    """The memory rule's statement that one process of each holder on one GPU breaks, if any."""
    for running, memory in holders:
        idle = [(name, other.idle) for name, other in holders if name != running]
        if memory.active + sum(gb for _, gb in idle) > limit:
            listed = ", ".join(f"{name} {gb:g}" for name, gb in idle)
            others = f" with the others idle ({listed} GB)" if idle else ""
            text = f"GPU memory: {running} running ({memory.active:g} GB per process){others} must fit {limit:g} GB per GPU"
            return Statement(text, running, ("memory_gb",), "memory", others=tuple(name for name, _ in idle))
    return None


def _capacity(spec: PlacementSpec, needs: dict[str, Need]) -> Iterator[Relation]:
    """``max_processes_per_hardware``: own copies, every other owner, and rank strings' loads."""
    cluster = spec.cluster
    for component in spec.components.values():
        limit = component.constraints.max_processes_per_hardware
        if limit is None:
            continue
        first = _owner(spec, component.name)
        statement = capacity_statement(component.name, limit)
        if needs[first].copies > limit:
            yield Relation(statement, ROOM, first, first, _everywhere(spec), np.zeros(cluster.num_nodes, dtype=np.int64))
            continue
        mine = np.unique(spec.requests[first].cand_hw)
        for second, need in needs.items():
            if second == first:
                continue
            if not need.fixed:
                if needs[first].copies + need.copies > limit:
                    yield Relation(statement, APART, first, second, _everywhere(spec))
                continue
            load = _fixed_load(spec, second, need)
            full = mine[load[mine] + needs[first].copies > limit]
            if full.size:
                room = needs[first].items - np.bincount(cluster.hw_node[full], minlength=cluster.num_nodes)
                yield Relation(statement, ROOM, first, second, _everywhere(spec), room)


def _fixed_load(spec: PlacementSpec, owner: str, need: Need) -> np.ndarray:
    """Processes per item of a fixed component: its rank strings' candidates are exactly its
    processes' items; a filled window puts ``fill_share`` processes on each of its items."""
    request = spec.requests[owner]
    if request.determined:
        return np.bincount(request.cand_hw, minlength=spec.cluster.num_hardware) * need.copies
    load = np.zeros(spec.cluster.num_hardware, dtype=np.int64)
    load[need.hardware] = (request.fill_share or 1) * need.copies
    return load
