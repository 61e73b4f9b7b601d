"""A placement by construction, before any search: first-fit decreasing of groups onto nodes.

Why it exists: a declarative spec that a ten-line greedy loop places must never end without an
answer, and must never get a worse one. The construction needs no model, so it costs
milliseconds where the search may need the whole time limit. It is the search's starting point
(CP-SAT hints) and the answer when the search ends without a better one; whatever it builds is
checked by the independent verifier before anyone sees it (``solve.py``).

How: components are placed one at a time, rank strings first (their layout is given), then the
free ones in decreasing order of group width, a collocated component right after its target.
A free component's processes come in *groups* that must share a node (``tensor_parallel_size``
consecutive processes) and *units* that must share a zone (a node, or one value of a label that
a required ``topology`` rule names); zones are tried in rank order and each takes as many whole
units as its usable items allow, filling its nodes in rank order with each node's lowest usable
items. An item is usable when it is a candidate and every rule family's first-fit form admits
one more process there (``rules/``: no component exclusive with this one uses it, every
``max_processes_per_hardware`` on it still holds, its GPU memory still fits); first fit holds no
copy of a rule, and the families its shape keeps say how in their registry entries (each
component is placed once, each item of its window once). A collocated component takes exactly
its target's items, group by group, each group tiled by the component's processes (interleaved by its stride).
A component whose processes (or whose collocated components' processes) hold several GPUs at a
stride takes a node's usable items only in runs of consecutive ranks that its blocks fill, and an
order whose build still breaks a stride is dropped like one that leaves a component no room; one
whose blocks do not tile its groups (a stride that leaves holes) is placed process by process,
each on the lowest progression of ranks still free on its node.
What the construction cannot express (a component's processes with different candidates, a
window shared unevenly, two domain labels) gives None: the search then decides alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from solver_placement._cluster.cluster import Cluster
from solver_placement._solver.assignment import Assignment, window_ranks
from solver_placement._solver.bounds.needs import tensor_group_on_node
from solver_placement._solver.first_fit_orders import Step, followers, placing_orders
from solver_placement._solver.labels import label_values
from solver_placement._solver.options import Budget
from solver_placement._solver.rules import RULES
from solver_placement._solver.rules.rule import FitForm
from solver_placement._solver.rules.stride import enforced_stride
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec


class _CannotConstruct(Exception):
    """The construction does not express this spec (not an error of the spec)."""


def first_fit(
    spec: PlacementSpec, requests: Mapping[str, ComponentRequest], budget: Budget, score: Callable[[dict[str, Assignment]], Any] | None = None
) -> dict[str, Assignment] | None:
    """Assignments of every rule-owning request, built greedily in each of a few orders, the one
    ``score`` rates lowest kept (the first built without ``score``); None when the construction
    cannot express the spec or no order leaves every component room (the search may still place it)."""
    if all(request.determined for request in requests.values()):
        return None
    budget.check("ordering the first-fit tries")  # the orders read every candidate (0.1-0.3 s of 16,384 nodes): not once the time is spent
    orders = placing_orders(spec, requests)
    best: tuple[Any, dict[str, Assignment]] | None = None
    for order in orders:
        budget.check("building the first-fit placement")  # each try sets up a board of every item and rates its placement
        board = _Board.of(spec, requests)
        try:
            _place_all(board, spec, requests, order, budget)
        except _CannotConstruct:
            continue  # a greedy order that leaves a component no room: the next order may not
        built = {name: _fixed(request, spec) if request.determined else board.assignment(request) for name, request in requests.items()}
        if not _follows_strides(built, requests):
            continue  # a usable item the blocks could not avoid (a chain of collocations, blocks across nodes)
        if score is None:
            return built
        rating = score(built)
        if best is None or rating < best[0]:
            best = (rating, built)
    return None if best is None else best[1]


def _follows_strides(built: Mapping[str, Assignment], requests: Mapping[str, ComponentRequest]) -> bool:
    """Every free process that holds several items at a stride holds ranks ``h, h+s, ...`` of its
    window (the rank each item reports, ``window_ranks``): what the verifier's stride check asks."""
    for name, request in requests.items():
        step = None if request.determined else enforced_stride(request)
        if step is None:
            continue
        ranks = np.sort(built[name].ranks.reshape(request.num_processes, int(request.amount[0])), axis=1)
        if (np.diff(ranks, axis=1) != step).any():
            return False
    return True


