"""``exclusive_with``: the two components share no hardware item."""

from __future__ import annotations

from dataclasses import replace

from solver_placement.errors import Statement
from solver_placement.solver.context import ModelContext
from solver_placement.solver.rules.rule import RuleOutput
from solver_placement.solver.statements import hardware_list

KEYS = ("exclusive_with",)
RULE = "exclusivity"


def build(ctx: ModelContext, earlier: RuleOutput) -> RuleOutput:
    """Per item both could take, at most one uses it; two rank strings are compared as sets."""
    for spec in ctx.spec.components.values():
        for other in spec.constraints.exclusive_with:
            mine, theirs = ctx.owner(spec.name), ctx.owner(other)
            statement = exclusive_statement(spec.name, other)
            common = sorted(set(mine.cand_hw.tolist()) & set(theirs.cand_hw.tolist()))
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
