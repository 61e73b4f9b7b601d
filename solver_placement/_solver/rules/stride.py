"""``stride``: a declarative process takes ranks ``h, h+s, ..., h+(g-1)s`` (s = 1: a block).

The rule returns the literal choosing each process's pattern, keyed by the hardware the pattern
takes, so the ``changes`` objective term can tell whether a process keeps its old items.
"""

from __future__ import annotations

from solver_placement._errors import Statement, counted
from solver_placement._solver.context import Literal, ModelContext
from solver_placement._solver.rules.rule import RuleOutput
from solver_placement._solver.statements import noun
from solver_placement._specification.candidates import ComponentRequest

KEYS = ("stride",)
RULE = "stride"


def enforced_stride(request: ComponentRequest) -> int | None:
    """The stride this rule enforces on the request's processes, None if it has nothing to do
    (no stride, or one item per process). Where it acts, its patterns also fix how many items a
    process takes, so the amount rule leaves those processes alone."""
    if request.stride is None or int(request.amount[0]) == 1:
        return None
    return request.stride


def build(ctx: ModelContext, earlier: RuleOutput) -> RuleOutput:
    """One start literal per feasible start inside the process's candidates; each candidate is
    taken iff a chosen start covers it. Processes with the same candidates share the patterns."""
    starts: dict[str, dict[tuple[int, tuple[int, ...]], Literal]] = {}
    for request in ctx.requests.values():
        step = enforced_stride(request)
        if step is None:
            continue
        patterns_of: dict[tuple[int, ...], list[list[int]]] = {}
        for p in ctx.paced(range(request.num_processes), f"{request.name}'s stride patterns"):
            held = starts.setdefault(request.name, {})
            held.update(_add_process(ctx, request, p, step, patterns_of))
    return RuleOutput(starts=starts)


def _add_process(
    ctx: ModelContext, request: ComponentRequest, p: int, step: int, patterns_of: dict[tuple[int, ...], list[list[int]]]
) -> dict[tuple[int, tuple[int, ...]], Literal]:
    """Exactly one pattern for process ``p``; returns its start literals by the items they take."""
    need = int(request.amount[0])
    lo, hi = int(request.indptr[p]), int(request.indptr[p + 1])
    window = tuple(request.cand_rank[lo:hi].tolist())
    if window not in patterns_of:
        patterns_of[window] = _patterns(window, need, step)
    text = f"{request.name}: each process takes {counted(need, noun(request))} with stride {step}"
    guard = ctx.guard(Statement(text, request.name, ("stride", "hardware_per_process"), RULE))
    starts = [ctx.model.new_bool_var("") for _ in patterns_of[window]]
    ctx.model.add(sum(starts) == 1).only_enforce_if(guard)
    held = {}
    for start, pattern in zip(starts, patterns_of[window], strict=True):
        held[(p, tuple(int(request.cand_hw[lo + i]) for i in pattern))] = start
    covering: list[list[Literal]] = [[] for _ in window]
    for start, pattern in zip(starts, patterns_of[window], strict=True):
        for i in pattern:
            covering[i].append(start)
    for i in range(len(window)):
        ctx.model.add(ctx.x[request.name][lo + i] == sum(covering[i])).only_enforce_if(guard)
    return held


def _patterns(window: tuple[int, ...], need: int, step: int) -> list[list[int]]:
    """Positions in ``window`` of every progression of ``need`` ranks ``step`` apart in it."""
    position = {rank: i for i, rank in enumerate(window)}
    return [
        [position[rank + k * step] for k in range(need)]
        for rank in window
        if all(rank + k * step in position for k in range(need))
    ]


#: Node-level form: the count model lays a class's GPUs out in blocks of ``amount * stride``
#: consecutive GPUs where they tile its tensor-parallel groups, and in progressions ``stride``
#: apart, checked GPU by GPU on every node, where they do not (``counts/strided.py``).
COUNTS = "stated: blocks that tile a group, progressions that do not (counts/strided.py)"

BOUND = "a stride changes which items a process takes, not how many (counted with its amount)"

#: First-fit form: the construction interleaves its blocks (``first_fit.py`` ``_take_in_blocks``).
FITS = "first fit deals each block of amount * stride items out among stride processes"
