"""Building the CP-SAT model of a spec: the ``x`` literals, then every rule in registry order.

Each rule's builder gets the outputs of the rules before it (merged) and returns its own, so
what flows between rules (objective terms, stride starts) is visible in one loop here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from solver_placement.solver.context import ModelContext, PreviousHardware
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
