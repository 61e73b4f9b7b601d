"""Preferred domains by counts: solved as required, proven against the rules dropped.

``topology.<group>.<label>: prefer`` weighs every extra domain a unit (a pipeline, or a
tensor-parallel group a required domain lets span nodes) spans (``topology`` weight) instead of
forbidding it. Placements whose units each stay in one domain cost nothing for it, and they
are exactly the placements of the spec with the rules *required*, which the count model states
(``domain_levels.py``), for any member of a class and any mix of rules. Every other placement
spans at least one extra domain, so it costs at least the ``topology`` weight plus the least the other terms can cost,
which the count model bounds with the rules *dropped*. So the answer of the required spec is the
optimum whenever its value is within that: proven, not assumed (the weights decide, not a
lexicographic reading of them).

A preferred tensor-parallel domain of groups that must sit on one node costs nothing in any
placement (a node has one value of every label): it is dropped from both specs, not required
(requiring it would let the groups span nodes, a relaxation).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from solver_placement._solver.bounds.objective import least_spans
from solver_placement._solver.counts.preset import placed_first
from solver_placement._solver.rules.domains import preference_may_cost
from solver_placement._specification.grammar import ComponentSpec, DomainRule
from solver_placement._specification.placement_spec import PlacementSpec


def preferring(spec: PlacementSpec) -> bool:
    """Whether a declarative component prefers a domain its units may span (then the count
    model counts the spec through :func:`variants`)."""
    return bool(costly_preferences(spec))


def forced_spans(spec: PlacementSpec) -> int:
    """The spans the counted components' preferred domains force on every placement
    (``bounds.objective.least_spans``): above 0, no placement keeps them all, so the spec with
    them required has none."""
    return least_spans(spec, (spec.requests[name] for name in counted_components(spec) if name in spec.requests))


def costly_preferences(spec: PlacementSpec) -> list[tuple[str, DomainRule]]:
    """The preferred rules the count model counts whose units may span domains, with their rule
    owners."""
    return [(name, rule) for name, component in counted_components(spec).items() if component.rule_owner == name
            for rule in component.constraints.topology if preference_may_cost(component, rule)]  # fmt: skip


def variants(spec: PlacementSpec) -> tuple[PlacementSpec, PlacementSpec]:
    """The spec with every preferred domain of a declarative component that may cost required
    (those that cannot, dropped), and with all of them dropped (a rank string's preference costs
    nothing: its layout is given; one placed first is priced where it is placed)."""
    declarative = counted_components(spec)
    required = {name: _with_rules(c, lambda rule, costs: replace(rule, required=True) if costs else None) for name, c in declarative.items()}
    dropped = {name: _with_rules(c, lambda _, __: None) for name, c in declarative.items()}
    return spec.with_rules({**spec.components, **required}), spec.with_rules({**spec.components, **dropped})


def counted_components(spec: PlacementSpec) -> dict[str, ComponentSpec]:
    """The components the count model counts: declarative ones not placed first (``preset.py``
    places those, their preferences priced there)."""
    first = placed_first(spec)
    return {name: c for name, c in spec.components.items() if not spec.requests[c.rule_owner].determined and c.rule_owner not in first}


def _with_rules(component: ComponentSpec, change: Callable[[DomainRule, bool], DomainRule | None]) -> ComponentSpec:
    """The component with each preferred rule changed (or dropped, for None); ``change`` is told
    whether the rule may cost."""
    topology = component.constraints.topology
    if all(rule.required for rule in topology):
        return component
    rules = tuple(r for rule in topology if (r := rule if rule.required else change(rule, preference_may_cost(component, rule))) is not None)
    return replace(component, constraints=replace(component.constraints, topology=rules))
