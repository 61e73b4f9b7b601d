"""Symmetry breaking: the processes of a declarative component are interchangeable.

Any permutation of their assignments is the same placement, so the processes are ordered by
the ranks they take. This keeps the search from exploring equal layouts and makes the answer
canonical (process 0 holds the lowest ranks). No config key asks for it.

Where a collocated component's processes must each sit inside one tensor-parallel group of this
one (``collocation.py``), which processes form a group matters beyond the node: a strided
follower's process ``{h, h + 2}`` needs a group holding exactly those two GPUs, which the
processes of a group in ascending order never form when the GPUs between are the component's
too (8 processes of TP 2 on 8 GPUs would give groups ``{0, 1}``, ``{2, 3}`` ...). Such a
component's processes are interchangeable only within a group, and its groups as wholes (within
a pipeline, when a ``topology`` rule keeps pipelines together): each group is ordered, and the
groups by their first process.
"""

from __future__ import annotations

from collections.abc import Iterator

from solver_placement._solver.context import ModelContext
from solver_placement._solver.rules.rule import RuleOutput
from solver_placement._specification.placement_spec import PlacementSpec

KEYS: tuple[str, ...] = ()


def build(ctx: ModelContext, earlier: RuleOutput) -> RuleOutput:
    """``position[p] <= position[q]`` for the ordered pairs of :func:`_ordered_pairs`, where a
    position is the sum of the ranks taken."""
    hosts = _group_hosts(ctx.spec)
    for request in ctx.requests.values():
        if request.determined or request.num_processes < 2:
            continue
        ranks = request.cand_rank.tolist()
        x = ctx.x[request.name]
        bounds = request.indptr.tolist()
        processes = ctx.paced(range(request.num_processes), f"ordering {request.name}'s processes")
        position = [sum(ranks[i] * x[i] for i in range(bounds[p], bounds[p + 1])) for p in processes]
        rules = ctx.spec.components[request.name].constraints
        host = request.name in hosts and rules.tensor_parallel_size > 1
        tp = rules.tensor_parallel_size if host else 1
        pipeline = tp * rules.pipeline_parallel_size if host and any(rule.group == "pipeline_parallel" for rule in rules.topology) else 0
        for p, q in ctx.paced(list(_ordered_pairs(request.num_processes, tp, pipeline)), f"ordering {request.name}'s processes"):
            ctx.model.add(position[p] <= position[q])
    return RuleOutput()


def _group_hosts(spec: PlacementSpec) -> set[str]:
    """The rule owners some component is collocated with: their tensor-parallel groups may host
    that component's processes (``collocation.py`` nests them when a process fits in one)."""
    return {spec.owner_of(target) for component in spec.components.values() if (target := component.constraints.collocate_with) is not None}


def _ordered_pairs(processes: int, tp: int, pipeline: int) -> Iterator[tuple[int, int]]:
    """Pairs of processes whose order is fixed: neighbours in one group of ``tp`` (every
    neighbour when ``tp`` is 1), and the first processes of neighbouring groups, when both are in
    one pipeline of ``pipeline`` processes (0: no rule keeps pipelines together)."""
    for p in range(processes - 1):
        if (p + 1) % tp:
            yield p, p + 1
        elif not pipeline or (p + 1) // pipeline == (p + 1 - tp) // pipeline:
            yield p + 1 - tp, p + 1


#: Not a rule of the spec: nothing for the other stages to state.
COUNTS = "not a rule of the spec: the count model has no processes to order (it counts nodes)"
BOUND = "not a rule of the spec: it changes no count"
FITS = "not a rule of the spec: first fit numbers processes in the order it places them"
