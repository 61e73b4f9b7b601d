"""A preferred pipeline domain by counts: solved as required, proven against the rule dropped.

``topology.pipeline_parallel.<label>: prefer`` weighs every extra domain a pipeline spans
(``topology`` weight) instead of forbidding it. Placements whose pipelines each stay in one
domain cost nothing for it, and they are exactly the placements of the spec with the rule
*required*, which the count model states. Every other placement spans at least one extra
domain, so it costs at least the ``topology`` weight plus the least the other terms can cost,
which the count model bounds with the rule *dropped*. So the answer of the required spec is the
optimum whenever its value is within that: proven, not assumed (the weights decide, not a
lexicographic reading of them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from solver_placement._specification.grammar import ComponentSpec, DomainRule
from solver_placement._specification.placement_spec import PlacementSpec


def preferring(spec: PlacementSpec) -> bool:
    """Whether a declarative component prefers a pipeline domain the count model can require
    (nothing collocates into it)."""
    return any(_preferred(component) for component in spec.components.values())


def variants(spec: PlacementSpec) -> tuple[PlacementSpec, PlacementSpec]:
    """The spec with every preferred pipeline domain required, and with it dropped."""
    required = {name: _with_rules(c, lambda rule: replace(rule, required=True)) for name, c in spec.components.items()}
    dropped = {name: _with_rules(c, lambda _: None) for name, c in spec.components.items()}
    return spec.with_rules(required), spec.with_rules(dropped)


def _preferred(component: ComponentSpec) -> bool:
    rules = component.constraints
    return rules.collocate_with is None and any(_is_preferred_pipeline(rule) for rule in rules.topology)


def _is_preferred_pipeline(rule: DomainRule) -> bool:
    return rule.group == "pipeline_parallel" and not rule.required


def _with_rules(component: ComponentSpec, change: Callable[[DomainRule], DomainRule | None]) -> ComponentSpec:
    """The component with each preferred pipeline rule changed (or dropped, for None)."""
    if not _preferred(component):
        return component
    rules = tuple(r for rule in component.constraints.topology if (r := change(rule) if _is_preferred_pipeline(rule) else rule) is not None)
    return replace(component, constraints=replace(component.constraints, topology=rules))
