"""``max_processes_per_hardware``: no item a component uses holds more processes than its limit.

The load counts the processes of *all* components on the item, shared-rule copies included
(components on one key each place the same processes again).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

import numpy as np

from solver_placement._arrays import distinct
from solver_placement._errors import Statement, counted
from solver_placement._solver.bounds.needs import Need
from solver_placement._solver.bounds.relations import APART, ROOM, Relation, everywhere
from solver_placement._solver.context import Literal, ModelContext
from solver_placement._solver.rules.rule import Placed, RuleOutput
from solver_placement._solver.statements import hardware_name
from solver_placement._specification.placement_spec import PlacementSpec

KEYS = ("max_processes_per_hardware",)
RULE = "capacity"


def build(ctx: ModelContext, earlier: RuleOutput) -> RuleOutput:
    """Per item a limited component may use: fixed load + free takers <= limit while it is used."""
    limited = [(spec, limit) for spec in ctx.spec.components.values() if (limit := spec.constraints.max_processes_per_hardware)]
    if not limited:
        return RuleOutput()
    fixed_load = np.zeros(ctx.cluster.num_hardware, dtype=np.int64)
    for request in ctx.requests.values():
        if request.determined:
            fixed_load += np.bincount(request.cand_hw, minlength=ctx.cluster.num_hardware) * ctx.copies(request)
    free = [request for request in ctx.requests.values() if not request.determined]
    taken = np.zeros(ctx.cluster.num_hardware, dtype=bool)  # the items some free process may take
    for request in free:
        taken[request.cand_hw] = True
    for spec, limit in limited:
        mine = ctx.owner(spec.name)
        statement = capacity_statement(spec.name, limit)
        text = statement.text
        items = distinct(mine.cand_hw)
        # an item no free process takes holds its fixed load alone: checked by arrays (the rank
        # strings alone, ``build.fixed_conflicts``: 354,692 items, 2.5 s one by one on 65,536 nodes)
        alone = items[~taken[items]]
        for hw in alone[fixed_load[alone] > limit].tolist():
            ctx.conflict(replace(statement, text=f"{text}, but {hardware_name(ctx.cluster, hw)} holds {int(fixed_load[hw])}"))
        for hw in ctx.paced(items[taken[items]].tolist(), text):
            variable = [(literal, ctx.copies(r)) for r in free for literal in ctx.takers(r).get(hw, [])]
            total = int(fixed_load[hw]) + sum(weight * literal for literal, weight in variable)
            ctx.model.add(total <= limit).only_enforce_if(*ctx.guard(statement), *_while_used(ctx.used(mine, hw)))
    return RuleOutput()


def capacity_statement(name: str, limit: int) -> Statement:
    """``name``'s ``max_processes_per_hardware``, as every stage words it."""
    return Statement(f"{name}: at most {counted(limit, 'process', 'processes')} per item (max_processes_per_hardware)", name, KEYS, RULE)


def _while_used(used: Literal | int) -> Sequence[Literal]:
    """Enforcement literals for "while the component uses the item" (none when it certainly does)."""
    return [] if isinstance(used, int) else [used]


def bound(spec: PlacementSpec, needs: Mapping[str, Need]) -> Iterator[Relation]:
    """``max_processes_per_hardware``: own copies, every other owner, and rank strings' loads."""
    cluster = spec.cluster
    for component in spec.components.values():
        limit = component.constraints.max_processes_per_hardware
        if limit is None:
            continue
        first = component.rule_owner
        statement = capacity_statement(component.name, limit)
        if needs[first].copies > limit:
            yield Relation(statement, ROOM, first, first, everywhere(spec), np.zeros(cluster.num_nodes, dtype=np.int64))
            continue
        mine = spec.requests[first].window_items
        for second, need in needs.items():
            if second == first:
                continue
            if not need.fixed:
                if needs[first].copies + need.copies > limit:
                    yield Relation(statement, APART, first, second, everywhere(spec))
                continue
            load = _fixed_load(spec, second, need)
            full = mine[load[mine] + needs[first].copies > limit]
            if full.size:
                room = needs[first].items - np.bincount(cluster.hw_node[full], minlength=cluster.num_nodes)
                yield Relation(statement, ROOM, first, second, everywhere(spec), room)


def _fixed_load(spec: PlacementSpec, owner: str, need: Need) -> np.ndarray:
    """Processes per item of a fixed component: its rank strings' candidates are exactly its
    processes' items; a filled window puts ``fill_share`` processes on each of its items."""
    request = spec.requests[owner]
    if request.determined:
        return np.bincount(request.cand_hw, minlength=spec.cluster.num_hardware) * need.copies
    load = np.zeros(spec.cluster.num_hardware, dtype=np.int64)
    load[need.hardware] = (request.fill_share or 1) * need.copies
    return load


#: The count model's form: a GPU of a class holds one process of each member, so a stack's load
#: is a sum of numbers (``counts/stacks.py``), and rank strings' processes (and their own limits)
#: load their GPUs as a fixed load the stacks must fit beside (``counts/fixed_loads.py``).
COUNTS = "stated by the count model's stacks and the rank strings' loads (counts/stacks.py, counts/fixed_loads.py)"


def fits(placed: Placed, coming: tuple[str, ...], items: np.ndarray) -> np.ndarray:
    """First fit: every limit on the item still holds with one more process of each of
    ``coming`` (each shared-rule copy counted). A limit binds only items its component uses, so
    it is checked where its owner already is or is one of those coming."""
    ok = np.ones(items.size, dtype=bool)
    added: np.ndarray | None = None
    for component in placed.spec.components.values():
        limit = component.constraints.max_processes_per_hardware
        if limit is None:
            continue
        if added is None:
            added = placed.load[items] + sum(placed.copies(name) for name in coming)
        owner = component.rule_owner
        if owner in coming:
            ok &= added <= limit
        else:
            ok &= (placed.on(owner)[items] == 0) | (added <= limit)
    return ok
