"""Declarative components whose items are known, placed before the counts.

Two rules fix a declarative component's items before any choice: ``collocate_with`` a rank
string (it uses exactly its target's items), and a filled ``resources`` window (every item of
the window used, ``fill_share`` processes each). Only which of its processes takes which item
is left, and that touches no other component (exclusivity and process limits see items, not
processes). So the count path places such a component first and counts the rest with it as a
rank string. It tiles the items directly (milliseconds: in the target's tensor-parallel groups,
so a process nests in one, each group in rank order, cut into blocks of ``amount * stride``
interleaved among ``stride`` processes), checked with the rank strings by the independent
verifier, and asks the flat model of the component and the rank strings alone only when that
tiling breaks a rule (sizes, strides, tensor-parallel groups on one node, required domains,
nesting) or may span more preferred domains than it must. The placement is exact and the
objective's terms for it are known once it is placed: the nodes its items are on (``nodes``),
the domains its units span beyond their first (``topology``: its arrangement touches no other
component, so the least of it is found here, by the tiling when it spans none, else by that
model, which minimises it), and its per-node load, which ``balance`` adds to every node's
(``Preset.load``: a constant per node the count model adds to its patterns' load).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._arrays import distinct
from solver_placement._errors import InternalError, VerificationError
from solver_placement._solver.answer import Declined, PathName, by_component
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.build import build_model
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.exact import solve_polished
from solver_placement._solver.options import Budget, SolverOptions, SolveStatus
from solver_placement._solver.solution import Solution
from solver_placement._solver_settings import DEFAULT_WEIGHTS
from solver_placement._specification.candidates import ComponentRequest, expand_all
from solver_placement._specification.placement_spec import PlacementSpec
from solver_placement._verify import verify

log = logging.getLogger(__name__)

#: Most (process, item) pairs of the flat model that places one component first when tiling its
#: target's items directly breaks a rule: that model costs about a second per 10,000 pairs, and
#: the flat model of the whole spec is no slower past it.
MAX_PRESET_PAIRS = 5_000


@dataclass(frozen=True)
class Preset:
    """The requests with every declarative component whose items are known (collocated with a
    rank string, directly or through one placed first, or a filled window) placed, as rank
    strings; the ``nodes`` and ``topology`` terms those add, and their items per node (what
    they add to the ``balance`` term's load of each node)."""

    requests: dict[str, ComponentRequest]
    nodes: int
    topology: int
    load: np.ndarray


def preset(
    spec: PlacementSpec, requests: Mapping[str, ComponentRequest], weights: Mapping[str, int], options: SolverOptions, budget: Budget
) -> Preset | Declined:
    """Components whose items are known placed, in config order until none is left; why not,
    when one has no layout on its items, or its preferred domains' least cost is not proven.

    Every such component is tiled first and the whole checked once by the verifier (checking
    each as it is placed costs a verification per component, each over everything placed so
    far: quadratic in the components). Only when that whole tiling breaks a rule is each
    checked as it is placed, and a tiling that breaks one replaced by the flat model's layout.
    A per-item rule that holds for all the components holds for any of them, so the careful
    pass would keep every tiling the whole check accepted: the two passes agree wherever the
    first one answers."""
    together = _placed_in_order(spec, requests, weights, options, budget, check_each=False)
    careful = together or _placed_in_order(spec, requests, weights, options, budget, check_each=True)
    if careful is None:
        raise InternalError("the careful pass of preset() keeps or replaces every tiling: it always answers")
    return careful


def _placed_in_order(
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    weights: Mapping[str, int],
    options: SolverOptions,
    budget: Budget,
    check_each: bool,
) -> Preset | Declined | None:
    """:func:`preset`'s pass: each known component checked as it is placed (``check_each``), or
    all of them tiled and checked once at the end, None when a tiling is not kept (the careful
    pass decides then)."""
    placed = dict(requests)
    nodes = topology = 0
    load = np.zeros(spec.cluster.num_nodes, dtype=np.int64)
    while (known := _next_known(spec, placed)) is not None:
        name, target = known
        request = placed[name] if target is None else _on_items(placed[name], placed[target])
        rank_strings = {n: r for n, r in placed.items() if r.determined}
        tiled = _tiling(spec, request, None if target is None else placed[target])
        if tiled is not None and check_each and not _holds(_view(spec, {name, *rank_strings}), {**rank_strings, name: tiled}):
            log.debug("%s: the direct tiling of its items breaks a rule: the flat model of it places it", name)
            tiled = None
        if tiled is not None and _extra_domains(spec, requests[name], tiled):  # a preference the tiling does not keep: the model minimises it
            tiled = None
        if tiled is None and not check_each:
            return None
        fixed = tiled or _placed(_view(spec, {name, *rank_strings}), name, {name: request, **rank_strings}, weights, options, budget)
        if fixed is None:
            items = "its filled window" if target is None else f"the items of {target}, which it collocates with,"
            return Declined(PathName.COUNTS, f"{name}: no layout on {items} found by tiling or by a model of at most MAX_PRESET_PAIRS={MAX_PRESET_PAIRS:,} pairs")
        placed[name] = fixed
        on_nodes = spec.cluster.hw_node[fixed.cand_hw]
        nodes += int(distinct(on_nodes).size)
        topology += _extra_domains(spec, requests[name], fixed)
        load += np.bincount(on_nodes, minlength=spec.cluster.num_nodes)
    if not check_each:
        rank_strings = {n: r for n, r in placed.items() if r.determined}
        tiled_now = {n for n in rank_strings if not requests[n].determined}
        if tiled_now and not _holds(_view(spec, set(rank_strings)), rank_strings):
            return None
    return Preset(placed, nodes, topology, load)


def placed_first(spec: PlacementSpec) -> frozenset[str]:
    """The rule owners :func:`preset` places (their items known before any count), from the
    spec's requests: their preferred domains are priced there, not by ``preferred.py``."""
    requests = dict(spec.requests)
    found = set()
    while (known := _next_known(spec, requests)) is not None:
        found.add(known[0])
        requests[known[0]] = replace(requests[known[0]], determined=True)
    return frozenset(found)


def _next_known(spec: PlacementSpec, requests: Mapping[str, ComponentRequest]) -> tuple[str, str | None] | None:
    """The first declarative rule owner with known items: with the rank-string rule owner it
    collocates with (either way round), or None for a filled window; None when there is none."""
    for component in spec.components.values():
        target = component.constraints.collocate_with
        owner = spec.owner_of(component.name)
        if target is not None:
            pair = (owner, spec.owner_of(target))
            fixed = [requests[name].determined for name in pair]
            if fixed.count(True) == 1:
                free, rank_string = pair if fixed[1] else pair[::-1]
                return free, rank_string
        request = requests[owner]
        if not request.determined and request.fill_share is not None:
            return owner, None
    return None


def _extra_domains(spec: PlacementSpec, request: ComponentRequest, placed: ComponentRequest) -> int:
    """The ``topology`` term's count for ``placed``, the layout of the free ``request``: the
    domains its units span beyond their first, over its preferred rules."""
    if all(rule.required for c in spec.components.values() if c.rule_owner == request.name for rule in c.constraints.topology):
        return 0
    assignment = Assignment(placed.indptr, placed.cand_hw, placed.cand_rank, spec.cluster.num_hardware)
    return objective_value(spec, {request.name: request}, {request.name: assignment}, {**NO_TERMS, "topology": 1}, {})


#: Every objective term at weight 0 (``objective_value`` reads weights over the defaults).
NO_TERMS = dict.fromkeys(DEFAULT_WEIGHTS, 0)


def _on_items(request: ComponentRequest, target: ComponentRequest) -> ComponentRequest:
    """``request`` with its window cut to the items ``target`` holds (one shared window)."""
    window = slice(int(request.indptr[0]), int(request.indptr[1]))
    keep = np.isin(request.cand_hw[window], target.cand_hw)
    hardware, ranks = request.cand_hw[window][keep], request.cand_rank[window][keep]
    return replace(request, indptr=np.array([0, hardware.size]), cand_hw=hardware, cand_rank=ranks, shared_window=True)


def _view(spec: PlacementSpec, present: set[str]) -> PlacementSpec:
    """The spec of the ``present`` rule owners' components alone (rules naming the others
    dropped: the declarative ones are counted later and see the placed component as a rank
    string)."""
    components = {}
    for component in spec.components.values():
        if component.rule_owner in present:
            rules = component.constraints
            exclusive = tuple(o for o in rules.exclusive_with if spec.owner_of(o) in present)
            partner = rules.collocate_with if rules.collocate_with is not None and spec.owner_of(rules.collocate_with) in present else None
            components[component.name] = replace(component, constraints=replace(rules, exclusive_with=exclusive, collocate_with=partner))
    return spec.with_rules(components)


def _tiling(spec: PlacementSpec, request: ComponentRequest, target: ComponentRequest | None) -> ComponentRequest | None:
    """The processes of ``request`` tiling its items directly: its ``target``'s, group by group
    of the target (its tensor-parallel groups, so a process nests in one), or its filled window
    (each block of ``amount`` ranks ``fill_share`` times in turn, as the flat model orders
    processes by first rank), each in rank order cut into blocks of ``amount * stride``
    interleaved among ``stride`` processes; None when the items do not cut so. Whether the
    tiling keeps every rule is :func:`_holds`'s question."""
    amount, step = int(request.amount[0]), int(request.stride or 1)
    if target is None:
        window = distinct(request.cand_rank)
        if window.size % amount:
            return None
        ranks = np.repeat(window.reshape(-1, amount), request.fill_share or 1, axis=0).reshape(-1)  # each block once per share, in turn
        hardware, group = request.resources.physical[ranks], np.zeros(ranks.size, dtype=np.int64)
    else:
        tp = spec.components[target.name].constraints.tensor_parallel_size
        first_holder = {int(h): p // tp for p in range(target.num_processes) for h in target.cand_hw[target.indptr[p]:target.indptr[p + 1]].tolist()}
        hardware, ranks = request.cand_hw, request.cand_rank
        group = np.array([first_holder[int(h)] for h in hardware.tolist()], dtype=np.int64)
    if distinct(request.amount).size != 1 or hardware.size != request.num_processes * amount or hardware.size % (amount * step):
        return None
    order = np.lexsort((np.arange(ranks.size), ranks, group)) if target is not None else np.arange(ranks.size)
    blocks = order.reshape(-1, amount, step).transpose(0, 2, 1).reshape(-1)
    indptr = np.arange(request.num_processes + 1, dtype=np.int64) * amount
    return replace(request, indptr=indptr, cand_hw=hardware[blocks], cand_rank=ranks[blocks], determined=True, shared_window=False, fill_share=None)


def _holds(view: PlacementSpec, placed: Mapping[str, ComponentRequest]) -> bool:
    """Whether the independent verifier accepts the rank strings ``placed`` as ``view``'s placement."""
    by_request = {n: Assignment(r.indptr, r.cand_hw, r.cand_rank, view.cluster.num_hardware) for n, r in placed.items()}
    candidate = Solution(view, view.requests, by_component(view, by_request), SolveStatus.FEASIBLE, None)
    try:
        verify(view, candidate.placement_records())
    except VerificationError:
        return False
    return True


def _placed(
    view: PlacementSpec, name: str, requests: dict[str, ComponentRequest], weights: Mapping[str, int], options: SolverOptions, budget: Budget
) -> ComponentRequest | None:
    """``name`` placed by the flat model of ``view`` (it and the rank strings, ``requests``),
    its ``topology`` term the least (its other terms are fixed by its items), as a rank-string
    request; None when it is larger than ``MAX_PRESET_PAIRS`` or has no proven answer in time
    (or none at all: a rank string it is exclusive with on its target's items)."""
    if requests[name].candidate_pairs > MAX_PRESET_PAIRS:
        log.debug("%s: %d (process, item) pairs, over MAX_PRESET_PAIRS: not placed first", name, requests[name].candidate_pairs)
        return None
    ctx = build_model(view, expand_all(requests), weights={"contiguity": 0, "balance": 0, "topology": int(weights.get("topology", 0))}, check=budget.check)
    if ctx.conflicts:
        return None
    solver, status = solve_polished(ctx, SolverOptions(options.time_limit_s, 1, options.seed), budget)
    if status != cp_model.OPTIMAL:
        return None
    taken = ctx.assignments(solver.response_proto.solution)[name]
    return replace(
        requests[name],
        amount=np.diff(taken.indptr),
        indptr=taken.indptr,
        cand_hw=taken.hardware,
        cand_rank=taken.ranks,
        determined=True,
        shared_window=False,
        fill_share=None,
    )


__all__ = ["MAX_PRESET_PAIRS", "Preset", "placed_first", "preset"]
