"""Building the CP-SAT model of a spec: the ``x`` literals, then every rule in registry order.

Each rule's builder gets the outputs of exactly the rules its ``after`` names (merged in that
order) and returns its own, so what flows between rules (objective terms, stride starts) is
visible in one loop here, and a rule that reads an output it did not declare reads nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from solver_placement._errors import InternalError, Statement
from solver_placement._solver.context import ModelContext, PreviousHardware
from solver_placement._solver.options import Budget
from solver_placement._solver.rules import RULES, Rule, RuleOutput
from solver_placement._solver_settings import DEFAULT_WEIGHTS
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec


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
    returned: dict[str, RuleOutput] = {}
    for rule in RULES:
        ctx.check(f"building the model (the {rule.name} rule)")
        returned[rule.name] = rule.build(ctx, _declared_inputs(rule, returned))
    return ctx


def _declared_inputs(rule: Rule, returned: Mapping[str, RuleOutput]) -> RuleOutput:
    """What the rules ``rule.after`` names returned, merged in that order; a rule named there
    that has not been built yet is a registry out of order, the library's fault."""
    inputs = RuleOutput()
    for name in rule.after:
        if name not in returned:
            raise InternalError(f"the {rule.name} rule reads the {name} rule's output, but {name} is not built before it in RULES")
        inputs = inputs.merged(returned[name])
    return inputs


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
