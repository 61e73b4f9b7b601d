"""Counting bounds: infeasibility proved by arithmetic before any search, in the user's words.

Per node type, how many items each component needs at its granularity (a tensor-parallel group
needs ``tp * gpus_per_process`` items on one node), summed over the components that may not
share items. When the counts cannot work out, the spec is infeasible at once, and the answer
names the fewest statements that make it so plus the arithmetic ("counting: the cluster has 16
nodes x 8 GPUs = 128 GPUs; together they need 129"). The bounds are sound: a spec they reject
has no placement (``tests/solver/test_bounds.py`` checks this against the exact model).
"""

from __future__ import annotations

from solver_placement.errors import Statement
from solver_placement.solver.bounds.core import Guarded, minimal_core
from solver_placement.solver.bounds.model import CountingModel
from solver_placement.solver.bounds.needs import domain_conflicts, is_free, needs_of
from solver_placement.solver.bounds.relations import relations_of
from solver_placement.solver.bounds.wording import counting_line
from solver_placement.solver.options import Budget
from solver_placement.spec.placement_spec import PlacementSpec

__all__ = ["counting_conflicts"]


def counting_conflicts(spec: PlacementSpec, budget: Budget) -> list[Statement]:
    """The statements that cannot hold together by counting alone, then the counting line;
    empty when counting finds no conflict (the spec may still be infeasible)."""
    if not any(is_free(request) for request in spec.requests.values()):
        return []  # rank strings and filled windows: the exact model decides without search
    needs = needs_of(spec)
    for conflict in domain_conflicts(spec, needs):
        return conflict
    relations = relations_of(spec, needs)
    counting = CountingModel.build(needs, relations, spec.cluster.hw_node, spec.cluster.num_nodes)
    if counting is None:
        return []
    singles = [[need.statement, *(r.statement for r in relations if r.first == r.second == name)] for name, need in needs.items()]
    core = minimal_core(Guarded(counting.model, counting.literal, [n.statement for n in needs.values()], singles), budget)
    if core is None:
        return []
    blamed = [r for r in relations if r.statement in core]
    involved = {need.name for need in needs.values() if need.statement in core} | {n for r in blamed for n in (r.first, r.second)}
    statements = [need.statement for need in needs.values() if need.statement in core]
    statements += [s for s in dict.fromkeys(r.statement for r in blamed)]
    return [*statements, counting_line(spec, [needs[name] for name in needs if name in involved], blamed)]