def _fixed(request: ComponentRequest, spec: PlacementSpec) -> Assignment:
    """A rank string's assignment: exactly its candidates, each with the rank its text gives."""
    return Assignment(request.indptr, request.cand_hw, request.cand_rank, spec.cluster.num_hardware)


def _place_all(board: _Board, spec: PlacementSpec, requests: Mapping[str, ComponentRequest], order: list[Step], budget: Budget) -> None:
    """Rank strings where their text puts them, then the free requests in ``order``, each from
    the low ranks up or, when its step says so, from the high ranks down."""
    for request in requests.values():
        if request.determined:
            board.take(request.name, request.cand_process, request.cand_hw)
    for name, high_first in order:
        budget.check(f"building the first-fit placement ({name})")
        request = requests[name]
        target = spec.components[name].constraints.collocate_with
        if target is not None:
            _place_collocated(board, request, spec.owner_of(target))
        elif request.fill_share is not None:
            _place_filled(board, request)
        else:
            _place_free(board, request, followers(spec, requests, name), high_first)


@dataclass
class _Board:
    """What is placed so far: processes per item, per rule-owning request and in all; and the
    rule families' first-fit forms, which decide what may be added (a :class:`Placed`)."""

    spec: PlacementSpec
    requests: Mapping[str, ComponentRequest]
    load: np.ndarray  # processes on each item, shared-rule copies counted
    fits: tuple[FitForm, ...]  # every family's first-fit form, in registry order
    by: dict[str, np.ndarray] = field(default_factory=dict)  # request -> processes on each item
    taken: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # request -> (process per item, item)

    @classmethod
    def of(cls, spec: PlacementSpec, requests: Mapping[str, ComponentRequest]) -> _Board:
        fits = tuple(rule.fits for rule in RULES if callable(rule.fits))
        return cls(spec, requests, np.zeros(spec.cluster.num_hardware, dtype=np.int64), fits)

    @property
    def cluster(self) -> Cluster:
        return self.spec.cluster

    def copies(self, name: str) -> int:
        return 1 + sum(1 for c in self.spec.components.values() if c.shares_rule_with == name)

    def on(self, name: str) -> np.ndarray:
        """Processes of request ``name`` on each item (zeros before it is placed)."""
        return self.by.get(name, np.zeros_like(self.load))

    def take(self, name: str, processes: np.ndarray, items: np.ndarray) -> None:
        """Record that ``processes[i]`` of request ``name`` holds ``items[i]``."""
        per_item = np.bincount(items, minlength=self.cluster.num_hardware)
        self.by[name] = self.on(name) + per_item
        self.load += per_item * self.copies(name)
        self.taken[name] = (processes, items)

    def usable(self, name: str, items: np.ndarray, companions: Sequence[str] = ()) -> np.ndarray:
        """Which of ``items`` one more process of request ``name`` may take (every first-fit form
        admits it), with one process of each of ``companions`` (the requests collocated with it,
        placed next on the same GPUs) counted as already there."""
        coming = (name, *companions)
        ok = np.ones(items.size, dtype=bool)
        for fits in self.fits:
            ok &= fits(self, coming, items)
        return ok

    def assignment(self, request: ComponentRequest) -> Assignment:
        """The request's processes as an assignment: items in process order, ranks from its window."""
        processes, items = self.taken[request.name]
        order = np.lexsort((items, processes))
        processes, items = processes[order], items[order]
        indptr = np.concatenate(([0], np.cumsum(np.bincount(processes, minlength=request.num_processes)))).astype(np.int64)
        hardware = items.astype(np.int64)
        ranks = window_ranks(request.cand_hw, request.cand_rank, indptr, hardware, int(request.stride or 1), self.cluster.num_hardware)
        return Assignment(indptr=indptr, hardware=hardware, ranks=ranks, num_hardware=self.cluster.num_hardware)


