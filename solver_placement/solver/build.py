"""Building the CP-SAT model of a spec: the ``x`` literals, then every rule in registry order.

Each rule's builder gets the outputs of the rules before it (merged) and returns its own, so
what flows between rules (objective terms, stride starts) is visible in one loop here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from solver_placement.errors import Statement
from solver_placement.solver.context import ModelContext, PreviousHardware
from solver_placement.solver.options import Budget
from solver_placement.solver.rules import DEFAULT_WEIGHTS, RULES, RuleOutput
from solver_placement.spec.candidates import ComponentRequest
from solver_placement.spec.placement_spec import PlacementSpec


def build_model(
    spec: PlacementSpec,
    requests: dict[str, ComponentRequest],
    explain: bool = False,
    weights: Mapping[str, int] | None = None,
    previous: PreviousHardware | None = None,
    check: Callable[[str], None] | None = None,
) -> ModelContext:
    """The finished model of ``requests`` (expanded: one candidate row per process).

    ``explain`` guards every statement with an assumption literal; ``weights`` override
    ``DEFAULT_WEIGHTS``; ``previous`` gives, per component, the physical hardware ids each
    process held before (for the ``changes`` objective term); ``check`` (e.g. ``Budget.check``)
    is called with the stage between rules and inside long loops, and raises to stop building.
    """
    weighed = {**DEFAULT_WEIGHTS, **(weights or {})}
    ctx = ModelContext.create(spec, requests, explain, weighed, previous or {}, **({} if check is None else {"check": check}))
    built = RuleOutput()
    for rule in RULES:
        ctx.check(f"building the model (the {rule.name} rule)")
        built = built.merged(rule.build(ctx, built))
    return ctx


def fixed_conflicts(spec: PlacementSpec, budget: Budget) -> list[Statement]:
    """The statements the rank-string components break among themselves, whatever the
    declarative ones do (a process over two nodes, two exclusive rank strings sharing a GPU ...).

    The flat model finds these while it is built; the count model and first fit take rank
    strings as given, so they are checked here first, by building the model of the rank-string
    components alone (their rules about declarative components left out): one layout literal per
    component, milliseconds even for 100,000 processes.
    """
    fixed = {name: request for name, request in spec.requests.items() if request.determined}
    if not fixed or len(fixed) == len(spec.requests):
        return []  # none, or all: the flat model checks them as it is built
    components = {}
    for component in spec.components.values():
        if component.rule_owner not in fixed:
            continue
        rules = component.constraints
        kept = tuple(other for other in rules.exclusive_with if spec.owner_of(other) in fixed)
        target = rules.collocate_with
        target = target if target is not None and spec.owner_of(target) in fixed else None
        components[component.name] = replace(component, constraints=replace(rules, exclusive_with=kept, collocate_with=target))
    ctx = build_model(spec.with_rules(components), fixed, check=budget.check)
    return ctx.conflicts
