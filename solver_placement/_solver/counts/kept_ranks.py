"""Re-planning with a weighed ``contiguity``, proven by two bounds, where one model does not state it.

``kept_weighed.py`` states ``changes`` and a weighed ``contiguity`` in one count model; the specs
it leaves (a strided component placed first whose order of processes may give up a set, a window
whose ranks do not follow a node's GPU order, too many patterns over the contents) come here. Every
layout's objective is at least each of these sums, since a term is never below its own least value:

* the count model's bound on every term but ``changes`` (ranks included), plus ``changes`` times
  the sets no layout keeps (``replan.must_lose``): the caller's bound;
* ``kept.py``'s bound on every term but ``contiguity`` (moves included; ``kept_kinds.py`` view by
  view on robots and whole nodes), plus ``contiguity`` times the least rank sum of any layout
  (the count model with ``contiguity`` alone).

The caller's layout is the count model's, best in ranks, matched node by node to the previous
placement; when it gives up more than every layout must, ``kept.py``'s layout (best in moves) is
held against the larger bound. A re-plan that keeps the survivors in place and puts the rest on
the lowest free ranks meets both at once (nothing packs the ranks lower), and is proven optimal;
a trade between moves and ranks that neither layout makes is left to the exact model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from solver_placement._solver.answer import Answer
from solver_placement._solver.counts import count_path
from solver_placement._solver.counts.kept import kept_answer
from solver_placement._solver.counts.kept_kinds import kept_by_kind
from solver_placement._solver.counts.kept_node import Held
from solver_placement._solver.counts.kinds import splits
from solver_placement._solver.counts.preset import NO_TERMS
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.options import Budget, SolverOptions, SolveStatus
from solver_placement._specification.placement_spec import PlacementSpec


def kept_with_ranks(
    spec: PlacementSpec, held: Held, weights: Mapping[str, int], options: SolverOptions, budget: Budget, bound: int
) -> Answer | str:
    """``kept.py``'s answer (``contiguity`` left out of its model) on the full objective, proven
    optimal against the larger of ``bound`` (the caller's: ranks counted, the least moves added)
    and its own bound plus the least rank sum; else why not (``kept.py`` does not state the
    spec, or its value and the larger bound, which the caller declines with)."""
    moves_first = kept_by_kind if splits(spec, spec.requests) else kept_answer  # robots, whole nodes: view by view
    kept = moves_first(spec, held, {**weights, "contiguity": 0}, options, budget)
    if not isinstance(kept, Answer) or kept.bound is None:
        return "the count model without contiguity does not state its moves" if kept is None else "the count model without contiguity does not prove its moves"
    value = objective_value(spec, spec.requests, kept.assignments, weights, held)
    if value > bound:  # the caller's bound alone does not prove it: add the least rank sum to kept.py's
        ranks = count_path(spec, spec.requests, {**NO_TERMS, "contiguity": 1}, options, budget)
        if not isinstance(ranks, Answer) or ranks.status != SolveStatus.OPTIMAL:
            return "the least rank sum is not proven"
        bound = max(bound, kept.known("bound") + int(weights.get("contiguity", 0)) * ranks.known("bound"))
    if value > bound:
        return f"the layout best in moves is worth {value} with ranks, above the larger bound {bound} (moves and ranks traded, neither layout proven)"
    primary = objective_value(spec, spec.requests, kept.assignments, {**weights, "contiguity": 0}, held)
    return replace(kept, status=SolveStatus.OPTIMAL, objective=value, bound=value, primary=primary)