def _window(request: ComponentRequest) -> tuple[np.ndarray, np.ndarray]:
    """The candidate items every process of a free request shares, in rank order, each once."""
    if request.shared_window:
        ranks, items = request.cand_rank[request.indptr[0]:request.indptr[1]], request.cand_hw[request.indptr[0]:request.indptr[1]]
    else:
        first = request.cand_hw[request.indptr[0]:request.indptr[1]]
        if not np.array_equal(np.tile(first, request.num_processes), request.cand_hw):
            raise _CannotConstruct
        ranks, items = request.cand_rank[request.indptr[0]:request.indptr[1]], first
    order = np.argsort(ranks, kind="stable")
    ranks, items = ranks[order], items[order]
    _, first_seen = np.unique(items, return_index=True)
    keep = np.sort(first_seen)
    return ranks[keep], items[keep]


def _zones(board: _Board, request: ComponentRequest) -> tuple[np.ndarray, int, int]:
    """Per node, its zone (a node, or a value of the required domain label); processes per group
    (one node) and per unit (one zone)."""
    spec, cluster = board.spec, board.cluster
    rules = spec.components[request.name].constraints
    required = [rule for rule in rules.topology if rule.required]
    if len({rule.label for rule in required}) > 1:
        raise _CannotConstruct
    group = tensor_group_on_node(spec, request)
    if not required:
        return np.arange(cluster.num_nodes), group, group
    unit = rules.tensor_parallel_size * (rules.pipeline_parallel_size if any(r.group == "pipeline_parallel" for r in required) else 1)
    if request.num_processes % unit:
        raise _CannotConstruct
    return label_values(cluster, required[0].label), group, unit


def _place_free(board: _Board, request: ComponentRequest, companions: Sequence[str] = (), high_first: bool = False) -> None:
    """Units of groups onto zones in rank order, each node's lowest usable items first (usable
    for the request and the ``companions`` that will be collocated on its items); with
    ``high_first``, from the highest ranks down."""
    cluster = board.cluster
    ranks, items = _window(request)
    amount = int(request.amount[0])
    mixed = np.unique(cluster.hw_kind[items]).size > 1  # node groups of several kinds: a process takes one kind's items
    if np.unique(request.amount).size > 1:
        raise _CannotConstruct
    zone_of_node, group, unit = _zones(board, request)
    usable = board.usable(request.name, items, companions)
    key = -ranks[usable] if high_first else ranks[usable]
    by_key = np.argsort(key, kind="stable")
    key, items = key[by_key], items[usable][by_key]
    width = group * amount
    block = _block(board, request, companions)
    if mixed and block > 1 and width % block:
        raise _CannotConstruct
    if width % block and not companions and unit == group and enforced_stride(request) is not None:
        return _place_in_progressions(board, request, key, items, group)
    if block > 1 and width % block == 0:  # with several kinds, a run of ranks ends where its kind does
        in_blocks = _whole_blocks(key, cluster.hw_node[items] * len(cluster.kinds) + cluster.hw_kind[items], block)
        key, items = key[in_blocks], items[in_blocks]
    nodes = cluster.hw_node[items]
    node_order = np.unique(nodes, return_index=True)  # nodes by their lowest usable rank
    ordered_nodes = node_order[0][np.argsort(node_order[1], kind="stable")]
    groups_on = np.bincount(nodes, minlength=cluster.num_nodes)[ordered_nodes] // width
    zones = zone_of_node[ordered_nodes]
    zone_rank = {z: i for i, z in enumerate(dict.fromkeys(zones.tolist()))}
    by_zone = np.argsort(np.array([zone_rank[z] for z in zones.tolist()], dtype=np.int64), kind="stable")
    ordered_nodes, groups_on, zones = ordered_nodes[by_zone], groups_on[by_zone], zones[by_zone]
    groups_per_unit = unit // group
    zone_start = np.flatnonzero(np.r_[True, zones[1:] != zones[:-1]])
    units_in_zone = np.add.reduceat(groups_on, zone_start) // groups_per_unit if zones.size else np.zeros(0, dtype=np.int64)
    needed = request.num_processes // unit
    before = np.cumsum(units_in_zone) - units_in_zone
    units_taken = np.clip(needed - before, 0, units_in_zone)
    if int(units_taken.sum()) < needed:
        raise _CannotConstruct
    groups_wanted = np.repeat(units_taken * groups_per_unit, np.diff(np.r_[zone_start, zones.size]))
    within_before = np.cumsum(groups_on) - groups_on - np.repeat(np.r_[0, np.cumsum(groups_on)][zone_start], np.diff(np.r_[zone_start, zones.size]))
    groups_taken = np.clip(groups_wanted - within_before, 0, groups_on)
    chosen = np.zeros(cluster.num_nodes, dtype=np.int64)
    chosen[ordered_nodes] = groups_taken * width
    place_of_node = np.empty(cluster.num_nodes, dtype=np.int64)
    place_of_node[ordered_nodes] = np.arange(ordered_nodes.size)
    by_node = np.lexsort((key, place_of_node[nodes]))
    node_sorted = nodes[by_node]
    starts = np.flatnonzero(np.r_[True, node_sorted[1:] != node_sorted[:-1]])
    position = np.arange(node_sorted.size) - np.repeat(starts, np.diff(np.r_[starts, node_sorted.size]))
    picked = by_node[position < chosen[node_sorted]]
    taken_items = items[picked]
    _take_in_blocks(board, request, taken_items, amount)


