"""A required tensor-parallel domain by counts: groups on one node first, then the rule as it is.

``topology.tensor_parallel.<label>: require`` keeps each tensor-parallel group inside one value
of a node label, so a group may span nodes of one rack. The count model states that exactly
(its groups are then single processes and every domain holds whole tensor-parallel groups of
them, ``domain_levels.py``), but a layout of groups kept on one node is the one users expect
and the one this path returned before, and a node has one value of every label, so it keeps the
rule: that restriction is counted first, and the rule as it is (no restriction) decides whether
it is the optimum. Where the restriction is worse, or cannot place the spec at all (groups wider
than any node), the exact answer is the answer.
"""

from __future__ import annotations

from dataclasses import replace

from solver_placement._errors import PlacementError
from solver_placement._specification.grammar import ComponentSpec
from solver_placement._specification.placement_spec import PlacementSpec


def requires_tensor_domain(spec: PlacementSpec) -> bool:
    """Whether a declarative component requires its tensor-parallel groups in one domain."""
    return any(_required(component) and not spec.requests[component.rule_owner].determined for component in spec.components.values())


def on_node(spec: PlacementSpec) -> PlacementSpec | None:
    """The spec with every required tensor-parallel domain dropped, so the count model keeps
    each group on one node (a restriction of the rule); None when a component's processes do not
    make whole groups (its last group would be on no node in particular)."""
    components = {}
    for name, component in spec.components.items():
        if _required(component):
            rules = component.constraints
            if spec.requests[component.rule_owner].num_processes % rules.tensor_parallel_size:
                return None
            component = _without_rule(component)
        components[name] = component
    return spec.with_rules(components)


def groups_anywhere(spec: PlacementSpec) -> PlacementSpec | None:
    """The spec with every component requiring a tensor-parallel domain counted as groups of one
    process, its tensor-parallel rules dropped: a group may then span any nodes, so every layout
    of the spec is one of it, at the same ``nodes`` and ``balance`` terms (a relaxation: its
    optimum bounds the spec's). None where it would not be one: a component with pipelines
    (units of its other rules would shrink and be numbered otherwise) or another domain rule.
    Why: the rule as it is walks every whole-node pattern of groups spanning a domain's nodes
    (56,430 on ``tp domains:909:322``), whose relaxation cannot see the domains and sat one
    (component, node) pair below the restriction's answer; this bound is counted in
    milliseconds and meets it."""
    components = {}
    for name, component in spec.components.items():
        rules = component.constraints
        if _required(component):
            if rules.pipeline_parallel_size > 1 or any(rule.group != "tensor_parallel" for rule in rules.topology):
                return None
            component = replace(component, constraints=replace(rules, topology=(), tensor_parallel_size=1))
        components[name] = component
    try:
        return spec.with_rules(components)
    except PlacementError:  # a follower whose groups must match its target's
        return None


def _required(component: ComponentSpec) -> bool:
    return any(rule.group == "tensor_parallel" and rule.required for rule in component.constraints.topology)


def _without_rule(component: ComponentSpec) -> ComponentSpec:
    """The component without its required tensor-parallel domain rules."""
    kept = tuple(rule for rule in component.constraints.topology if not (rule.group == "tensor_parallel" and rule.required))
    return replace(component, constraints=replace(component.constraints, topology=kept))


__all__ = ["groups_anywhere", "on_node", "requires_tensor_domain"]
