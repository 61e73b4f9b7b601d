"""A required tensor-parallel domain by counts: groups kept on one node, proven against groups split.

``topology.tensor_parallel.<label>: require`` keeps each tensor-parallel group inside one value
of a node label, so a group may span nodes of one rack. The count model puts every group on
one node, and a node has one value of every label: its answers keep the rule, but they are a
restriction of it (a group over two nodes of a rack is allowed and not counted). So the answer
is proven only against a relaxation: the spec with the rule dropped and the component's
processes counted one by one (tensor-parallel size 1, groups free to split anywhere), whose
count-model bound no placement of the spec can beat, and the counting bound. Where the
restricted answer meets that bound it is the optimum; otherwise it is returned with its gap,
and a spec the restriction cannot place at all is left to the flat model.
"""

from __future__ import annotations

from dataclasses import replace

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


def split(spec: PlacementSpec) -> PlacementSpec | None:
    """The spec with every required tensor-parallel domain dropped and those components' groups
    of one process (a relaxation of the rule); None when that would change more than the rule (a
    pipeline rule counts groups, a collocated component nests in them)."""
    targets = {spec.owner_of(target) for c in spec.components.values() if (target := c.constraints.collocate_with) is not None}
    components = {}
    for name, component in spec.components.items():
        if _required(component):
            if component.rule_owner in targets or component.constraints.pipeline_parallel_size > 1 or len(component.constraints.topology) > 1:
                return None
            component = _without_rule(component)
            component = replace(component, constraints=replace(component.constraints, tensor_parallel_size=1))
        components[name] = component
    return spec.with_rules(components)


def _required(component: ComponentSpec) -> bool:
    return any(rule.group == "tensor_parallel" and rule.required for rule in component.constraints.topology)


def _without_rule(component: ComponentSpec) -> ComponentSpec:
    """The component without its required tensor-parallel domain rules."""
    kept = tuple(rule for rule in component.constraints.topology if not (rule.group == "tensor_parallel" and rule.required))
    return replace(component, constraints=replace(component.constraints, topology=kept))


__all__ = ["on_node", "requires_tensor_domain", "split"]
