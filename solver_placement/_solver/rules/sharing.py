"""How many processes of a declarative component share one item.

A declarative component whose ``resources`` window must be filled uses every item of it by the
same number of processes; otherwise an item holds at most ``max_share`` of its processes. Both
numbers follow from ``processes``, ``hardware_per_process`` and ``resources`` (keys the
per-process rule owns), so this rule owns no key of its own.
"""

from __future__ import annotations

from solver_placement._errors import Statement, counted
from solver_placement._solver.context import ModelContext
from solver_placement._solver.rules.rule import RuleOutput
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.grammar import Declarative

KEYS: tuple[str, ...] = ()
RULE = "sharing"


def build(ctx: ModelContext, earlier: RuleOutput) -> RuleOutput:
    """One count constraint per candidate item of every declarative request."""
    for request in ctx.requests.values():
        declarative = request.spec.form
        if not isinstance(declarative, Declarative):
            continue  # a rank string: the grammar's even split is already in its candidates
        for takers in ctx.paced(ctx.takers(request).values(), f"{request.name}'s sharing"):
            if request.fill_share is not None:
                window = declarative.resources or "all"
                text = f'{request.name}: every item of resources "{window}" is shared by {counted(request.fill_share, "process", "processes")}'
                statement = Statement(text, request.name, ("resources", "processes"), RULE)
                ctx.model.add(sum(takers) == request.fill_share).only_enforce_if(ctx.guard(statement))
            elif _demand_fills_items(ctx, request):
                ctx.model.add(sum(takers) == request.max_share)
            else:
                ctx.model.add(sum(takers) <= request.max_share)
    return RuleOutput()


def _demand_fills_items(ctx: ModelContext, request: ComponentRequest) -> bool:
    """True when the processes need every share of every candidate item (28 two-GPU processes
    with 56 GPUs to choose from): ``<= max_share`` then holds with equality on each item.

    Stating the equality changes no solution but lets CP-SAT see at once that an item left
    behind (say, one the symmetry rule's order no longer lets any process take) is a dead end,
    which it otherwise proves by counting over every process: 18 s for that example. The amounts
    are what make it hold, so it is left out when explaining (amounts are guarded statements).
    """
    if ctx.explain:
        return False
    return int(request.amount.sum()) == len(ctx.takers(request)) * request.max_share


#: Node-level form: the count model gives every GPU of a class's groups one process of each
#: member; a filled window (the one case this rule adds a constraint for) is declined by the
#: per-process rule's form.
COUNTS = "one process per GPU of a group is how the count model lays groups out"
BOUND = "an item's share is part of the need's width (bounds/needs.py)"

#: First-fit form: the construction places each component once, each window item once, and lays
#: a filled window out whole (``first_fit.py`` ``_place_filled``), so no item is over-shared.
FITS = "first fit gives each window item to one process of a component, and a filled window its exact share"
