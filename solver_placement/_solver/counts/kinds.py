"""Hardware other than accelerators in the count model: one count problem per group of kinds.

Why this is exact: every rule of a spec is decided on physical items (``_cluster/cluster.py``),
and a process holds items of one kind (``rules/per_process.py``; RLinf's own rule for node
groups of several hardware types, ``rlinf/scheduler/cluster/config.py`` lines 274-283 at
a3816b59: ranks run group after group, each keeps its type, a process's ranks are of one type
on one node), so processes on robots (or whole nodes, ``unit: node``: one pseudo-item per node)
share no item with those on GPUs. Exclusivity between them holds in every layout, a process
limit counts processes on one item, and memory is checked on GPUs only (``rules/memory.py``);
the objective's ``nodes``, ``contiguity``, ``topology`` and ``changes`` terms are sums over
components. So without ``balance`` the spec splits into one problem per kind, each stated by the
count model as it states GPUs: a node's "GPUs" are its items of that kind, in local order, and
everything the count model knows (node shapes, windows, rank strings, strides, pipelines) reads
the same. The sum of the problems' optima is the spec's optimum, proven when every one is.

A rank string whose processes hold different kinds is, in each kind's problem, its processes
there (listed by their items: ``_listed``); its own layout is returned as given. A declarative
component whose node groups mix kinds lets each process choose its kind, so the kinds it holds
are one problem: one view holds them, a node's items of each kind side by side, and every other
class is kept off the kinds it does not use as by a window over part of a node (``windows.py``,
``typed.py``). The count model gives a process consecutive items of a node; where such a
component takes several a process, one more item between two kinds of a node, which no
component holds, keeps every process on one kind (``_view_cluster``). ``balance`` weighs the
most items taken on one node, over all kinds at once: then one view holds every kind a free
component uses.

A view's node groups hold every item of their nodes, so a view of several kinds (or of robots,
for node groups listing GPUs too) cannot re-derive a node group of one kind, which the verifier
does when ``preset.py`` checks the tiling of a component whose items are known on a view: there,
every such component is placed first on the spec itself, and its items per node are the view's
``balance`` load (``count_by_kind``); a rank string there is listed by its items. Memory is
checked on GPUs only: a view of GPUs and other kinds states no memory per node, each of its GPUs
carries its memory as an item of its own (``item_memory.py``), so every component holding GPUs
keeps its ``memory_gb`` and a node's robots take any mix the other rules allow. A weighed
``contiguity`` over a window of several kinds has a rank base per kind on a node (its ranks run
kind after kind, not along a node's items): its patterns are split by base (``kind_ranks.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

import numpy as np

from solver_placement._arrays import distinct
from solver_placement._cluster.cluster import Cluster, ResourceSet
from solver_placement._cluster.derive import gpus_layout
from solver_placement._constants import ACCELERATOR, CLUSTER_LABEL
from solver_placement._solver.answer import Answer, Declined, PathName, by_component
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.counts.item_memory import ItemMemoryCluster
from solver_placement._solver.counts.preset import placed_first, preset
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.options import Budget, SolverOptions, SolveStatus
from solver_placement._solver.rules.memory import memory_per_gpu
from solver_placement._solver.solution import Method
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.grammar import ComponentSpec, ExplicitRanks
from solver_placement._specification.parsed_spec import ParsedSpec
from solver_placement._specification.placement_spec import PlacementSpec

#: The count path on one view (its spec, and its items' ids on the spec's cluster for what a
#: view must read there, as previous placements): ``count_path`` with the weights, options and
#: budget bound, given the items per node of components placed first that ``balance`` adds (None: none).
CountView = Callable[["KindView", np.ndarray | None], Answer | Declined]


@dataclass(frozen=True)
class KindView:
    """The spec's components whose items are of some kinds, on a cluster whose "GPUs" are those
    items (node by node, kinds in order, each in local order), and the way back.

    ``original[v]`` is the physical id (on the spec's cluster) of the view's item ``v`` (``-1``
    for an item that keeps two kinds apart, which no component holds: ``_view_cluster``).
    """

    spec: PlacementSpec
    original: np.ndarray

    def back(self, assignment: Assignment, num_hardware: int) -> Assignment:
        """An assignment on the view as one on the spec's cluster (ranks are the same)."""
        return Assignment(assignment.indptr, self.original[assignment.hardware], assignment.ranks, num_hardware)


@dataclass(frozen=True)
class Holdings:
    """Which kinds of item (indices in ``cluster.kinds``) each rule owner may hold.

    A rank string holds the kinds of its items, each process one kind (``process_kind``: a
    process's items are of one kind, else no layout exists: ``build.fixed_conflicts`` refuses it
    before any path, or, when every component is a rank string, the flat model after the count
    path declines it, :func:`kinds_of`); a declarative component the kinds of its window, or, collocated
    (the same items), those its partner's window holds too.
    """

    kinds: dict[str, frozenset[int]]
    process_kind: dict[str, np.ndarray]

    def linked(self, names: Iterable[str]) -> list[tuple[int, ...]]:
        """The kinds the ``names`` (declarative owners) hold, in groups no owner spans two of:
        each group is counted on one view."""
        groups: list[set[int]] = []
        for name in names:
            joined = set(self.kinds[name])
            for group in [g for g in groups if g & joined]:
                joined |= group
                groups.remove(group)
            groups.append(joined)
        return sorted(tuple(sorted(group)) for group in groups)


def kinds_of(spec: PlacementSpec, requests: Mapping[str, ComponentRequest]) -> Holdings | str:
    """The kinds each rule owner holds (:class:`Holdings`); why not, for a pair collocated
    (same items) that holds no kind in common, or where one whose items are all used (a rank
    string, a filled window) holds a kind the other's node groups do not (no layout exists: the
    flat model proves it). A pair of declarative components holds the kinds both windows hold."""
    cluster = spec.cluster
    kinds, process_kind = {}, {}
    for name, request in requests.items():
        item_kind = cluster.hw_kind[request.cand_hw]
        kinds[name] = frozenset(distinct(item_kind).tolist())
        if request.determined:
            first, last = np.minimum.reduceat(item_kind, request.indptr[:-1]), np.maximum.reduceat(item_kind, request.indptr[:-1])
            if (first != last).any():
                return f"{name}: a process holding items of several hardware kinds"
            process_kind[name] = first
    pairs = [(c.rule_owner, spec.owner_of(c.constraints.collocate_with)) for c in spec.components.values() if c.constraints.collocate_with is not None]
    changed = True
    while changed:  # a target with several followers: each narrows the others through it
        changed = False
        for pair in pairs:
            common = kinds[pair[0]] & kinds[pair[1]]
            for name in pair:
                if common != kinds[name] and (requests[name].determined or requests[name].fill_share is not None or not common):
                    return f"{pair[0]}: collocated with {pair[1]}, on node groups of other hardware kinds than the items it must share"
                changed |= common != kinds[name]
                kinds[name] = common
    return Holdings(kinds, process_kind)


def splits(spec: PlacementSpec, requests: Mapping[str, ComponentRequest]) -> bool:
    """Whether some component holds items other than GPUs (then the count path goes kind by
    kind, :func:`count_by_kind`, so a GPU class never counts a robot rank string's items as
    GPUs it is kept off); specs of GPUs alone never do."""
    gpu = spec.cluster.kinds.index(ACCELERATOR)
    return any(bool((spec.cluster.hw_kind[r.window_items] != gpu).any()) for r in requests.values())


def count_by_kind(
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    weights: Mapping[str, int],
    options: SolverOptions,
    budget: Budget,
    count: CountView,
) -> Answer | Declined:
    """The count path's answer for a spec with items of several kinds: the kinds of each group
    no declarative component spans two of (or, with ``balance``, every kind at once) counted on
    their own view by ``count``, the answers mapped back and summed; declined when any view is.
    Rank strings keep their items as given.

    A view of several kinds side by side cannot re-derive a node group of one kind (its groups
    hold every item of their nodes), nor a view of robots one of node groups listing GPUs too,
    so the verifier could not check the tiling of a component whose items are known (a filled
    window, or collocated with a rank string) there: when one is in such a view, every such
    component is placed first on the spec itself (``preset.py``), its cost added to every
    answer and its items per node to the ``balance`` load of every node (``load`` of the count
    path)."""
    holdings = kinds_of(spec, requests)
    if isinstance(holdings, str):
        return Declined(PathName.COUNTS, holdings)
    balance = bool(weights.get("balance"))
    groups = _groups(holdings, requests, balance)  # some: rank strings alone are answered first (``rank_strings.py``)
    fixed, load = 0, None
    known = placed_first(spec)  # filled windows, components collocated with rank strings
    if any(
        name in known and (len(kinds) > 1 or not _groups_within(spec.cluster, requests[name], frozenset(kinds)))
        for kinds in groups
        for name in _free_of(holdings, requests, kinds)
    ):
        ready = preset(spec, requests, weights, options, budget)
        if isinstance(ready, Declined):
            return ready
        requests, fixed = ready.requests, int(weights.get("nodes", 0)) * ready.nodes + int(weights.get("topology", 0)) * ready.topology
        load = ready.load if balance else None
        holdings = kinds_of(spec, requests)
        if isinstance(holdings, str):
            return Declined(PathName.COUNTS, holdings)
        groups = _groups(holdings, requests, balance)
    placed: dict[str, Assignment] = {}
    statuses, value, bound, primary = [], fixed, fixed, fixed
    models: list[str] = []
    for kinds in groups:
        view = kind_view(spec, requests, holdings, kinds)
        budget.check("viewing the items of one kind")  # per item: ~0.25 s of 16,384 nodes
        answer = count(view, load)
        if isinstance(answer, Declined):
            return answer
        for name in view.spec.requests:
            if not requests[name].determined:
                placed[name] = view.back(answer.assignments[name], spec.cluster.num_hardware)
        statuses.append(answer.status)
        models.append(f"{' and '.join(spec.cluster.kinds[k] for k in kinds)}: {'; '.join(answer.model)}")
        value, bound, primary = value + answer.known("objective"), bound + answer.known("bound"), primary + answer.known("primary")
    for name, request in requests.items():
        if request.determined:  # as given (or placed first), whichever views held its processes
            placed[name] = Assignment(request.indptr, request.cand_hw, request.cand_rank, spec.cluster.num_hardware)
    assignments = by_component(spec, placed)
    if not groups:  # every declarative component placed first: the spec's own value
        value = bound = primary = objective_value(spec, spec.requests, assignments, weights, {})
    status = SolveStatus.OPTIMAL if all(s == SolveStatus.OPTIMAL for s in statuses) else SolveStatus.FEASIBLE
    model = ("items of several kinds: each group of kinds no component spans two of counted on its own view, the optima summed", *models)
    return Answer(PathName.COUNTS, Method.COUNTS, assignments, status, value, bound, primary=primary, model=model)


def _groups_within(cluster: Cluster, request: ComponentRequest, held: frozenset[int]) -> bool:
    """Whether every item of the request's node groups is of the ``held`` kinds (a view re-derives
    its ranks then: its groups of one kind are the same items in the same order)."""
    return bool(np.isin(cluster.hw_kind[request.resources.physical], list(held)).all())


def _free_of(holdings: Holdings, requests: Mapping[str, ComponentRequest], kinds: tuple[int, ...]) -> list[str]:
    """The declarative rule owners holding items of ``kinds``."""
    return [name for name, request in requests.items() if not request.determined and holdings.kinds[name] & set(kinds)]


def _groups(holdings: Holdings, requests: Mapping[str, ComponentRequest], balance: bool) -> list[tuple[int, ...]]:
    """The groups of kinds counted on one view each: linked by declarative components that hold
    several, or every declarative kind at once when ``balance`` weighs one peak over them all."""
    groups = holdings.linked(name for name, request in requests.items() if not request.determined)
    return [tuple(sorted(k for group in groups for k in group))] if balance and len(groups) > 1 else groups


def kind_view(spec: PlacementSpec, requests: Mapping[str, ComponentRequest], holdings: Holdings, kinds: tuple[int, ...]) -> KindView:
    """The view of the components holding items of ``kinds`` (see :class:`KindView`), a rank
    string by its processes on those kinds; ``memory_gb`` kept by every component holding GPUs,
    checked on the view's GPUs alone (``_view_cluster``)."""
    cluster = spec.cluster
    gpu, held = cluster.kinds.index(ACCELERATOR), frozenset(kinds)
    present = {name for name, mine in holdings.kinds.items() if mine & held}
    # rank strings the view holds in part, or whose node groups it cannot re-derive (several
    # kinds side by side, or groups of other kinds before theirs): listed by their items
    listed = {name for name in present if name in holdings.process_kind and (holdings.kinds[name] - held or len(kinds) > 1 or (kinds != (gpu,) and not _groups_within(cluster, requests[name], held)))}
    labels = sorted({label for c in spec.components.values() if c.rule_owner in present - listed for label in c.node_groups})
    gap = max((int(requests[name].stride or 1) for name in present if name not in holdings.process_kind
               and len(holdings.kinds[name] & held) > 1 and int(requests[name].amount[0]) > 1), default=0)  # fmt: skip
    original, view_cluster = _view_cluster(cluster, kinds, labels, apart=gap)
    to_view = np.full(cluster.num_hardware, -1, dtype=np.int64)
    to_view[original[original >= 0]] = np.flatnonzero(original >= 0)
    on_view = {name: _listed(requests[name].subset(np.flatnonzero(np.isin(holdings.process_kind[name], kinds))), view_cluster, to_view) for name in sorted(listed)}
    components = {}
    for component in spec.components.values():
        owner = component.rule_owner
        if owner not in present:
            continue
        rules, mine = component.constraints, holdings.kinds[owner] & held
        exclusive = tuple(o for o in rules.exclusive_with if holdings.kinds[spec.owner_of(o)] & mine)  # other kinds share no item with it
        memory = rules.memory if gpu in mine else None  # checked on GPUs only: per item beside other kinds (``item_memory.py``)
        if owner in listed:
            changed = replace(component, node_groups=(CLUSTER_LABEL,), form=_explicit(on_view[owner]))
        else:
            changed = replace(component, node_groups=component.node_groups if kinds == (gpu,) else tuple(_view_label(label) for label in component.node_groups))
        components[component.name] = replace(changed, constraints=replace(rules, exclusive_with=exclusive, memory=memory), count_nodes=False)
    view_requests = {
        name: replace(on_view[name], spec=components[name]) if name in listed else _on_view(requests[name], components[name], to_view, holdings.kinds[name], cluster)
        for name in sorted(present)
    }
    view = PlacementSpec(ParsedSpec(components, spec.solver_options), view_cluster, {name: view_requests[name] for name in requests if name in present})
    return KindView(view, original)


def item_ids(cluster: Cluster, hardware: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """The physical ids of items like ``hardware`` (same kind and local id) on ``nodes``: how a
    layout moves to nodes alike (``replan.py``). Items of one kind are numbered node by node
    (``Cluster._build_hardware_table``), so each is its kind's first id on the node plus its
    local id."""
    first = np.full((len(cluster.kinds), cluster.num_nodes), cluster.num_hardware, dtype=np.int64)
    np.minimum.at(first, (cluster.hw_kind, cluster.hw_node), np.arange(cluster.num_hardware, dtype=np.int64))
    return first[cluster.hw_kind[hardware], nodes] + cluster.hw_local[hardware]


def _view_cluster(cluster: Cluster, kinds: tuple[int, ...], labels: list[str], apart: int = 0) -> tuple[np.ndarray, Cluster]:
    """The items of ``kinds`` in the view's id order (node by node, kinds in order, local order)
    and the cluster whose GPUs they are: the same nodes, labels and, where the items are GPUs
    alone, the same memory (the spec's own cluster then, so GPU views are unchanged); with GPUs
    and other kinds, memory on the GPUs alone, each carrying its own (``item_memory.py``). Each node
    group ``labels`` names is a group of the same nodes there (``_view_label``): with one kind in
    the view, its ranks are the same items in the same order, so the verifier reads a view as it
    reads the spec (``preset.py`` checks a tiling on a view).

    ``apart``: a declarative component holds several kinds and takes several items a process,
    which must be of one kind (``rules/per_process.py``). The count model lays a process on
    consecutive ids, or ids a stride apart (``strided.py``), so a node's kinds are kept apart by
    ``apart`` more items between them (``-1`` in the returned order; the widest such stride, 1
    for a run) that no window holds: every class is kept off them (``windows.py``), and no run
    or progression of items crosses from one kind to the next (it would land on one of them)."""
    gpu = cluster.kinds.index(ACCELERATOR)
    if kinds == (gpu,):
        return np.flatnonzero(cluster.hw_kind == gpu), cluster
    items = np.flatnonzero(np.isin(cluster.hw_kind, kinds))
    position = np.searchsorted(np.array(kinds), cluster.hw_kind[items])
    # ids run kind by kind, each node by node in local order (``Cluster._build_hardware_table``),
    # and ``kinds`` ascend: a stable sort by node alone orders them by node, kind and local id
    # (merging one run per kind: a third of the time of sorting the three keys on 65,536 nodes)
    order = np.argsort(cluster.hw_node[items], kind="stable")
    original, nodes = items[order], cluster.hw_node[items[order]]
    if apart:
        turns = np.repeat(np.flatnonzero((nodes[1:] == nodes[:-1]) & (position[order][1:] != position[order][:-1])) + 1, apart)
        original, nodes = np.insert(original, turns, -1), np.insert(nodes, turns, nodes[turns])
    per_node = np.bincount(nodes, minlength=cluster.num_nodes)
    layout = gpus_layout(cluster.node_labels, per_node.tolist(), {_view_label(label): cluster.node_groups[label].node_ranks for label in labels})
    if gpu not in kinds:
        return original, Cluster.from_layout(layout)
    is_gpu = original >= 0
    is_gpu[is_gpu] = cluster.hw_kind[original[is_gpu]] == gpu
    return original, ItemMemoryCluster.with_item_memory(layout, np.where(is_gpu, memory_per_gpu(cluster.gpu_memory_gb)[nodes], -1))  # memory binds GPUs alone: per item


def _view_label(label: str) -> str:
    """A node group's name in a view (the reserved ``cluster`` and ``node`` are the view's own
    groups there, so every name is given a suffix no user label carries: labels have no commas
    but may have spaces, so ``" (view)"`` could clash only with a label ending so)."""
    return f"{label} (view)"


def _on_view(request: ComponentRequest, component: ComponentSpec, to_view: np.ndarray, kinds: frozenset[int], cluster: Cluster) -> ComponentRequest:
    """``request`` with its items as the view's ids and its rules as the view states them (a
    collocated component's window cut to the ``kinds`` it holds: those of the items it shares)."""
    window = np.isin(cluster.hw_kind[request.cand_hw], list(kinds))
    if not request.determined and not window.all():  # a shared window (a filled one holds its partner's kinds: ``kinds_of``)
        request = replace(request, indptr=np.array([0, int(window.sum())]), cand_hw=request.cand_hw[window], cand_rank=request.cand_rank[window])
    # ranks index the resources: those of other kinds are -1 here, and no rank names them
    resources = ResourceSet(request.resources.groups, to_view[request.resources.physical], request.resources.group_of)
    return replace(request, spec=component, resources=resources, cand_hw=to_view[request.cand_hw])


def _listed(request: ComponentRequest, view_cluster: Cluster, to_view: np.ndarray) -> ComponentRequest:
    """A rank string's processes (all on the view's items) as explicit ranks of the view's
    ``cluster`` group, whose ranks are the view's ids: what the verifier re-derives on a view."""
    everything = view_cluster.resources((CLUSTER_LABEL,))
    hardware = to_view[request.cand_hw]
    rank_of = np.full(view_cluster.num_hardware, -1, dtype=np.int64)
    rank_of[everything.physical] = np.arange(everything.physical.size)
    origin = np.zeros(request.num_processes, dtype=np.int64)
    return replace(request, resources=everything, cand_hw=hardware, cand_rank=rank_of[hardware], origin=origin, origin_text=(request.spec.text,))


def _explicit(request: ComponentRequest) -> ExplicitRanks:
    """A listed request's ranks per process, as the verifier reads explicit lists (sorted)."""
    return ExplicitRanks.of_rows(request.indptr, request.cand_rank)
