"""The best placement of a tiny spec by brute force: every assignment of processes to items,
kept when the independent verifier's rules accept it, priced by ``evaluate.objective_value``.

Why: the flat model is the reference every count-model property test is held against, and a
flat model that proves a worse answer optimal (its symmetry rule did, commit 4ba9f74) hides the
count model's bugs too. Nothing here shares code with either CP-SAT model or the candidates they
are built from: the items a component may take and their ranks are the verifier's own reading of
the spec (``ranked_items``, and its even split of a rank string), every process of a declarative
component tries every set of ``hardware_per_process`` of those items in every order of processes
(no symmetry assumed, so no claim of the models' symmetry rules is reused), the verifier's rule
checks decide what is valid and ``objective_value`` (plain numpy) what it costs.

Speed: ``verify`` reads records into numpy columns, a few milliseconds a call, too slow for
10^4 assignments. The rule checks themselves read only each process's physical items, so they
run here on those lists directly, without the records; the two checks that read nothing but the
records' own fields (bookkeeping and environment: rank order, local ranks, visible devices, which
``placement_records`` derives and no model decides) are left out, and the best assignment found
is passed through the whole ``verify`` at the end. Every rule check skips a component that has no
items yet and only counts more (items, processes, memory) as components are added, so a
partial assignment the checks refuse has no valid completion: the search adds one rule owner at
a time and drops a refused prefix with everything below it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from solver_placement import PlacementSpec, verify
from solver_placement._records import placement_records
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.evaluate import objective_value
from solver_placement._specification.grammar import Declarative
from solver_placement._verify.layout import _expected_ranks
from solver_placement._verify.placed import Placed, ranked_items
from solver_placement._verify.registry import CHECKS, Check

#: The checks of record fields no model decides (see the module docstring); every other runs.
RECORD_CHECKS = ("bookkeeping", "environment")
#: The checks that read one component's own items and rules alone: run once per choice of a
#: rule owner, not again for every assignment of the others that it joins. The stride check
#: reads the collocation target's items for a stride ``auto`` only (below).
OWN_CHECKS = ("layout", "shape", "groups", "stride")
ALL_RULES = tuple(check for check in CHECKS if check.name not in RECORD_CHECKS)

Held = list[list[int]]  # per process, its physical items in rank order


@dataclass(frozen=True)
class Best:
    """The brute force's answer: the least objective over every valid assignment (None when no
    assignment passes) and one assignment reaching it (by component)."""

    value: int | None
    assignments: dict[str, Assignment] | None


def assignment_count(spec: PlacementSpec) -> int:
    """How many complete assignments the enumeration spans at most (before any is refused): the
    product, over the rule owners the solver places, of the ordered choices of one set of window
    items per process (distinct sets unless a ``resources`` window lets processes share items)."""
    total = 1
    for owner, request in spec.requests.items():
        form = spec.components[owner].form
        if isinstance(form, Declarative):
            sets = math.comb(len(_window(spec, owner)), _per_process(spec, owner))
            total *= sets**request.num_processes if form.fill else math.perm(sets, request.num_processes)
    return total


def valid_placements(spec: PlacementSpec) -> list[dict[str, Assignment]]:
    """Every assignment (by component) the verifier's rule checks accept, in a fixed order."""
    owners = list(spec.requests)
    sharers = {owner: [c.name for c in spec.components.values() if c.rule_owner == owner] for owner in owners}
    auto = any(isinstance(c.form, Declarative) and c.form.stride == "auto" for c in spec.components.values())
    between = tuple(check for check in ALL_RULES if check.name not in OWN_CHECKS or (auto and check.name == "stride"))
    options = [[held for held in _choices(spec, owner) if _valid(spec, {name: held for name in sharers[owner]}, ALL_RULES)] for owner in owners]
    found: list[dict[str, Assignment]] = []
    stack: list[tuple[int, dict[str, Held]]] = [(0, {})]
    while stack:
        depth, chosen = stack.pop()
        if depth == len(owners):
            found.append(_assignments(spec, chosen))
            continue
        for held in reversed(options[depth]):
            extended = {**chosen, **{name: held for name in sharers[owners[depth]]}}
            if depth == 0 or _valid(spec, extended, between):
                stack.append((depth + 1, extended))
    return found


