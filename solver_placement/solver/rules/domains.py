"""Tensor- and pipeline-parallel groups: on one node, or inside one value of a node label.

A tensor-parallel group is ``tensor_parallel_size`` consecutive processes and must lie on one
node, or inside one value of a label when ``topology.tensor_parallel`` requires it; a pipeline
(``tp * pp`` consecutive processes) lies inside one value when ``topology.pipeline_parallel``
asks. A ``prefer`` rule is no constraint: the rule returns it as the ``topology`` objective term.
"""

from __future__ import annotations

import numpy as np

from solver_placement.cluster.cluster import Cluster
from solver_placement.solver.context import ModelContext
from solver_placement.solver.rules.one_of import Unit, add_one_of
from solver_placement.solver.rules.rule import RuleOutput, Term

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


def label_values(cluster: Cluster, label: str) -> np.ndarray:
    """Per node, an index of its value of ``label``; unlabelled nodes are each their own value."""
    names = [cluster.node_labels[n].get(label, f"\0node {n}") for n in range(cluster.num_nodes)]
    index = {name: i for i, name in enumerate(dict.fromkeys(names))}
    return np.array([index[name] for name in names], dtype=np.int64)
