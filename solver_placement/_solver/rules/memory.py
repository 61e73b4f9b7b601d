"""GPU memory of collocated components (``memory_gb`` and the ``offload_*`` switches).

Collocated components time-share a GPU: while one runs (its ``active`` memory per process), the
others keep their ``idle`` memory (what offloading leaves resident). Every such mix must fit the
GPU's memory. Components without ``memory_gb`` count as zero; GPUs of unknown memory are not
checked.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

import numpy as np

from solver_placement._arrays import distinct
from solver_placement._constants import ACCELERATOR
from solver_placement._errors import Statement
from solver_placement._solver.bounds.needs import Need
from solver_placement._solver.bounds.relations import APART, ROOM, Relation
from solver_placement._solver.context import ModelContext
from solver_placement._solver.rules.rule import Placed, RuleOutput
from solver_placement._solver.statements import hardware_name
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.grammar import Memory
from solver_placement._specification.placement_spec import PlacementSpec

KEYS = ("memory_gb", "offload_weight", "offload_optimizer", "offload_grad")
RULE = "memory"

#: (component name, the request placing it, its memory need)
Holder = tuple[str, ComponentRequest, Memory]


def build(ctx: ModelContext, earlier: RuleOutput) -> RuleOutput:
    """Per GPU of known memory that a component with ``memory_gb`` may use, one constraint per
    component that may be the one running."""
    holders: list[Holder] = [
        (spec.name, ctx.owner(spec.name), memory)
        for spec in ctx.spec.components.values()
        if (memory := spec.constraints.memory) is not None
    ]
    if holders and all(request.determined for _, request, _ in holders):
        _check_fixed(ctx, holders)
        return RuleOutput()
    for hw in ctx.paced(sorted({hw for _, request, _ in holders for hw in ctx.takers(request)}), "GPU memory"):
        limit = ctx.cluster.gpu_memory_gb[int(ctx.cluster.hw_node[hw])]
        if limit is not None and ctx.cluster.kind_of(hw) == ACCELERATOR:
            _add_gpu(ctx, holders, hw, limit)
    return RuleOutput()


def _add_gpu(ctx: ModelContext, holders: list[Holder], hw: int, limit: float) -> None:
    loads = [(name, memory, _load(ctx, request, hw)) for name, request, memory in holders]
    for running, _, _ in loads:
        terms = [(load, megabytes(memory.active if name == running else memory.idle)) for name, memory, load in loads]
        fixed = sum(mb * load for load, mb in terms if isinstance(load, int))
        statement = _statement(holders, running, limit)
        if all(isinstance(load, int) for load, _ in terms):
            if fixed > megabytes(limit):
                ctx.conflict(_broken(ctx, statement, hw, fixed))
            continue
        variable = sum(mb * load for load, mb in terms if not isinstance(load, int))
        ctx.model.add(fixed + variable <= megabytes(limit)).only_enforce_if(ctx.guard(statement))


def _check_fixed(ctx: ModelContext, holders: list[Holder]) -> None:
    """Rank strings alone (``build.fixed_conflicts``): every load is a constant, so each GPU is
    checked by arrays and a statement made only where it breaks, in the order :func:`_add_gpu`
    finds them (GPU, then the component running). Made per GPU and component, the statements
    of 3,566 loaded GPUs cost 0.14 s of ``fixed loads:876:2``'s 0.44 s."""
    cluster = ctx.cluster
    ctx.check("building the model (GPU memory)")
    ids = distinct(np.concatenate([request.cand_hw for _, request, _ in holders]))  # (numpy's hash-based ``unique``: 0.11 s on 65,536 nodes)
    limits = memory_per_gpu(cluster.gpu_memory_gb)[cluster.hw_node[ids]]
    checked = (limits >= 0) & (cluster.hw_kind[ids] == cluster.kinds.index(ACCELERATOR))  # GPUs of known memory
    ids, limits = ids[checked], limits[checked]
    loads = np.array([np.bincount(request.cand_hw, minlength=cluster.num_hardware)[ids] for _, request, _ in holders], dtype=np.int64)  # holder x GPU
    idle = np.array([megabytes(memory.idle) for _, _, memory in holders], dtype=np.int64)
    active = np.array([megabytes(memory.active) for _, _, memory in holders], dtype=np.int64)
    needed = idle @ loads + ((active - idle)[:, None] * loads)  # running component x GPU: its processes active, the rest idle
    for at, running in np.argwhere((needed > limits[None, :]).T).tolist():  # by GPU, then the component running
        hw = int(ids[at])
        statement = _statement(holders, holders[running][0], cast(float, cluster.gpu_memory_gb[int(cluster.hw_node[hw])]))  # known: the GPUs of unknown memory are left out
        ctx.conflict(_broken(ctx, statement, hw, int(needed[running, at])))


def _statement(holders: list[Holder], running: str, limit: float) -> Statement:
    """The rule on a GPU of ``limit`` GB while ``running`` runs, the other holders idle."""
    idle = ", ".join(f"{name} {memory.idle:g}" for name, _, memory in holders if name != running)
    active = next(memory.active for name, _, memory in holders if name == running)
    others = f" with the others idle ({idle} GB)" if idle else ""  # alone on the GPU: nothing idles beside it
    text = f"GPU memory: {running} running ({active:g} GB per process){others} must fit {limit:g} GB per GPU"
    return Statement(text, running, ("memory_gb",), RULE, others=tuple(name for name, _, _ in holders if name != running))


