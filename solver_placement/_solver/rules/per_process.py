"""What each process takes: its amount of hardware, each item once, on one node, of one type.

These are the rules a placement string or the declarative shape (``processes``,
``hardware_per_process``, ``resources`` within ``node_group``/``unit``) states for every process.
"""

from __future__ import annotations

import numpy as np

from solver_placement._errors import InternalError, Statement
from solver_placement._solver.context import ModelContext
from solver_placement._solver.rules.one_of import Unit, add_one_of
from solver_placement._solver.rules.rule import RuleOutput
from solver_placement._solver.rules.stride import enforced_stride
from solver_placement._solver.statements import amount_statement, hardware_name
from solver_placement._specification.candidates import ComponentRequest

KEYS = ("placement", "node_group", "unit", "processes", "hardware_per_process", "resources")
RULE = "per_process"
PROCESS = Unit(1, "process", ("hardware_per_process", "node_group"), RULE)


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
        if request.name in ctx.layouts:
            _add_fixed_amount(ctx, request)
            continue
        x = ctx.x[request.name]
        statements = _amount_statements(ctx, request)
        for p in ctx.paced(range(request.num_processes), f"{request.name}'s amounts"):
            lo, hi = request.indptr[p], request.indptr[p + 1]
            need = int(request.amount[p])
            ctx.model.add(sum(x[lo:hi]) == need).only_enforce_if(ctx.guard(statements[int(request.origin[p])]))


def _add_fixed_amount(ctx: ModelContext, request: ComponentRequest) -> None:
    """A rank string's processes need every candidate they have (the grammar's even split), and
    all of them share the request's layout literal: the per-process sums collapse to ``layout
    == 1``, one constraint for the whole request."""
    if not np.array_equal(request.amount, np.diff(request.indptr)):
        raise InternalError(f"{request.name}: a rank-based process needs fewer items than its candidates")
    ctx.model.add(ctx.layouts[request.name] == 1)


def _amount_statements(ctx: ModelContext, request: ComponentRequest) -> list[Statement]:
    """Per origin (segment), the statement guarding its processes' amounts; formatted only when
    explaining (a declarative request or a whole rank list has one origin, so one statement)."""
    statements = [Statement("")] * len(request.origin_text)
    if ctx.explain:
        origins, first_process = np.unique(request.origin, return_index=True)
        for origin, process in zip(origins.tolist(), first_process.tolist(), strict=True):
            statements[origin] = amount_statement(request, process)
    return statements


def add_distinct_hardware(ctx: ModelContext) -> None:
    """A process never holds one physical item twice (possible when listed groups overlap)."""
    for request in ctx.requests.values():
        if int(np.diff(request.indptr).max(initial=0)) <= 1:
            continue  # at most one candidate per process: nothing to hold twice
        # one int64 key per pair, (process, item) in lexicographic order: a single stable sort
        order = np.argsort(request.cand_process * ctx.cluster.num_hardware + request.cand_hw, kind="stable")
        hw, proc = request.cand_hw[order], request.cand_process[order]
        for i in ctx.paced(np.flatnonzero((hw[1:] == hw[:-1]) & (proc[1:] == proc[:-1])).tolist(), f"{request.name}'s distinct items"):
            said = (
                f"would hold physical item {hardware_name(ctx.cluster, int(hw[i]))} twice "
                f"(the listed node groups overlap); a process's hardware must be distinct"
            )
            if request.determined:
                text, process = f"{request.process_where(int(proc[i]))} {said}", (int(proc[i]), int(proc[i]))
                ctx.conflict(Statement(text, request.name, ("placement", "node_group"), "per_process", process, of_each=said))
            else:
                ctx.model.add(ctx.x[request.name][order[i]] + ctx.x[request.name][order[i + 1]] <= 1)


#: Node-level form: the count model places declarative components on GPU nodes (a window over
#: part of a node keeps a class off the GPUs it leaves out, ``counts/windows.py``), robots and
#: whole nodes as it places GPUs, kind by kind, node groups of several kinds in one view where
#: a process keeps to one kind (``counts/kinds.py``), and every filled window
#: first, ``topology`` rules and ``balance`` included (``counts/preset.py``: its items are known).
#: Processes of different sizes never reach it: a declarative component gives every process the
#: same ``hardware_per_process`` (``candidates.py``), and rank strings are fixed.
COUNTS = (
    "the count model states amounts per class of one process size, counts robots and whole nodes kind by kind (counts/kinds.py) "
    "and places filled windows first (counts/preset.py)"
)


#: Every counting bound starts from these rules: a component's amount is its need.
BOUND = "its amounts are the needs (bounds/needs.py) every relation is counted against"

#: First-fit form: the construction's shape keeps it (``first_fit.py`` declines a component whose
#: processes differ in amount, hardware type or candidates).
FITS = "first fit gives each process its amount of distinct window items, its group on one node, of one hardware type"
