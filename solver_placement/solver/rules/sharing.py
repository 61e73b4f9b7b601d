"""How many processes of a declarative component share one item.

A declarative component whose ``resources`` window must be filled uses every item of it by the
same number of processes; otherwise an item holds at most ``max_share`` of its processes. Both
numbers follow from ``processes``, ``hardware_per_process`` and ``resources`` (keys the
per-process rule owns), so this rule owns no key of its own.
"""

from __future__ import annotations

from solver_placement.solver.context import ModelContext
from solver_placement.solver.rules.rule import RuleOutput

KEYS: tuple[str, ...] = ()


def build(ctx: ModelContext, earlier: RuleOutput) -> RuleOutput:
    """One count constraint per candidate item of every declarative request."""
    for request in ctx.requests.values():
        declarative = request.spec.declarative
        if declarative is None:
            continue  # a rank string: the grammar's even split is already in its candidates
        for takers in ctx.takers(request).values():
            if request.fill_share is not None:
                window = declarative.resources or "all"
                statement = f'{request.name}: every item of resources "{window}" is shared by {request.fill_share} process(es)'
                ctx.model.add(sum(takers) == request.fill_share).only_enforce_if(ctx.guard(statement))
            else:
                ctx.model.add(sum(takers) <= request.max_share)
    return RuleOutput()
