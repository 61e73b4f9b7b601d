"""What each process takes: its amount of hardware, each item once, on one node, of one type.

These are the rules a placement string or the declarative shape (``processes``,
``hardware_per_process``, ``resources`` within ``node_group``/``unit``) states for every process.
"""

from __future__ import annotations

import numpy as np

from solver_placement.solver.context import ModelContext
from solver_placement.solver.rules.one_of import Unit, add_one_of
from solver_placement.solver.rules.rule import RuleOutput
from solver_placement.solver.rules.stride import enforced_stride
from solver_placement.solver.statements import amount_statement, hardware_name

KEYS = ("placement", "node_group", "unit", "processes", "hardware_per_process", "resources")
PROCESS = Unit(1, "process")


def build(ctx: ModelContext, earlier: RuleOutput) -> RuleOutput:
    """Amount, distinct items, one node, one hardware type; no objective terms."""
    add_amount(ctx)
    add_distinct_hardware(ctx)
    for request in ctx.requests.values():
        add_one_of(ctx, request, ctx.cluster.hw_node[request.cand_hw], PROCESS, "node")
    for request in ctx.requests.values():
        add_one_of(ctx, request, ctx.cluster.hw_kind[request.cand_hw], PROCESS, "hardware type")
    return RuleOutput()


def add_amount(ctx: ModelContext) -> None:
    """Each process takes exactly its requested number of hardware items."""
    for request in ctx.requests.values():
        if enforced_stride(request) is not None:
            continue  # the stride rule's patterns fix the amount
        x = ctx.x[request.name]
        for p in range(request.num_processes):
            lo, hi = request.indptr[p], request.indptr[p + 1]
            need = int(request.amount[p])
            ctx.model.add(sum(x[lo:hi]) == need).only_enforce_if(ctx.guard(amount_statement(request, p)))


def add_distinct_hardware(ctx: ModelContext) -> None:
    """A process never holds one physical item twice (possible when listed groups overlap)."""
    for request in ctx.requests.values():
        order = np.lexsort((request.cand_hw, request.cand_process))
        hw, proc = request.cand_hw[order], request.cand_process[order]
        for i in np.flatnonzero((hw[1:] == hw[:-1]) & (proc[1:] == proc[:-1])):
            statement = (
                f"{request.process_where(int(proc[i]))} would hold physical item {hardware_name(ctx.cluster, int(hw[i]))} twice "
                f"(the listed node groups overlap); a process's hardware must be distinct"
            )
            if request.determined:
                ctx.conflict(statement)
            else:
                ctx.model.add(ctx.x[request.name][order[i]] + ctx.x[request.name][order[i + 1]] <= 1)
