"""The objective: a weighted sum of terms over declarative components (rank strings are fixed).

- ``changes``: previous hardware sets (``ModelContext.previous``) no process holds any more;
- ``topology``: extra label values spanned by groups whose ``topology`` rule is ``prefer``
  (returned by the domains rule);
- ``nodes``: nodes used, summed over components;
- ``balance``: the largest number of items taken on one node;
- ``contiguity``: the sum of the ranks taken (small = packed from rank 0, contiguous).

Weights come from ``cluster.solver.objective`` (read by ``_solver_settings.py``, defaults in
``DEFAULT_WEIGHTS`` there); a term of
weight 0 is not built at all. A spec of rank strings only is a pure feasibility model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from solver_placement._errors import InternalError
from solver_placement._solver.context import PAIRS_PER_CHECK, Literal, ModelContext
from solver_placement._solver.rules.rule import RuleOutput, StartLiterals, Term
from solver_placement._specification.candidates import ComponentRequest

KEYS: tuple[str, ...] = ()


def build(ctx: ModelContext, earlier: RuleOutput) -> RuleOutput:
    """Minimise the weighted terms; reads ``topology`` terms and stride starts from ``earlier``."""
    free = [request for request in ctx.requests.values() if not request.determined]
    terms: dict[str, Callable[[], Sequence[Term]]] = {
        "changes": lambda: _changes_term(ctx, free, earlier.starts),
        "nodes": lambda: _nodes_term(ctx, free),
        "balance": lambda: _balance_term(ctx, free),
        "topology": lambda: earlier.terms.get("topology", ()),
        "contiguity": lambda: _contiguity_term(ctx, free),
    }
    objective: list[Term] = []
    for name, make in terms.items():
        weight = int(ctx.weights.get(name, 0))
        if weight and free:
            objective.extend((literal, weight * coefficient) for literal, coefficient in ctx.paced(make(), f"the {name} term", PAIRS_PER_CHECK))
    if objective:
        _minimize(ctx, objective)
    return RuleOutput()


def _minimize(ctx: ModelContext, objective: Sequence[Term]) -> None:
    """``model.minimize(sum(coefficient * literal))``, written straight into the proto.

    The proto is the one CP-SAT's own flattening writes (variables ascending, a variable's
    coefficients summed, zero sums dropped, no offset), without its Python loop over the
    variables, which took 5 s for the 1.8 million terms of a 256-node spec and cannot be
    interrupted by the time limit.
    """
    terms = ctx.paced(objective, "the objective", PAIRS_PER_CHECK)
    indices = np.fromiter((literal.index for literal, _ in terms), dtype=np.int64, count=len(objective))
    if int(indices.min()) < 0:
        raise InternalError("an objective term is a negated literal, which the objective's proto writer does not expand")
    order = np.argsort(indices, kind="stable")
    variables = indices[order]
    starts = np.flatnonzero(np.r_[True, variables[1:] != variables[:-1]])
    coefficients = np.fromiter((coefficient for _, coefficient in objective), dtype=np.int64, count=len(objective))
    summed = np.add.reduceat(coefficients[order], starts)
    kept = summed != 0
    ctx.model.clear_objective()
    proto = ctx.model.proto.objective
    proto.vars.extend(variables[starts][kept].tolist())
    proto.coeffs.extend(summed[kept].tolist())
    proto.scaling_factor = 1.0


def _contiguity_term(ctx: ModelContext, free: Sequence[ComponentRequest]) -> list[Term]:
    """Every taken pair weighs its rank (rank 0 weighs nothing and is left out)."""
    return [
        (x, rank)
        for r in free
        for x, rank in ctx.paced(zip(ctx.x[r.name], r.cand_rank.tolist(), strict=True), f"{r.name}'s contiguity", PAIRS_PER_CHECK)
        if rank
    ]


def _nodes_term(ctx: ModelContext, free: Sequence[ComponentRequest]) -> list[Term]:
    """Per component and node, a literal that is true when the component uses the node.

    The pairs are grouped by node with one stable sort (ascending node, pairs in their own
    order within a node), not one scan of every pair per node, which grew as nodes x pairs.
    """
    terms = []
    for request in free:
        x = ctx.x[request.name]
        nodes = ctx.cluster.hw_node[request.cand_hw]
        if not nodes.size:
            continue
        order = np.argsort(nodes, kind="stable")
        bounds = np.flatnonzero(np.r_[True, nodes[order][1:] != nodes[order][:-1], True]).tolist()
        for lo, hi in ctx.paced(zip(bounds[:-1], bounds[1:], strict=True), f"{request.name}'s nodes"):
            node_used = ctx.model.new_bool_var("")
            ctx.model.add(sum(x[i] for i in order[lo:hi].tolist()) <= (hi - lo) * node_used)
            terms.append((node_used, 1))
    return terms


def _balance_term(ctx: ModelContext, free: Sequence[ComponentRequest]) -> list[Term]:
    """The peak number of items taken on one node, over all free components."""
    load: dict[int, list[Literal]] = {}
    for request in free:
        pairs = zip(ctx.x[request.name], ctx.cluster.hw_node[request.cand_hw].tolist(), strict=True)
        for literal, node in ctx.paced(pairs, f"{request.name}'s load per node", PAIRS_PER_CHECK):
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
        for held in ctx.paced(previous, f"{request.name}'s previous hardware"):
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


#: Its terms in the count model are ``counts/model.py``'s (``nodes`` and ``balance``; contiguity
#: a tie-break unless weighed, ``counts/weighed.py``; ``changes`` per node shape and pattern
#: kept, ``counts/kept.py``); their lower bounds are ``bounds/objective.py``'s.
COUNTS = (
    "the count model weighs nodes and balance itself and orders ties by low ranks (counts/model.py), "
    "weighs a weighed contiguity (counts/weighed.py) and the previous placements each node pattern keeps (counts/kept.py)"
)
BOUND = "the objective's lower bound is bounds/objective.py's, from the needs"
#: First fit tries several orders (``first_fit_orders.py``) and keeps the one the objective rates best.
FITS = "not a rule of the spec: first fit keeps the order whose placement the objective rates best"