def _place_in_progressions(board: _Board, request: ComponentRequest, key: np.ndarray, items: np.ndarray, group: int) -> None:
    """A stride whose blocks do not tile the groups (it leaves holes): node by node, in the
    order of their lowest usable rank, each process on the lowest usable rank whose whole
    progression (``amount`` ranks ``stride`` apart, ``key`` sorted ascending) is still free
    there, whole TP groups a node; the holes stay for the components placed after. Blocks of
    ``amount * stride`` items gave up such specs (28 processes of 5 GPUs 3 apart on 72-GPU
    nodes: 140 GPUs, no whole number of 15-GPU blocks) though a greedy loop places them."""
    amount, step = int(request.amount[0]), int(request.stride or 1)
    nodes = board.cluster.hw_node[items]
    processes: list[int] = []
    taken: list[int] = []
    for node in dict.fromkeys(nodes.tolist()):
        if len(processes) == request.num_processes * amount:
            break
        here = np.flatnonzero(nodes == node)
        position = {int(k): i for i, k in enumerate(key[here].tolist())}
        free = np.ones(here.size, dtype=bool)
        found: list[list[int]] = []
        for i, k in enumerate(key[here].tolist()):
            wanted = [int(k) + j * step for j in range(amount)]
            if not free[i] or any(w not in position for w in wanted):
                continue
            members = [position[w] for w in wanted]
            if free[members].all():
                free[members] = False
                found.append(members)
        placed = len(processes) // amount
        for members in found[: min(len(found) // group * group, request.num_processes - placed)]:
            processes += [len(processes) // amount] * amount
            taken += items[here[members]].tolist()
    if len(processes) < request.num_processes * amount:
        raise _CannotConstruct
    board.take(request.name, np.array(processes, dtype=np.int64), np.array(taken, dtype=np.int64))


def _block(board: _Board, request: ComponentRequest, companions: Sequence[str]) -> int:
    """Consecutive ranks a node must offer together: each of the request's (and its collocated
    requests') processes of several items takes ``amount * stride`` of them as one block."""
    block = 1
    for name in (request.name, *companions):
        step = enforced_stride(board.requests[name])
        if step is not None:
            block = int(np.lcm(block, int(board.requests[name].amount[0]) * step))
    return block


def _whole_blocks(key: np.ndarray, nodes: np.ndarray, block: int) -> np.ndarray:
    """Which items (sorted by ``key``, a rank or its negation) fall in whole blocks of ``block``
    consecutive ranks on one node: each run of consecutive ranks keeps its first multiple of
    ``block`` items, the most disjoint blocks the run holds (a usable item a rule left out breaks a
    run, so no block spans it)."""
    if not key.size:
        return np.zeros(0, dtype=bool)
    starts = np.flatnonzero(np.r_[True, (np.diff(key) != 1) | (nodes[1:] != nodes[:-1])])
    lengths = np.diff(np.r_[starts, key.size])
    position = np.arange(key.size) - np.repeat(starts, lengths)
    return position < np.repeat(lengths // block * block, lengths)


def _take_in_blocks(board: _Board, request: ComponentRequest, items: np.ndarray, amount: int) -> None:
    """Give ``items`` (in placing order) to the processes in order, ``amount`` each; with a
    stride, each block of ``amount * stride`` items is interleaved among ``stride`` processes."""
    step = request.stride or 1
    if amount > 1 and step > 1:
        block = amount * step
        if items.size % block:
            raise _CannotConstruct
        items = items.reshape(-1, amount, step).transpose(0, 2, 1).ravel()
    processes = np.repeat(np.arange(request.num_processes), amount)
    if processes.size != items.size:
        raise _CannotConstruct
    board.take(request.name, processes, items)


def _place_filled(board: _Board, request: ComponentRequest) -> None:
    """A filled ``resources`` window: its layout is forced up to order; processes in rank order."""
    amount, share = int(request.amount[0]), int(request.fill_share or 1)
    if request.shared_window or np.unique(request.amount).size > 1:
        raise _CannotConstruct
    if share == 1:
        firsts = request.indptr[:-1]
        window_rank = request.cand_rank
        items: list[int] = []
        for p in range(request.num_processes):
            lo, hi = int(firsts[p]), int(request.indptr[p + 1])
            block_ranks, block_items = window_rank[lo:hi], request.cand_hw[lo:hi]
            step = request.stride or 1
            offset = p % step if hi - lo == amount * step else 0
            items.extend(block_items[np.argsort(block_ranks, kind="stable")][offset::step][:amount].tolist())
        taken = np.array(items, dtype=np.int64)
    else:
        if amount != 1:
            raise _CannotConstruct
        _, window = _window_of_process(request, 0)
        taken = np.repeat(window, share)[: request.num_processes]
    if not board.usable(request.name, np.unique(taken)).all():
        raise _CannotConstruct
    board.take(request.name, np.repeat(np.arange(request.num_processes), amount), taken)


def _window_of_process(request: ComponentRequest, process: int) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = int(request.indptr[process]), int(request.indptr[process + 1])
    order = np.argsort(request.cand_rank[lo:hi], kind="stable")
    return request.cand_rank[lo:hi][order], request.cand_hw[lo:hi][order]


def _place_collocated(board: _Board, request: ComponentRequest, target: str) -> None:
    """Exactly the target's items, each of the target's groups tiled by this component's
    processes in order (interleaved by its stride), so every process nests in one group."""
    if target not in board.taken or request.fill_share is not None:
        raise _CannotConstruct
    target_processes, target_items = board.taken[target]
    tp = board.spec.components[target].constraints.tensor_parallel_size
    group_of = target_processes // tp
    order = np.lexsort((target_items, group_of))  # group by group, each in item (= rank) order on its node
    groups, items = group_of[order], target_items[order]
    _, first = np.unique(items, return_index=True)
    keep = np.sort(first)
    groups, items = groups[keep], items[keep]
    amount = int(request.amount[0])
    if np.unique(request.amount).size > 1 or items.size != request.num_processes * amount:
        raise _CannotConstruct
    window = set(_window(request)[1].tolist())
    if not window.issuperset(items.tolist()) or not board.usable(request.name, items).all():
        raise _CannotConstruct
    sizes = np.bincount(groups)
    step = request.stride or 1
    if amount > 1 and (sizes[sizes > 0] % (amount * step)).any():
        raise _CannotConstruct
    _take_in_blocks(board, request, items, amount)
