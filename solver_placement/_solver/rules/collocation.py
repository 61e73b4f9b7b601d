"""``collocate_with``: a component uses exactly its target's hardware set, and nests in it.

Nesting: each process of the component sits inside one tensor-parallel group of the target
when a process fits in one and every item of the target belongs to one of its processes, so a
collocated model's process never straddles two of the target's groups.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from solver_placement._arrays import distinct
from solver_placement._errors import Statement, counted
from solver_placement._solver.bounds.needs import Need
from solver_placement._solver.bounds.relations import TOGETHER, Relation, everywhere
from solver_placement._solver.context import PAIRS_PER_CHECK, Literal, ModelContext
from solver_placement._solver.rules.rule import RuleOutput
from solver_placement._solver.statements import noun
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec

KEYS = ("collocate_with",)
RULE = "collocation"


def build(ctx: ModelContext, earlier: RuleOutput) -> RuleOutput:
    """Same hardware set (per item: used by one iff used by the other), then nesting."""
    for spec in ctx.spec.components.values():
        target_name = spec.constraints.collocate_with
        if target_name is None:
            continue
        mine, target = ctx.owner(spec.name), ctx.owner(target_name)
        statement = collocation_statement(spec.name, target_name)
        if mine.determined and target.determined:
            extra, missing = ctx.used_set(mine) - ctx.used_set(target), ctx.used_set(target) - ctx.used_set(mine)
            if extra or missing:
                ctx.conflict(replace(statement, text=(
                    f"{statement.text}, but {spec.name} uses {counted(len(extra), 'item')} outside {target_name} "
                    f"and leaves {len(missing)} of {target_name}'s unused"
                )))  # fmt: skip
        else:
            guard = ctx.guard(statement)
            for hw in ctx.paced(sorted(set(mine.cand_hw.tolist()) | set(target.cand_hw.tolist())), statement.text):
                ctx.model.add(ctx.used(mine, hw) == ctx.used(target, hw)).only_enforce_if(guard)
        _add_nesting(ctx, spec.name, mine, target)
    return RuleOutput()


def collocation_statement(name: str, target: str) -> Statement:
    """``name``'s ``collocate_with``, as every stage words it."""
    return Statement(f"{name} collocates with {target} (same hardware set)", name, KEYS, RULE, others=(target,))


def _nesting_statement(name: str, target: str, text: str) -> Statement:
    return Statement(text, name, (*KEYS, "stride"), RULE, others=(target,))


