"""Tensor- and pipeline-parallel groups: on one node, or inside one value of a node label.

A tensor-parallel group is ``tensor_parallel_size`` consecutive processes and must lie on one
node, or inside one value of a label when ``topology.tensor_parallel`` requires it; a pipeline
(``tp * pp`` consecutive processes) lies inside one value when ``topology.pipeline_parallel``
asks. A ``prefer`` rule is no constraint: the rule returns it as the ``topology`` objective term.
"""

from __future__ import annotations

from collections.abc import Mapping

from solver_placement._solver.context import ModelContext
from solver_placement._solver.labels import label_values
from solver_placement._solver.rules.one_of import Unit, add_one_of
from solver_placement._solver.rules.rule import RuleOutput, Term
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.grammar import ComponentSpec, DomainRule
from solver_placement._specification.placement_spec import PlacementSpec

KEYS = ("tensor_parallel_size", "pipeline_parallel_size", "topology")


def build(ctx: ModelContext, earlier: RuleOutput) -> RuleOutput:
    """Every group's constraint; the ``topology`` term of the preferred ones."""
    preferred: list[Term] = []
    for request in ctx.requests.values():
        rules = ctx.spec.components[request.name].constraints
        tp, pp = rules.tensor_parallel_size, rules.pipeline_parallel_size
        tensor_group = Unit(tp, "tensor-parallel group", ("tensor_parallel_size",), "domains")
        node_of_candidate = ctx.cluster.hw_node[request.cand_hw]
        if tp > 1 and not any(rule.group == "tensor_parallel" and rule.required for rule in rules.topology):
            add_one_of(ctx, request, node_of_candidate, tensor_group, "node")
        for rule in rules.topology:
            size, name = (tp, "tensor-parallel group") if rule.group == "tensor_parallel" else (tp * pp, "pipeline")
            unit = Unit(size, name, ("topology",), "domains")
            if unit.size > 1:
                values = label_values(ctx.cluster, rule.label)[node_of_candidate]
                preferred += add_one_of(ctx, request, values, unit, f"{rule.label!r} domain", required=rule.required)
    return RuleOutput(terms={"topology": tuple(preferred)} if preferred else {})


def counts(spec: PlacementSpec, requests: Mapping[str, ComponentRequest]) -> str:
    """The count model states every required domain as whole units of a class's groups per
    domain (``counts/domain_levels.py``), and puts a tensor-parallel group nothing requires in a
    domain on one node (so a preferred tensor-parallel domain of it costs nothing). A preferred
    domain that may cost is counted as required and proven against the rule dropped
    (``counts/preferred.py``), or where no placement keeps it, its ``topology`` term stated by
    the domains' remainders (``counts/spanning.py``): the reason returned here sends the spec
    there."""
    for component in spec.components.values():
        if not requests[component.rule_owner].determined:
            unstated = _preferred_that_may_cost(component)
            if unstated:
                return f"{component.name}: topology ({unstated})"
    return ""


#: The counting bound of required domains: ``bounds/needs.py``'s ``domain_conflicts`` counts the
#: groups each domain holds before any relation is read.
BOUND = "required domains are counted per domain by domain_conflicts (bounds/needs.py)"


def _preferred_that_may_cost(component: ComponentSpec) -> str:
    """The first preferred rule of ``component`` that may cost in the count model's layouts."""
    for rule in component.constraints.topology:
        if preference_may_cost(component, rule):
            return f"{rule.group}.{rule.label}: prefer"
    return ""


def preference_may_cost(component: ComponentSpec, rule: DomainRule) -> bool:
    """Whether ``rule`` is a preference whose units may span domains in the count model's
    layouts: a pipeline's, or a tensor-parallel group's when a required domain lets the groups
    span nodes (a group on one node lies in one value of every label)."""
    spanning = any(other.group == "tensor_parallel" and other.required for other in component.constraints.topology)
    return not rule.required and (rule.group == "pipeline_parallel" or spanning)


#: First-fit form: the construction places whole groups per node and whole units per zone
#: (``first_fit.py`` ``_zones``; two required labels are declined).
FITS = "first fit places whole tensor-parallel groups on one node and whole units inside one value of the required label"
