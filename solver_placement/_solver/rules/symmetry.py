"""Symmetry breaking: the processes of a declarative component are interchangeable.

Any permutation of their assignments is the same placement, so the processes are ordered by
the ranks they take. This keeps the search from exploring equal layouts and makes the answer
canonical (process 0 holds the lowest ranks). No config key asks for it.

Which processes form a group can matter beyond the node. Where a strided component (or a rank
string) collocated with this one must put each process inside one of its tensor-parallel groups
(``collocation.py``), a process ``{h, h + 2}`` needs a group holding exactly those two GPUs,
which the ascending order never forms when the GPUs between are this component's too (8
processes of TP 2 on 8 GPUs would give groups ``{0, 1}``, ``{2, 3}`` ...). So does a
required ``topology`` rule over a label one of whose values holds ranks that are not one run
(racks ``a, b, a``): a group inside one value may take ranks the ascending order gives another
group. So does a preferred one over a label of two values or more: racks ``a, b, b, c`` cost
less as pipelines ``{b, b}, {a, c}`` than in the ascending order.
Such a component's processes are interchangeable only within a group, its groups as wholes
(within a pipeline, when a ``topology`` rule keeps pipelines together), and its pipelines as
wholes: each group is ordered, the groups by their first process, and the pipelines by theirs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np

from solver_placement._arrays import distinct
from solver_placement._solver.context import ModelContext
from solver_placement._solver.labels import label_values
from solver_placement._solver.rules.rule import RuleOutput
from solver_placement._solver.rules.stride import enforced_stride
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.grammar import DomainRule
from solver_placement._specification.placement_spec import PlacementSpec

KEYS: tuple[str, ...] = ()


def build(ctx: ModelContext, earlier: RuleOutput) -> RuleOutput:
    """``position[p] <= position[q]`` for the ordered pairs of :func:`_ordered_pairs`, where a
    position is the sum of the ranks taken."""
    hosts = _nesting_hosts(ctx.spec, ctx.requests)
    for request in ctx.requests.values():
        if request.determined or request.num_processes < 2:
            continue
        ranks = request.cand_rank.tolist()
        x = ctx.x[request.name]
        bounds = request.indptr.tolist()
        processes = ctx.paced(range(request.num_processes), f"ordering {request.name}'s processes")
        position = [sum(ranks[i] * x[i] for i in range(bounds[p], bounds[p + 1])) for p in processes]
        rules = ctx.spec.components[request.name].constraints
        grouped = request.name in hosts or any(_order_may_break(ctx.spec, request, rule) for rule in rules.topology)
        tp = rules.tensor_parallel_size if grouped else 1
        pipeline = tp * rules.pipeline_parallel_size if grouped and any(rule.group == "pipeline_parallel" for rule in rules.topology) else 0
        for p, q in ctx.paced(list(_ordered_pairs(request.num_processes, tp, pipeline)), f"ordering {request.name}'s processes"):
            ctx.model.add(position[p] <= position[q])
    return RuleOutput()


def _nesting_hosts(spec: PlacementSpec, requests: Mapping[str, ComponentRequest]) -> set[str]:
    """The rule owners whose tensor-parallel groups must hold the processes of a component
    collocated with them that may not be runs of their ascending order (``collocation.py``
    nests a process that fits in a group): a strided one, or a rank string of several items a
    process (``[[0, 2], [1, 3]]`` on 4 GPUs in groups of 2 needs groups ``{0, 2}`` and
    ``{1, 3}``: the ascending order called it infeasible). Processes of consecutive GPUs need no
    more: disjoint runs of one length stay whole in the ascending order of their GPUs, so its
    groups of a multiple of that length hold them whole."""
    found = set()
    for component in spec.components.values():
        target = component.constraints.collocate_with
        mine = requests.get(component.rule_owner)
        if target is None or mine is None:
            continue
        fixed = mine.determined and int(mine.amount.max()) > 1
        if not fixed and enforced_stride(mine) in (None, 1):
            continue
        host = spec.owner_of(target)
        if host in requests and int(mine.amount.max()) <= int(requests[host].amount[0]) * spec.components[host].constraints.tensor_parallel_size:
            found.add(host)
    return found


def _order_may_break(spec: PlacementSpec, request: ComponentRequest, rule: DomainRule) -> bool:
    """Whether the ascending order may break ``rule`` (or pay more for it) where another order
    of the same ranks would not.

    A required rule: where every value of the label holds one run of the window's ranks, the
    ascending order keeps each group (a run of processes) inside one value whenever some order
    does; where a value's ranks are not one run (racks ``a, b, a``), it may not. A preferred rule
    pays for every value a unit spans beyond its first, and the ascending order may pay more
    whenever the window spans two values: pipelines of two on racks ``a, b, b, c`` span four
    racks in the ascending order (``{a, b}``, ``{b, c}``) and three as ``{b, b}``, ``{a, c}``."""
    order = np.argsort(request.cand_rank[: int(request.indptr[1])] if request.shared_window else request.cand_rank, kind="stable")
    window = request.cand_hw[: int(request.indptr[1])] if request.shared_window else request.cand_hw
    values = label_values(spec.cluster, rule.label)[spec.cluster.hw_node[window[order]]]
    changes = int(np.count_nonzero(values[1:] != values[:-1]))
    if not rule.required:
        return changes > 0
    return changes + 1 != distinct(values).size


def _ordered_pairs(processes: int, tp: int, pipeline: int) -> Iterator[tuple[int, int]]:
    """Pairs of processes whose order is fixed: neighbours in one group of ``tp`` (every
    neighbour when ``tp`` is 1), the first processes of neighbouring groups of one pipeline of
    ``pipeline`` processes (of any two, with 0: no rule keeps pipelines together), and the first
    processes of neighbouring pipelines."""
    for q in range(1, processes):
        if q % tp:
            yield q - 1, q
        elif not pipeline or q % pipeline:
            yield q - tp, q
        else:
            yield q - pipeline, q


#: Not a rule of the spec: nothing for the other stages to state.
COUNTS = "not a rule of the spec: the count model has no processes to order (it counts nodes)"
BOUND = "not a rule of the spec: it changes no count"
FITS = "not a rule of the spec: first fit numbers processes in the order it places them"