def best_placement(
    spec: PlacementSpec,
    placements: Sequence[dict[str, Assignment]],
    weights: Mapping[str, int],
    previous: Mapping[str, Sequence[Sequence[int]]] | None = None,
) -> Best:
    """The first of ``placements`` with the least ``objective_value`` (``weights`` over the
    defaults, ``previous`` items per process for ``changes``), passed through the whole ``verify``."""
    owners = {c.rule_owner for c in spec.components.values()}
    best_value: int | None = None
    best: dict[str, Assignment] | None = None
    for assignments in placements:
        value = objective_value(spec, spec.requests, {name: assignments[name] for name in owners}, weights, previous or {})
        if best_value is None or value < best_value:
            best_value, best = value, assignments
    if best is not None:
        verify(spec, _records(spec, best))  # the record checks left out of the enumeration, on the answer
    return Best(best_value, best)


def _valid(spec: PlacementSpec, held: Mapping[str, Held], checks: Sequence[Check]) -> bool:
    """Whether each of ``checks`` accepts ``held`` (every check skips components without items)."""
    placed = Placed(spec, {}, held, {}, {})
    return not any(True for check in checks for _ in check.check(placed))


def _window(spec: PlacementSpec, owner: str) -> list[int]:
    """The items the owner's ranks count, in rank order, as the verifier reads them."""
    window = ranked_items(spec.components[owner], spec.cluster)
    if len(set(window)) != len(window):
        raise ValueError(f"{owner}: a window listing an item twice gives it two ranks; the oracle draws no such window")
    return window


def _per_process(spec: PlacementSpec, owner: str) -> int:
    """Items per process as the spec states them (``hardware_per_process``, or a ``resources``
    window's share), else the request's reading (a wrong count fails the shape check)."""
    form = spec.components[owner].form
    if isinstance(form, Declarative) and form.hardware_per_process is not None:
        return form.hardware_per_process
    return int(spec.requests[owner].amount[0])


def _choices(spec: PlacementSpec, owner: str) -> list[Held]:
    """Every assignment of the owner: a rank string's one (the verifier's even split), else
    every tuple, one per process, of sets of items of its window."""
    window = _window(spec, owner)
    form = spec.components[owner].form
    if not isinstance(form, Declarative):
        return [[[window[rank] for rank in ranks] for ranks in _expected_ranks(form, len(window))]]
    sets = [list(chosen) for chosen in itertools.combinations(window, _per_process(spec, owner))]
    if not sets:
        return []
    processes = spec.requests[owner].num_processes
    if form.fill:  # a ``resources`` window: its processes may share items (used evenly)
        return [list(held) for held in itertools.product(sets, repeat=processes)]
    # without one the shape check refuses two processes sharing an item: only disjoint sets
    return [
        list(held) for held in itertools.permutations(sets, processes) if len({item for items in held for item in items}) == processes * len(sets[0])
    ]


def _assignments(spec: PlacementSpec, held: Mapping[str, Held]) -> dict[str, Assignment]:
    """Per component, a CSR assignment of its items, ranks read from its window."""
    by_component = {}
    for component in spec.components.values():
        rank_of = {item: rank for rank, item in enumerate(_window(spec, component.rule_owner))}
        processes = held[component.name]
        hardware = np.array([item for items in processes for item in items], dtype=np.int64)
        by_component[component.name] = Assignment(
            indptr=np.concatenate(([0], np.cumsum([len(items) for items in processes]))).astype(np.int64),
            hardware=hardware,
            ranks=np.array([rank_of[item] for item in hardware.tolist()], dtype=np.int64),
            num_hardware=spec.cluster.num_hardware,
        )
    return by_component


def _records(spec: PlacementSpec, assignments: Mapping[str, Assignment]) -> dict[str, list]:
    """The placement records ``verify`` reads, built as a ``Solution`` builds them (but no
    ``Solution``: the test session would verify it again and count it as an answer)."""
    return {
        component.name: list(
            placement_records(
            component.name,
            taken.indptr,
            taken.hardware,
            taken.ranks,
            spec.requests[component.rule_owner].resources,
            spec.cluster,
            True,
            component.environment,
            )
        )
        for component in spec.components.values()
        for taken in (assignments[component.name],)
    }
