"""Symmetry breaking: the processes of a declarative component are interchangeable.

Any permutation of their assignments is the same placement, so the processes are ordered by
the ranks they take. This keeps the search from exploring equal layouts and makes the answer
canonical (process 0 holds the lowest ranks). No config key asks for it.
"""

from __future__ import annotations

from solver_placement._solver.context import ModelContext
from solver_placement._solver.rules.rule import RuleOutput

KEYS: tuple[str, ...] = ()


def build(ctx: ModelContext, earlier: RuleOutput) -> RuleOutput:
    """``position[p] <= position[p + 1]`` where a position is the sum of the ranks taken."""
    for request in ctx.requests.values():
        if request.determined or request.num_processes < 2:
            continue
        ranks = request.cand_rank.tolist()
        x = ctx.x[request.name]
        bounds = request.indptr.tolist()
        processes = ctx.paced(range(request.num_processes), f"ordering {request.name}'s processes")
        position = [sum(ranks[i] * x[i] for i in range(bounds[p], bounds[p + 1])) for p in processes]
        for p in ctx.paced(range(request.num_processes - 1), f"ordering {request.name}'s processes"):
            ctx.model.add(position[p] <= position[p + 1])
    return RuleOutput()


#: Not a rule of the spec: nothing for the other stages to state.
COUNTS = "not a rule of the spec: the count model has no processes to order (it counts nodes)"
BOUND = "not a rule of the spec: it changes no count"
FITS = "not a rule of the spec: first fit numbers processes in the order it places them"
