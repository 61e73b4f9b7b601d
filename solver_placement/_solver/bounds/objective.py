"""Lower bounds on the objective's terms, by counting (no search).

Why: an answer built without search (first fit) that meets these bounds is proven best at once,
and one within a hair of them can be returned with its gap instead of waiting for the search to
prove what it cannot improve. Each bound holds for every placement of the spec:

- ``nodes``: a component needs at least as many nodes as it takes to hold its groups on the
  nodes that hold the most of them (each node's candidates alone, others ignored); a filled
  window uses exactly its nodes;
- ``balance``: some node holds at least one whole group of the widest component, and at least
  the average of all items over the nodes that may hold any;
- ``changes`` and ``topology``: 0.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from solver_placement._solver.bounds.needs import needs_of
from solver_placement._specification.placement_spec import PlacementSpec


def objective_lower_bound(spec: PlacementSpec, weights: Mapping[str, int]) -> int:
    """The weighted sum of the term bounds (``contiguity`` left out: a tie-break, bound 0)."""
    needs = {name: need for name, need in needs_of(spec).items() if not spec.requests[name].determined}
    if not needs:
        return 0
    nodes = 0
    for need in needs.values():
        if need.fixed:
            nodes += int(np.count_nonzero(need.items))
            continue
        held = np.sort(need.fits())[::-1]
        enough = np.flatnonzero(np.cumsum(held) >= need.units)
        nodes += int(enough[0]) + 1 if enough.size else 0
    widest = max(need.width for need in needs.values() if not need.fixed) if any(not n.fixed for n in needs.values()) else 0
    items = sum(need.total for need in needs.values())
    reachable = int(np.count_nonzero(sum(need.items for need in needs.values())))
    balance = max(widest, -(-items // max(reachable, 1)))
    return int(weights.get("nodes", 0)) * nodes + int(weights.get("balance", 0)) * balance
