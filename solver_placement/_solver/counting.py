"""Counting bounds put together: each rule family's relations, counted against the needs.

The blocks are in ``_solver/bounds/`` (see its docstring); the relations come from the rule
registry, each family's ``bound`` form, so a new rule with a counting bound is counted here
without an edit. A declarative component too large for its own window is asked first
(``bounds/shortfall.py``). This module is the one way in for the solve and the explanation.
"""

from __future__ import annotations

from collections.abc import Mapping

from solver_placement._errors import Statement
from solver_placement._solver.bounds.core import Guarded, minimal_core
from solver_placement._solver.bounds.model import CountingModel
from solver_placement._solver.bounds.needs import Need, domain_conflicts, is_free, needs_of
from solver_placement._solver.bounds.relations import Relation
from solver_placement._solver.bounds.shortfall import shortfall
from solver_placement._solver.bounds.wording import counting_line
from solver_placement._solver.options import Budget
from solver_placement._solver.rules import RULES
from solver_placement._specification.placement_spec import PlacementSpec

#: The rule families that give relations, in the order conflicts are shrunk and listed.
COUNTED = ("exclusivity", "collocation", "memory", "capacity")


def relations_of(spec: PlacementSpec, needs: Mapping[str, Need]) -> list[Relation]:
    """Every counting relation of the spec, rule family by family in ``COUNTED`` order, each in
    config order (one statement may give several)."""
    bounds = {rule.name: rule.bound for rule in RULES}
    return [relation for name in COUNTED if callable(form := bounds[name]) for relation in form(spec, needs)]


def counting_conflicts(spec: PlacementSpec, budget: Budget) -> list[Statement]:
    """The statements that cannot hold together by counting alone, then the counting line;
    empty when counting finds no conflict (the spec may still be infeasible). A component too
    large for its own window comes first, alone: its arithmetic is the whole reason."""
    if (short := shortfall(spec)) is not None:
        return [short]
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
