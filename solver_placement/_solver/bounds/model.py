"""The counting model: items per component and *node type*, one assumption literal per statement.

Nodes that look alike to every count (same candidate items per component, same relations, same
free room) form one node type, so 1,024 identical nodes are one set of variables, not 1,024.
Per component and type, ``s`` counts the items it takes there and ``g`` its blocks (``s = width
* g``; a type of ``k`` nodes holds at most ``k * (items // width)`` blocks). Components kept
apart add up: per clique of pairwise-apart components, their items fit the union of their
candidates, and blocks wider than ``room / (j + 1)`` number at most ``j`` per node. Every
constraint is implied by the statements whose literals enforce it, so an infeasible model
proves the spec infeasible, and the literals CP-SAT blames are statements the user wrote.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._arrays import distinct_rows, varying
from solver_placement._errors import Statement
from solver_placement._solver.bounds.needs import Need
from solver_placement._solver.bounds.relations import APART, ROOM, TOGETHER, Relation
from solver_placement._solver.lean_model import LeanCpModel

#: Largest clique of pairwise-apart components given its own constraints (more is rare and slow).
MAX_CLIQUE = 6
#: Most packings of one node enumerated per clique and node type (beyond, inequalities only).
MAX_PATTERNS = 200
#: Most node types counted (rank strings can make every node its own type).
MAX_NODE_TYPES = 1_000

Literal = cp_model.IntVar


@dataclass
class CountingModel:
    """The CP-SAT model of the counts, and the literal of every statement it reads."""

    needs: dict[str, Need]
    relations: list[Relation]
    model: cp_model.CpModel = field(default_factory=LeanCpModel)
    literal: dict[Statement, Literal] = field(default_factory=dict)
    items: dict[tuple[str, int], cp_model.IntVar] = field(default_factory=dict)
    blocks: dict[tuple[str, int], cp_model.IntVar] = field(default_factory=dict)
    #: :func:`packings` per (widths, most, room), shared by node types alike in them: 128 calls
    #: of 31 distinct on ``other hardware:107:1``: 11 -> 1.8 ms of CPU.
    packed: dict[tuple[tuple[int, ...], tuple[int, ...], int], list[tuple[int, ...]] | None] = field(default_factory=dict)

    @classmethod
    def build(cls, needs: dict[str, Need], relations: list[Relation], hw_node: np.ndarray, num_nodes: int) -> CountingModel | None:
        """The model of ``needs`` under ``relations`` (``hw_node``: the cluster's node of each
        item); None when the nodes fall into more than ``MAX_NODE_TYPES`` types (counting would
        cost more than it saves, and the exact stages decide)."""
        counting = cls(needs, relations)
        cliques = {clique: _union([needs[n] for n in clique], hw_node, num_nodes) for clique in _cliques(needs, relations)}
        types, sizes = _node_types(needs, relations, list(cliques.values()), num_nodes)
        if len(types) > MAX_NODE_TYPES:
            return None
        for statement in [n.statement for n in needs.values()] + [r.statement for r in relations]:
            counting.literal.setdefault(statement, counting.model.new_bool_var(statement.text))
        for t, node in enumerate(types):
            counting._add_type(t, node, int(sizes[t]), cliques)
        for name, need in needs.items():
            if not need.fixed:
                total = sum(counting.blocks[name, t] for t in range(len(types)))
                counting.model.add(total == need.units).only_enforce_if(counting.literal[need.statement])
        return counting

    def _add_type(self, t: int, node: int, size: int, cliques: dict[tuple[str, ...], np.ndarray]) -> None:
        """The variables and constraints of one node type (``node`` represents it, ``size`` nodes)."""
        model, literal = self.model, self.literal
        for name, need in self.needs.items():
            items = int(need.items[node])
            self.items[name, t] = s = model.new_int_var(0, size * items, f"{name} items on type {t}")
            self.blocks[name, t] = g = model.new_int_var(0, size * (items // need.width), f"{name} blocks on type {t}")
            if need.fixed:
                model.add(s == size * items).only_enforce_if(literal[need.statement])
            else:
                model.add(s == need.width * g).only_enforce_if(literal[need.statement])
        for relation in self.relations:
            if relation.nodes[node]:
                self._add_relation(relation, t, node, size)
        for clique, union in cliques.items():
            self._add_clique(clique, int(union[node]), t, node, size)

    def _add_relation(self, relation: Relation, t: int, node: int, size: int) -> None:
        first, second = relation.first, relation.second
        guard = [self.literal[relation.statement]]
        if relation.kind == ROOM:
            if second != first:
                guard.append(self.literal[self.needs[second].statement])
            room = int(relation.room[node]) if relation.room is not None else 0
            self.model.add(self.items[first, t] <= size * room).only_enforce_if(guard)
            self.model.add(self.blocks[first, t] <= size * (room // self.needs[first].width)).only_enforce_if(guard)
        elif relation.kind == TOGETHER:
            self.model.add(self.items[first, t] == self.items[second, t]).only_enforce_if(guard)
            self._add_common_blocks(first, second, t, node, size, guard)

    def _add_common_blocks(self, first: str, second: str, t: int, node: int, size: int, guard: list[Literal]) -> None:
        """Two collocated free components use the same items per node: a multiple of both
        widths, out of the candidates both have; apart on some nodes, they use none there."""
        a, b = self.needs[first], self.needs[second]
        common = min(int(a.items[node]), int(b.items[node]))
        self.model.add(self.items[first, t] <= size * common).only_enforce_if(guard)
        for other in self.relations:
            if other.kind == APART and {other.first, other.second} == {first, second} and other.nodes[node]:
                self.model.add(self.items[first, t] == 0).only_enforce_if(*guard, self.literal[other.statement])
        if a.fixed or b.fixed:
            return
        both = [*guard, self.literal[a.statement], self.literal[b.statement]]
        width = int(np.lcm(a.width, b.width))
        shared = self.model.new_int_var(0, size * (common // width), "")
        self.model.add(self.items[first, t] == width * shared).only_enforce_if(both)

    def _add_clique(self, clique: tuple[str, ...], union: int, t: int, node: int, size: int) -> None:
        """Pairwise-apart components: their items add up within the union of their candidates."""
        guard = []
        for pair in combinations(clique, 2):
            reasons = [r for r in self.relations if r.kind == APART and {r.first, r.second} == set(pair) and r.nodes[node]]
            if not reasons:
                return
            apart = self.model.new_bool_var("")
            for reason in reasons:
                self.model.add_implication(self.literal[reason.statement], apart)
            guard.append(apart)
        members = [self.needs[name] for name in clique]
        fixed = [m for m in members if m.fixed]
        guard += [self.literal[m.statement] for m in fixed]
        self.model.add(sum(self.items[m.name, t] for m in members) <= size * union).only_enforce_if(guard)
        room = union - sum(int(m.items[node]) for m in fixed)
        free = [m for m in members if not m.fixed]
        for j in sorted({room // m.width for m in free}):
            wide = [m for m in free if m.width * (j + 1) > room]
            if wide:
                self.model.add(sum(self.blocks[m.name, t] for m in wide) <= size * j).only_enforce_if(guard)
        key = (tuple(m.width for m in free), tuple(int(m.items[node]) // m.width for m in free), room)
        if key not in self.packed:
            self.packed[key] = packings(*key)
        patterns = self.packed[key]
        if len(free) > 1 and patterns is not None:
            self._addpackings(free, patterns, t, size, guard)

    def _addpackings(self, free: Sequence[Need], patterns: list[tuple[int, ...]], t: int, size: int, guard: list[Literal]) -> None:
        """Each node of the type holds one way of packing the members' blocks (``patterns``): the
        blocks of each member are at most what the chosen packings hold together."""
        chosen = [self.model.new_int_var(0, size, "") for _ in patterns]
        self.model.add(sum(chosen) <= size).only_enforce_if(guard)
        for position, member in enumerate(free):
            held = sum(pattern[position] * n for pattern, n in zip(patterns, chosen, strict=True))
            self.model.add(self.blocks[member.name, t] <= held).only_enforce_if(guard)


def packings(widths: Sequence[int], most: Sequence[int], room: int) -> list[tuple[int, ...]] | None:
    """The maximal ways to pack blocks of ``widths`` (at most ``most`` of each) into ``room``
    items, or None when there are more than ``MAX_PATTERNS`` (the inequalities above remain)."""
    found: list[tuple[int, ...]] = []

    def extend(prefix: tuple[int, ...], left: int) -> bool:
        if len(found) > MAX_PATTERNS:
            return False
        position = len(prefix)
        if position == len(widths):
            if all(k == most[i] or widths[i] > left for i, k in enumerate(prefix)):
                found.append(prefix)
            return True
        top = min(most[position], left // widths[position])
        return all(extend((*prefix, k), left - k * widths[position]) for k in range(top, -1, -1))

    return found if extend((), room) and len(found) <= MAX_PATTERNS else None


def _union(members: Sequence[Need], hw_node: np.ndarray, num_nodes: int) -> np.ndarray:
    """Per node, the distinct items any of the members may use: one mark per item (a sort of
    the members' ids took 0.02-0.05 s a clique on 65,536 nodes)."""
    marked = np.zeros(hw_node.size, dtype=bool)
    for member in members:
        marked[member.hardware] = True
    return np.bincount(hw_node[marked], minlength=num_nodes).astype(np.int64)


def _cliques(needs: dict[str, Need], relations: list[Relation]) -> list[tuple[str, ...]]:
    """Every set of 2 to ``MAX_CLIQUE`` components that are pairwise apart somewhere."""
    pairs = {frozenset((r.first, r.second)) for r in relations if r.kind == APART}
    names = [n for n in needs if any(n in p for p in pairs)]
    found: list[tuple[str, ...]] = []
    frontier: list[tuple[str, ...]] = [(n,) for n in names]
    while frontier:
        grown: list[tuple[str, ...]] = []
        for clique in frontier:
            for name in names[names.index(clique[-1]) + 1:]:
                if len(clique) < MAX_CLIQUE and all(frozenset((m, name)) in pairs for m in clique):
                    grown.append((*clique, name))
        found += grown
        frontier = grown
    return found


def _node_types(
    needs: dict[str, Need], relations: list[Relation], unions: Sequence[np.ndarray], num_nodes: int
) -> tuple[list[int], np.ndarray]:
    """One representative node per node type, and how many nodes each type has."""
    columns = [need.items for need in needs.values()]
    columns += [r.nodes.astype(np.int64) for r in relations]
    columns += [r.room for r in relations if r.room is not None]
    columns += list(unions)
    kept = varying(columns)
    table = np.stack(kept, axis=1) if kept else np.zeros((num_nodes, 0), dtype=np.int64)
    first, sizes = distinct_rows(table)
    return first.tolist(), sizes
