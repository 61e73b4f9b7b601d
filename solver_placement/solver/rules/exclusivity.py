"""``exclusive_with``: the two components share no hardware item."""

from __future__ import annotations

from solver_placement.solver.context import ModelContext
from solver_placement.solver.rules.rule import RuleOutput
from solver_placement.solver.statements import hardware_list

KEYS = ("exclusive_with",)


def build(ctx: ModelContext, earlier: RuleOutput) -> RuleOutput:
    """Per item both could take, at most one uses it; two rank strings are compared as sets."""
    for spec in ctx.spec.components.values():
        for other in spec.constraints.exclusive_with:
            mine, theirs = ctx.owner(spec.name), ctx.owner(other)
            statement = f"{spec.name} is exclusive with {other} (no shared hardware)"
            common = sorted(set(mine.cand_hw.tolist()) & set(theirs.cand_hw.tolist()))
            if mine.determined and theirs.determined:
                if common:
                    ctx.conflict(f"{statement}, but both use {hardware_list(ctx.cluster, common)}")
                continue
            guard = ctx.guard(statement)
            for hw in ctx.paced(common, statement):
                ctx.model.add(ctx.used(mine, hw) + ctx.used(theirs, hw) <= 1).only_enforce_if(guard)
    return RuleOutput()