def _add_nesting(ctx: ModelContext, name: str, mine: ComponentRequest, target: ComponentRequest) -> None:
    """Each process of ``mine`` inside one TP group of ``target``, when a process fits in one
    and every item of the target belongs to one of its processes."""
    tp = ctx.spec.components[target.name].constraints.tensor_parallel_size
    if distinct(target.amount).size != 1 or int(mine.amount.max()) > int(target.amount[0]) * tp:
        return
    if not target.determined:
        if target.max_share == 1:
            if _unsplittable(mine, target, tp):
                width, amount = int(target.amount[0]) * tp, int(mine.amount[0])
                text = f"each {name} process ({counted(amount, noun(mine))}) sits inside one tensor-parallel group of {target.name} ({counted(width, noun(target))}), and {width} do not split into processes of {amount}"
                ctx.conflict(_nesting_statement(name, target.name, text))
                return
            _add_nesting_in_free_target(ctx, name, mine, target, tp)
        return
    group_items = int(target.amount[0]) * tp
    if target.window_items.size != target.cand_hw.size:
        return
    text = f"each {name} process sits inside one tensor-parallel group of {target.name} ({counted(group_items, noun(target))})"
    statement = _nesting_statement(name, target.name, text)
    if mine.determined:
        for p in _outside_one_group(mine, target, tp, ctx.spec.cluster.num_hardware):
            ctx.conflict(replace(statement, text=f"{mine.process_where(p)}: {text}", processes=(p, p), of_each=text))
        return
    group_of_hw = dict(zip(target.cand_hw.tolist(), (target.cand_process // tp).tolist(), strict=True))
    guard = ctx.guard(statement)
    x = ctx.x[mine.name]
    for p in ctx.paced(range(mine.num_processes), text):
        lo, hi = mine.indptr[p], mine.indptr[p + 1]
        hosts = [group_of_hw.get(int(h)) for h in mine.cand_hw[lo:hi]]
        host = {g: ctx.model.new_bool_var("") for g in sorted({g for g in hosts if g is not None})}
        ctx.model.add(sum(host.values()) == 1).only_enforce_if(guard)
        for i, g in zip(range(lo, hi), hosts, strict=True):
            if g is None:
                ctx.model.add(x[i] == 0).only_enforce_if(guard)
            else:
                ctx.model.add_implication(x[i], host[g])


def _outside_one_group(mine: ComponentRequest, target: ComponentRequest, tp: int, num_hardware: int) -> list[int]:
    """The processes of the determined ``mine`` whose items are not all in one TP group of the
    determined ``target`` (each of whose items one process holds), by arrays: a re-plan pins a
    collocated pair of hundreds of thousands of processes (0.9 s one set per process)."""
    group_of = np.full(num_hardware, -1, dtype=np.int64)
    group_of[target.cand_hw] = target.cand_process // tp
    groups = group_of[mine.cand_hw]
    lengths = np.diff(mine.indptr)
    outside = lengths == 0  # a process holding nothing is in no group
    holding = np.flatnonzero(~outside)
    if holding.size:
        starts = mine.indptr[:-1][holding]
        least, most = np.minimum.reduceat(groups, starts), np.maximum.reduceat(groups, starts)
        outside[holding] = (least != most) | (least < 0)
    return np.flatnonzero(outside).tolist()


def _unsplittable(mine: ComponentRequest, target: ComponentRequest, tp: int) -> bool:
    """Whether no layout nests ``mine`` in ``target``'s TP groups: both hold each item once, so
    every group's items (all of them ``mine``'s: the same hardware set) are whole processes of
    ``mine``, which a group width its process size does not divide cannot be. Refused when the
    model is built: the search alone spent its whole limit proving it (2 GPUs a process in
    groups of 3 GPUs, 32 GPUs: 5 s)."""
    if mine.max_share != 1 or np.unique(mine.amount).size != 1 or target.num_processes % tp:
        return False
    return bool((int(target.amount[0]) * tp) % int(mine.amount[0]))


def _add_nesting_in_free_target(ctx: ModelContext, name: str, mine: ComponentRequest, target: ComponentRequest, tp: int) -> None:
    """Nesting when the target's layout is itself being chosen: each item gets the index of the
    target TP group holding it (an int variable), and all items of a process of ``mine`` must
    carry the same index."""
    groups = -(-target.num_processes // tp)
    group_terms: dict[int, list[tuple[Literal, int]]] = {}
    pairs = zip(ctx.x[target.name], target.cand_hw.tolist(), target.cand_process.tolist(), strict=True)
    for literal, hw, process in ctx.paced(pairs, f"{target.name}'s tensor-parallel groups", PAIRS_PER_CHECK):
        group_terms.setdefault(hw, []).append((literal, process // tp))
    group_of: dict[int, Any] = {}
    guard = ctx.guard(_nesting_statement(name, target.name, f"each {name} process sits inside one tensor-parallel group of {target.name}"))
    x = ctx.x[mine.name]
    for p in ctx.paced(range(mine.num_processes), f"{name} nests in {target.name}"):
        host = ctx.model.new_int_var(0, groups - 1, "")
        for i in ctx.paced(range(int(mine.indptr[p]), int(mine.indptr[p + 1])), f"{name} nests in {target.name}"):
            hw = int(mine.cand_hw[i])
            if hw not in group_terms:
                ctx.model.add(x[i] == 0).only_enforce_if(guard)
                continue
            if hw not in group_of:
                group_of[hw] = ctx.model.new_int_var(0, groups - 1, "")
                ctx.model.add(group_of[hw] == sum(g * literal for literal, g in group_terms[hw]))
            ctx.model.add(group_of[hw] == host).only_enforce_if(x[i], *guard)


def bound(spec: PlacementSpec, needs: Mapping[str, Need]) -> Iterator[Relation]:
    """Counting: collocated owners use the same number of items on every node."""
    for component in spec.components.values():
        target = component.constraints.collocate_with
        if target is not None and component.rule_owner != spec.owner_of(target):
            statement = collocation_statement(component.name, target)
            yield Relation(statement, TOGETHER, component.rule_owner, spec.owner_of(target), everywhere(spec))




#: Node-level form: the count model nests a declarative collocated component in its target's
#: groups (the target's class, ``counts/problem.py``) and places one collocated with a rank string
#: first, whatever its other rules (``counts/preset.py``: its items are its target's, so its
#: ``nodes``, ``topology`` and per-node ``balance`` load are known once it is placed).
COUNTS = "stated: a class's members nest in its root (counts/problem.py); a component on a rank string's items is placed first (counts/preset.py)"

#: First-fit form: the construction places a collocated component on exactly its target's items,
#: right after the target (``first_fit.py`` ``_place_collocated``, ``first_fit_orders.py``).
FITS = "first fit gives a collocated component exactly its target's items, group by group"