def _broken(ctx: ModelContext, statement: Statement, hw: int, needed: int) -> Statement:
    """``statement`` broken on ``hw``, which the rank strings' processes there load with ``needed`` MB."""
    return replace(statement, text=f"{statement.text}, but {hardware_name(ctx.cluster, hw)} would need {needed / 1024:g} GB")


def _load(ctx: ModelContext, request: ComponentRequest, hw: int) -> Any:
    """Processes of ``request`` on ``hw``: a constant for determined requests, else a sum."""
    takers = ctx.takers(request).get(hw, [])
    return len(takers) if request.determined else sum(takers)


def megabytes(gigabytes: float) -> int:
    """Whole megabytes, rounded up, so the constraint is integer and never under-counts (the count
    model and first fit count the same way, so all three agree on what fits)."""
    return math.ceil(gigabytes * 1024)  # math's ceil of the same float: numpy's scalar call took 1 us a node


def memory_per_gpu(memory: Sequence[float | None]) -> np.ndarray:
    """Per node, the memory (MB) of each of its GPUs (-1: unknown, not checked): converted once
    per distinct value (a cluster has a few; one conversion per node took 0.05-0.1 s a call on
    65,536 nodes)."""
    converted = {gb: -1 if gb is None else megabytes(gb) for gb in set(memory)}
    return np.fromiter(map(converted.__getitem__, memory), dtype=np.int64, count=len(memory))


def bound(spec: PlacementSpec, needs: Mapping[str, Need]) -> Iterator[Relation]:
    """Counting, per distinct GPU size: an owner whose memory alone overflows a GPU has no room
    there; two owners that do not fit one GPU together are apart there."""
    cluster = spec.cluster
    holders: dict[str, list[tuple[str, Memory]]] = {}
    for component in spec.components.values():
        if component.constraints.memory is not None:
            holders.setdefault(component.rule_owner, []).append((component.name, component.constraints.memory))
    if not holders:
        return
    limits = {m for m in cluster.gpu_memory_gb if m is not None}
    owners = list(holders)
    for limit in sorted(limits):
        on = np.array([m == limit for m in cluster.gpu_memory_gb], dtype=bool)
        for position, first in enumerate(owners):
            gpus = on & _gpu_only(spec, needs[first])
            too_much = _overflow(holders[first], limit)
            if too_much and gpus.any():
                yield Relation(too_much, ROOM, first, first, gpus, np.zeros(cluster.num_nodes, dtype=np.int64))
                continue
            for second in owners[position + 1:]:
                together = _overflow([*holders[first], *holders[second]], limit)
                both = gpus & _gpu_only(spec, needs[second])
                if together and both.any() and needs[first].items[both].any() and needs[second].items[both].any():
                    yield Relation(together, APART, first, second, both)


def _gpu_only(spec: PlacementSpec, need: Need) -> np.ndarray:
    """Per node: every candidate item of ``need`` there is a GPU (the memory rule's items)."""
    cluster = spec.cluster
    others = need.hardware[cluster.hw_kind[need.hardware] != cluster.kinds.index(ACCELERATOR)]
    return np.bincount(cluster.hw_node[others], minlength=cluster.num_nodes) == 0


def _overflow(holders: Sequence[tuple[str, Memory]], limit: float) -> Statement | None:
    """The memory rule's statement that one process of each holder on one GPU breaks, if any."""
    for running, memory in holders:
        idle = [(name, other.idle) for name, other in holders if name != running]
        if memory.active + sum(gb for _, gb in idle) > limit:
            listed = ", ".join(f"{name} {gb:g}" for name, gb in idle)
            others = f" with the others idle ({listed} GB)" if idle else ""
            text = f"GPU memory: {running} running ({memory.active:g} GB per process){others} must fit {limit:g} GB per GPU"
            return Statement(text, running, ("memory_gb",), "memory", others=tuple(name for name, _ in idle))
    return None


#: The count model's form: pairs of classes whose memory does not fit one GPU together may not
#: share one (``counts/stacks.py``), and a rank string's memory sits on its GPUs as a fixed load
#: that a GPU's stacks must fit beside (``counts/fixed_loads.py``).
COUNTS = "stated by the count model's stacks per GPU memory and the rank strings' loads (counts/stacks.py, counts/fixed_loads.py)"


def fits(placed: Placed, coming: tuple[str, ...], items: np.ndarray) -> np.ndarray:
    """First fit: whether every mix of running and idle components still fits each GPU's memory
    with one more process of each request in ``coming`` (whole megabytes, as ``build`` counts);
    items other than GPUs, and GPUs of unknown memory, always fit."""
    spec = placed.spec
    holders = [(c.rule_owner, c.constraints.memory) for c in spec.components.values() if c.constraints.memory]
    if not holders:
        return np.ones(items.size, dtype=bool)
    cluster = spec.cluster
    limits = np.array([np.nan if m is None else m for m in cluster.gpu_memory_gb], dtype=float)[cluster.hw_node[items]]
    checked = ~np.isnan(limits) & (cluster.hw_kind[items] == cluster.kinds.index(ACCELERATOR))
    loads = [placed.on(owner)[items] + (owner in coming) for owner, _ in holders]
    room = np.ceil(np.nan_to_num(limits) * 1024)
    ok = np.ones(items.size, dtype=bool)
    for running in range(len(holders)):
        need = sum(megabytes(m.active if i == running else m.idle) * load for i, ((_, m), load) in enumerate(zip(holders, loads, strict=True)))
        ok &= need <= room
    return ok | ~checked
