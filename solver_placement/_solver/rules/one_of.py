"""The shared encoding of "all items of a unit share one attribute value".

Used for a process on one node or one hardware type (``per_process.py``) and for
tensor-parallel groups and pipelines inside one node or label domain (``domains.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solver_placement._errors import Statement
from solver_placement._solver.context import ModelContext
from solver_placement._solver.rules.rule import Term
from solver_placement._solver.statements import attribute_values, noun
from solver_placement._specification.candidates import ComponentRequest


@dataclass(frozen=True)
class Unit:
    """``size`` consecutive processes that must agree on an attribute, as messages name them."""

    size: int
    name: str  # "process", "tensor-parallel group", "pipeline"
    keys: tuple[str, ...]  # the config keys that ask for it (a rank string's is its placement)
    rule: str  # the rule family that states it


#: RLinf's wording of the same rule for rank strings, so code matching RLinf's messages matches ours.
RLINF_PHRASES = {
    "node": " (All hardware ranks for a process must be on the same node)",
    "hardware type": " (all hardware ranks of a process must use the same hardware type)",
}


def add_one_of(
    ctx: ModelContext,
    request: ComponentRequest,
    values: np.ndarray,
    unit: Unit,
    attribute_name: str,
    required: bool = True,
) -> list[Term]:
    """Every unit of ``request`` takes items of one value of ``values`` (per candidate).

    Units whose candidates already agree need nothing. Determined units that disagree are
    conflicts (or nothing, for a preference). Otherwise one boolean per (unit, value) with
    ``x <= chosen[value]``, and exactly one value chosen when required; when only preferred, the
    returned ``topology`` objective terms count each value beyond the first. A request with no
    candidates (a view that holds none of its items) has no unit to state.
    """
    if not request.cand_process.size:
        return []
    units = request.cand_process // unit.size
    starts = np.flatnonzero(np.r_[True, units[1:] != units[:-1]])
    spread = np.maximum.reduceat(values, starts) != np.minimum.reduceat(values, starts)
    rule = _rule(request, attribute_name)
    terms: list[Term] = []
    pieces: dict[int, list[Term]] = {}  # per value, the units that may hold items of it (by their items)
    for s in ctx.paced(np.flatnonzero(spread).tolist(), f"{request.name}: each {unit.name} on one {attribute_name}"):
        lo = starts[s]
        hi = starts[s + 1] if s + 1 < starts.size else units.size
        if request.determined:
            if required:
                spans = sorted(set(values[lo:hi].tolist()))
                where = _unit_where(request, unit, int(request.cand_process[lo]))
                lie = f"its ranks lie on {attribute_name}s {attribute_values(ctx.cluster, attribute_name, spans)}"
                first = int(request.cand_process[lo])
                said = f"{rule}, but {lie}{RLINF_PHRASES.get(attribute_name, '')}"
                keys = ("placement", *(unit.keys if unit.rule != "per_process" else ()))  # a rank string fixes the layout
                ctx.conflict(Statement(f"{where} {said}", request.name, keys, unit.rule, (first, first + unit.size - 1), of_each=said))
            continue
        chosen = {int(v): ctx.model.new_bool_var("") for v in np.unique(values[lo:hi])}
        for i in range(lo, hi):
            ctx.model.add_implication(ctx.x[request.name][i], chosen[int(values[i])])
        if required:
            statement = Statement(f"{request.name}: every {unit.name} {rule}", request.name, unit.keys, unit.rule)
            ctx.model.add(sum(chosen.values()) == 1).only_enforce_if(ctx.guard(statement))
        else:
            terms.extend((literal, 1) for literal in chosen.values())
            terms.append((ctx.model.new_constant(1), -1))
            items = int(request.amount[request.cand_process[lo] : request.cand_process[hi - 1] + 1].sum())
            for value, literal in chosen.items():
                pieces.setdefault(value, []).append((literal, items))
    if pieces:
        _bound_pieces(ctx, request, values, np.repeat(spread, np.diff(np.r_[starts, units.size])), pieces)
    return terms


def _bound_pieces(ctx: ModelContext, request: ComponentRequest, values: np.ndarray, in_spread_unit: np.ndarray, pieces: dict[int, list[Term]]) -> None:
    """Per value, the items the spread units take in it fit in those of them that hold some of it.

    Implied by the implications, but only once every item is decided: a preference's cost is
    the pieces its units are cut into, and without this row the search proves no bound on them
    (12 processes in pipelines of 3 on four racks of 4 GPUs ran out its 10 s unproven; with it,
    a rack that holds 4 items is seen at once to be cut into 2 pieces or more).
    """
    x = ctx.x[request.name]
    for value, held in ctx.paced(sorted(pieces.items()), f"{request.name}: pieces per value"):
        taken = [x[i] for i in np.flatnonzero(in_spread_unit & (values == value)).tolist()]
        ctx.model.add(sum(taken) <= sum(items * literal for literal, items in held))


def _rule(request: ComponentRequest, attribute_name: str) -> str:
    unit = noun(request)
    if unit == "node" and attribute_name == "node":
        return "must run on one node"
    return f"must have all its {unit}s on one {attribute_name}"


def _unit_where(request: ComponentRequest, unit: Unit, first_process: int) -> str:
    """A single process by its one name; a group by its index and process range."""
    if unit.size == 1:
        return request.process_where(first_process)
    return f"{request.name}: {unit.name} {first_process // unit.size} (processes {first_process}-{first_process + unit.size - 1})"
