"""The objective: a weighted sum of terms over declarative components (rank strings are fixed).

- ``changes``: previous hardware sets (``ModelContext.previous``) no process holds any more;
- ``topology``: extra label values spanned by groups whose ``topology`` rule is ``prefer``
  (returned by the domains rule);
- ``nodes``: nodes used, summed over components;
- ``balance``: the largest number of items taken on one node;
- ``contiguity``: the sum of the ranks taken (small = packed from rank 0, contiguous).

Weights come from ``cluster.solver.objective`` (defaults in ``DEFAULT_WEIGHTS``); a term of
weight 0 is not built at all. A spec of rank strings only is a pure feasibility model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from solver_placement.config import check_keys, positive_int
from solver_placement.errors import PlacementConfigError
from solver_placement.solver.context import Literal, ModelContext
from solver_placement.solver.rules.rule import RuleOutput, StartLiterals, Term
from solver_placement.spec.candidates import ComponentRequest

#: Objective weight of each term (see above); a user gives any subset.
DEFAULT_WEIGHTS = {"changes": 1_000_000, "topology": 100_000, "nodes": 10_000, "balance": 0, "contiguity": 1}
#: The key of ``cluster.solver`` that holds the weights.
SECTION_KEY = "objective"
OBJECTIVE_SECTION = f"cluster.solver.{SECTION_KEY}"
KEYS: tuple[str, ...] = ()


def objective_weights(configured: Any, overrides: Mapping[str, Any] | None = None) -> dict[str, int]:
    """The validated weights a config section (``configured``) and keyword overrides give;
    terms not named keep their default."""
    if not isinstance(configured, Mapping):
        raise PlacementConfigError(f"{OBJECTIVE_SECTION} must map term names to integer weights")
    raw = {**configured, **(overrides or {})}
    check_keys(raw, DEFAULT_WEIGHTS, OBJECTIVE_SECTION)
    return {key: positive_int(value, f"{OBJECTIVE_SECTION}.{key}", allow_zero=True) for key, value in raw.items()}


def build(ctx: ModelContext, earlier: RuleOutput) -> RuleOutput:
    """Minimise the weighted terms; reads ``topology`` terms and stride starts from ``earlier``."""
    free = [request for request in ctx.requests.values() if not request.determined]
    terms: dict[str, Callable[[], Sequence[Term]]] = {
        "changes": lambda: _changes_term(ctx, free, earlier.starts),
        "nodes": lambda: _nodes_term(ctx, free),
        "balance": lambda: _balance_term(ctx, free),
        "topology": lambda: earlier.terms.get("topology", ()),
        "contiguity": lambda: [(x, int(rank)) for r in free for x, rank in zip(ctx.x[r.name], r.cand_rank.tolist(), strict=True) if rank],
    }
    objective: list[Term] = []
    for name, make in terms.items():
        weight = int(ctx.weights.get(name, 0))
        if weight and free:
            objective.extend((literal, weight * coefficient) for literal, coefficient in make())
    if objective:
        ctx.model.minimize(sum(coefficient * literal for literal, coefficient in objective))
    return RuleOutput()


def _nodes_term(ctx: ModelContext, free: Sequence[ComponentRequest]) -> list[Term]:
    """Per component and node, a literal that is true when the component uses the node."""
    terms = []
    for request in free:
        x = ctx.x[request.name]
        nodes = ctx.cluster.hw_node[request.cand_hw]
        for node in np.unique(nodes):
            on_node = np.flatnonzero(nodes == node)
            node_used = ctx.model.new_bool_var("")
            ctx.model.add(sum(x[i] for i in on_node) <= int(on_node.size) * node_used)
            terms.append((node_used, 1))
    return terms


def _balance_term(ctx: ModelContext, free: Sequence[ComponentRequest]) -> list[Term]:
    """The peak number of items taken on one node, over all free components."""
    load: dict[int, list[Literal]] = {}
    for request in free:
        for literal, node in zip(ctx.x[request.name], ctx.cluster.hw_node[request.cand_hw].tolist(), strict=True):
            load.setdefault(node, []).append(literal)
    peak = ctx.model.new_int_var(0, max(len(items) for items in load.values()), "peak items on a node")
    for items in load.values():
        ctx.model.add(sum(items) <= peak)
    return [(peak, 1)]


def _changes_term(ctx: ModelContext, free: Sequence[ComponentRequest], starts: StartLiterals) -> list[Term]:
    """One literal per previous hardware set that is given up (weight 1 each).

    A single old item is kept if any process takes it; a set of several is kept only if some
    process takes exactly that set, which for strided components is one pattern's start.
    """
    terms = []
    for request in free:
        previous = ctx.previous.get(request.name, ())
        for held in previous:
            old = tuple(sorted(held))
            if len(old) == 1:
                takers = ctx.takers(request).get(old[0], [])
            else:
                takers = [start for (_, hw), start in starts.get(request.name, {}).items() if tuple(sorted(hw)) == old]
            kept = ctx.model.new_bool_var("")
            ctx.model.add(kept <= sum(takers)) if takers else ctx.model.add(kept == 0)
            terms.append((kept, -1))
        if previous:
            terms.append((ctx.model.new_constant(1), len(previous)))
    return terms
