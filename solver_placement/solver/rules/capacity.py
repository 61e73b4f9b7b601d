"""``max_processes_per_hardware``: no item a component uses holds more processes than its limit.

The load counts the processes of *all* components on the item, shared-rule copies included
(components on one key each place the same processes again).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from solver_placement.errors import Statement
from solver_placement.solver.context import Literal, ModelContext
from solver_placement.solver.rules.rule import RuleOutput
from solver_placement.solver.statements import hardware_name

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
    for spec, limit in limited:
        mine = ctx.owner(spec.name)
        statement = capacity_statement(spec.name, limit)
        text = statement.text
        for hw in ctx.paced(sorted(ctx.takers(mine)), text):
            variable = [(literal, ctx.copies(r)) for r in free for literal in ctx.takers(r).get(hw, [])]
            if not variable:
                if fixed_load[hw] > limit:
                    ctx.conflict(replace(statement, text=f"{text}, but {hardware_name(ctx.cluster, hw)} holds {int(fixed_load[hw])}"))
                continue
            total = int(fixed_load[hw]) + sum(weight * literal for literal, weight in variable)
            ctx.model.add(total <= limit).only_enforce_if(*ctx.guard(statement), *_while_used(ctx.used(mine, hw)))
    return RuleOutput()


def capacity_statement(name: str, limit: int) -> Statement:
    """``name``'s ``max_processes_per_hardware``, as every stage words it."""
    return Statement(f"{name}: at most {limit} process(es) per item (max_processes_per_hardware)", name, KEYS, RULE)


def _while_used(used: Literal | int) -> Sequence[Literal]:
    """Enforcement literals for "while the component uses the item" (none when it certainly does)."""
    return [] if isinstance(used, int) else [used]
