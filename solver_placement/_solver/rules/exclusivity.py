"""``exclusive_with``: the two components share no hardware item."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace

import numpy as np

from solver_placement._errors import Statement
from solver_placement._solver.bounds.needs import Need
from solver_placement._solver.bounds.relations import APART, ROOM, Relation, everywhere
from solver_placement._solver.context import ModelContext
from solver_placement._solver.rules.rule import Placed, RuleOutput
from solver_placement._solver.statements import hardware_list
from solver_placement._specification.placement_spec import PlacementSpec

KEYS = ("exclusive_with",)
RULE = "exclusivity"


def build(ctx: ModelContext, earlier: RuleOutput) -> RuleOutput:
    """Per item both could take, at most one uses it; two rank strings are compared as sets."""
    for spec in ctx.spec.components.values():
        for other in spec.constraints.exclusive_with:
            mine, theirs = ctx.owner(spec.name), ctx.owner(other)
            statement = exclusive_statement(spec.name, other)
            common = _common_items(mine.cand_hw, theirs.cand_hw, ctx.cluster.num_hardware)
            if mine.determined and theirs.determined:
                if common:
                    ctx.conflict(replace(statement, text=f"{statement.text}, but both use {hardware_list(ctx.cluster, common)}"))
                continue
            guard = ctx.guard(statement)
            for hw in ctx.paced(common, statement.text):
                ctx.model.add(ctx.used(mine, hw) + ctx.used(theirs, hw) <= 1).only_enforce_if(guard)
    return RuleOutput()


def exclusive_statement(name: str, other: str) -> Statement:
    """``name``'s ``exclusive_with`` naming ``other``, as every stage words it."""
    return Statement(f"{name} is exclusive with {other} (no shared hardware)", name, KEYS, RULE, others=(other,))


def bound(spec: PlacementSpec, needs: Mapping[str, Need]) -> Iterator[Relation]:
    """Counting: two exclusive owners' items add up on every node (a key excluding its own copies
    leaves them no room). Owners with no candidate item in common (a robot component and a GPU
    one) are apart in every layout: their relation could never bind, and as a clique of the
    counting model it only slows the model down (10x on 60 nodes of GPUs and robots)."""
    for component in spec.components.values():
        for other in component.constraints.exclusive_with:
            first, second = component.rule_owner, spec.owner_of(other)
            statement = exclusive_statement(component.name, other)
            if first == second:  # one key's copies place the same processes: nothing is left
                yield Relation(statement, ROOM, first, first, everywhere(spec), np.zeros(spec.cluster.num_nodes, dtype=np.int64))
            elif _share_an_item(needs[first].hardware, needs[second].hardware, spec.cluster.num_hardware):
                yield Relation(statement, APART, first, second, everywhere(spec))


def _common_items(first: np.ndarray, second: np.ndarray, num_hardware: int) -> list[int]:
    """The items both id arrays hold, ascending, by one mark per item (a Python set of each took
    0.2-0.4 s for the rank strings a re-plan pins on 65,536 nodes)."""
    marked, both = np.zeros(num_hardware, dtype=bool), np.zeros(num_hardware, dtype=bool)
    marked[first] = True
    both[second[marked[second]]] = True
    return np.flatnonzero(both).tolist()


def _share_an_item(first: np.ndarray, second: np.ndarray, num_hardware: int) -> bool:
    """Whether two id arrays hold a common item: one mark per item, no sort (``intersect1d``
    sorted both arrays, 0.2 s a pair on 524,288 GPUs)."""
    marked = np.zeros(num_hardware, dtype=bool)
    marked[first] = True
    return bool(marked[second].any())


def exclusive_owners(spec: PlacementSpec) -> Iterator[tuple[str, str]]:
    """Every ``exclusive_with`` as the two rule-owning requests it keeps apart, in config order
    (the rule holds both ways, so a reader takes each pair as an edge)."""
    for component in spec.components.values():
        for other in component.constraints.exclusive_with:
            yield component.rule_owner, spec.owner_of(other)


def fits(placed: Placed, coming: tuple[str, ...], items: np.ndarray) -> np.ndarray:
    """First fit: an item no request exclusive with one of ``coming`` uses yet."""
    pairs = list(exclusive_owners(placed.spec))
    apart = {b for a, b in pairs if a in coming} | {a for a, b in pairs if b in coming}
    ok = np.ones(items.size, dtype=bool)
    for other in apart:
        ok &= placed.on(other)[items] == 0
    return ok


#: Node-level form: the count model keeps exclusive classes on different GPUs of a node (a clique
#: of them shares the node's room; ``counts/stacks.py`` builds the graph, ``counts/covers.py``
#: gives a part that is not chordal GPU stacks over its independent sets).
COUNTS = "stated by the count model's graph of classes that may not share a GPU (counts/stacks.py)"
