"""Hardware other than accelerators in the count model: one count problem per kind of item.

Why this is exact: every rule of a spec is decided on physical items (``_cluster/cluster.py``),
and a process holds items of one kind (``rules/per_process.py``), so components whose items are
robots (or whole nodes, ``unit: node``: one pseudo-item per node) share no item with those on
GPUs. Exclusivity between them holds in every layout, a process limit counts processes on one
item, and memory is checked on GPUs only (``rules/memory.py``); the objective's ``nodes``,
``contiguity``, ``topology`` and ``changes`` terms are sums over components. So without
``balance`` the spec splits into one problem per kind, each stated by the count model as it
states GPUs: a node's "GPUs" are its items of that kind, in local order, and everything the
count model knows (node shapes, windows, rank strings, strides, pipelines) reads the same.
The sum of the kinds' optima is the spec's optimum, proven when every kind's is.

``balance`` weighs the most items taken on one node, over all kinds at once; then one view
holds every kind a free component uses, a node's items of each kind side by side, each class
kept off the others' items as by a window over part of a node (``windows.py``, ``typed.py``).
A window that mixes kinds (node groups of GPUs and of robots listed together) is declined: a
process then chooses its kind, which the count model does not state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import numpy as np

from solver_placement._arrays import distinct
from solver_placement._cluster.cluster import Cluster, ResourceSet
from solver_placement._cluster.ranks import format_ranks
from solver_placement._constants import ACCELERATOR
from solver_placement._solver.answer import Answer, Declined, PathName, by_component
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.options import SolveStatus
from solver_placement._solver.solution import Method
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.grammar import ComponentSpec
from solver_placement._specification.parsed_spec import ParsedSpec
from solver_placement._specification.placement_spec import PlacementSpec

#: The count path on one view: ``count_path`` with the weights, options and budget bound.
CountView = Callable[[PlacementSpec], Answer | Declined]


@dataclass(frozen=True)
class KindView:
    """The spec's components whose items are of some kinds, on a cluster whose "GPUs" are those
    items (node by node, kinds in order, each in local order), and the way back.

    ``original[v]`` is the physical id (on the spec's cluster) of the view's item ``v``.
    """

    spec: PlacementSpec
    original: np.ndarray

    def back(self, assignment: Assignment, num_hardware: int) -> Assignment:
        """An assignment on the view as one on the spec's cluster (ranks are the same)."""
        return Assignment(assignment.indptr, self.original[assignment.hardware], assignment.ranks, num_hardware)


def kinds_of(spec: PlacementSpec, requests: Mapping[str, ComponentRequest]) -> dict[str, int] | str:
    """Per rule owner, the kind of item (index in ``cluster.kinds``) it holds; why not, for one
    whose node groups mix kinds (a declarative process would choose its kind)."""
    cluster = spec.cluster
    found = {}
    for name, request in requests.items():
        kinds = np.unique(cluster.hw_kind[request.resources.physical])
        if kinds.size > 1:
            return f"{name}: node groups of several hardware kinds ({', '.join(cluster.kinds[k] for k in kinds.tolist())})"
        found[name] = int(kinds[0])
    return found


def splits(spec: PlacementSpec, requests: Mapping[str, ComponentRequest]) -> bool:
    """Whether some component holds items other than GPUs (then the count path goes kind by
    kind, :func:`count_by_kind`, so a GPU class never counts a robot rank string's items as
    GPUs it is kept off); specs of GPUs alone never do."""
    gpu = spec.cluster.kinds.index(ACCELERATOR)
    return any(bool((spec.cluster.hw_kind[distinct(r.cand_hw)] != gpu).any()) for r in requests.values())


def count_by_kind(
    spec: PlacementSpec, requests: Mapping[str, ComponentRequest], balance: bool, count: CountView
) -> Answer | Declined:
    """The count path's answer for a spec with items of several kinds: each kind (or, with
    ``balance``, every kind at once) counted on its own view by ``count``, the answers mapped back
    and summed; declined when any view is."""
    owners = kinds_of(spec, requests)
    if isinstance(owners, str):
        return Declined(PathName.COUNTS, owners)
    free_kinds = sorted({owners[name] for name, r in requests.items() if not r.determined})  # some: rank strings alone are answered first
    groups = [tuple(free_kinds)] if balance else [(k,) for k in free_kinds]
    if len(groups[0]) > 1 and any(r.fill_share is not None for r in requests.values() if not r.determined):
        # placed first, a window's tiling is checked on the view, whose node groups cannot pick
        # one kind's items out of a node holding several
        return Declined(PathName.COUNTS, "a filled resources window beside declarative components of other hardware kinds, with balance weighed")
    placed: dict[str, Assignment] = {}
    statuses, value, bound, primary = [], 0, 0, 0
    for kinds in groups:
        view = kind_view(spec, requests, owners, kinds)
        if isinstance(view, str):
            return Declined(PathName.COUNTS, view)
        answer = count(view.spec)
        if isinstance(answer, Declined):
            return answer
        for name in view.spec.requests:
            placed[name] = view.back(answer.assignments[name], spec.cluster.num_hardware)
        statuses.append(answer.status)
        value, bound, primary = value + answer.known("objective"), bound + answer.known("bound"), primary + answer.known("primary")
    for name, request in requests.items():
        if name not in placed:  # a rank string of a kind no declarative component uses
            placed[name] = Assignment(request.indptr, request.cand_hw, request.cand_rank, spec.cluster.num_hardware)
    status = SolveStatus.OPTIMAL if all(s == SolveStatus.OPTIMAL for s in statuses) else SolveStatus.FEASIBLE
    return Answer(PathName.COUNTS, Method.COUNTS, by_component(spec, placed), status, value, bound, primary=primary)


def kind_view(spec: PlacementSpec, requests: Mapping[str, ComponentRequest], owners: Mapping[str, int], kinds: tuple[int, ...]) -> KindView | str:
    """The view of the components holding items of ``kinds`` (see :class:`KindView`); why not,
    for one collocated with a component of another kind (it cannot use that one's items:
    the flat model proves it)."""
    cluster = spec.cluster
    present = {name for name, kind in owners.items() if kind in kinds}
    components = {}
    for component in spec.components.values():
        if component.rule_owner not in present:
            continue
        rules = component.constraints
        if rules.collocate_with is not None and spec.owner_of(rules.collocate_with) not in present:
            return f"{component.name}: collocated with {rules.collocate_with}, whose items are of another kind"
        kind = owners[component.rule_owner]
        exclusive = tuple(o for o in rules.exclusive_with if owners[spec.owner_of(o)] == kind)  # other kinds share no item with it
        memory = rules.memory if kind == cluster.kinds.index(ACCELERATOR) else None  # checked on GPUs only
        groups = component.node_groups if kinds == (cluster.kinds.index(ACCELERATOR),) else tuple(_view_label(label) for label in component.node_groups)
        components[component.name] = replace(component, node_groups=groups, constraints=replace(rules, exclusive_with=exclusive, memory=memory), count_nodes=False)
    labels = sorted({label for name in present for c in spec.components.values() if c.rule_owner == name for label in c.node_groups})
    original, view_cluster = _view_cluster(cluster, kinds, labels)
    to_view = np.full(cluster.num_hardware, -1, dtype=np.int64)
    to_view[original] = np.arange(original.size)
    view_requests = {name: _on_view(requests[name], components[name], to_view) for name in requests if name in present}
    view = PlacementSpec(ParsedSpec(components, spec.solver_options), view_cluster, view_requests)
    return KindView(view, original)


def item_ids(cluster: Cluster, hardware: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """The physical ids of items like ``hardware`` (same kind and local id) on ``nodes``: how a
    layout moves to nodes alike (``replan.py``). Items of one kind are numbered node by node
    (``Cluster._build_hardware_table``), so each is its kind's first id on the node plus its
    local id."""
    first = np.full((len(cluster.kinds), cluster.num_nodes), cluster.num_hardware, dtype=np.int64)
    np.minimum.at(first, (cluster.hw_kind, cluster.hw_node), np.arange(cluster.num_hardware, dtype=np.int64))
    return first[cluster.hw_kind[hardware], nodes] + cluster.hw_local[hardware]


def _view_cluster(cluster: Cluster, kinds: tuple[int, ...], labels: list[str]) -> tuple[np.ndarray, Cluster]:
    """The items of ``kinds`` in the view's id order (node by node, kinds in order, local order)
    and the cluster whose GPUs they are: the same nodes, labels and, where the items are GPUs
    alone, the same memory (the spec's own cluster then, so GPU views are unchanged). Each node
    group ``labels`` names is a group of the same nodes there (``_view_label``): with one kind in
    the view, its ranks are the same items in the same order, so the verifier reads a view as it
    reads the spec (``preset.py`` checks a tiling on a view)."""
    gpu = cluster.kinds.index(ACCELERATOR)
    if kinds == (gpu,):
        return np.flatnonzero(cluster.hw_kind == gpu), cluster
    items = np.flatnonzero(np.isin(cluster.hw_kind, kinds))
    position = np.searchsorted(np.array(kinds), cluster.hw_kind[items])
    original = items[np.lexsort((cluster.hw_local[items], position, cluster.hw_node[items]))]
    per_node = np.bincount(cluster.hw_node[original], minlength=cluster.num_nodes)
    memory = cluster.gpu_memory_gb if gpu in kinds else None
    groups = [{"label": _view_label(label), "node_ranks": format_ranks(cluster.node_groups[label].node_ranks), "hardware_type": ACCELERATOR} for label in labels]
    view = Cluster(cluster.num_nodes, per_node.tolist(), gpu_memory_gb=memory, node_labels=cluster.node_labels, node_groups=groups)
    return original, view


def _view_label(label: str) -> str:
    """A node group's name in a view (the reserved ``cluster`` and ``node`` are the view's own
    groups there, so every name is given a suffix no user label carries: labels have no commas
    but may have spaces, so ``" (view)"`` could clash only with a label ending so)."""
    return f"{label} (view)"


def _on_view(request: ComponentRequest, component: ComponentSpec, to_view: np.ndarray) -> ComponentRequest:
    """``request`` with its items as the view's ids and its rules as the view states them."""
    resources = ResourceSet(request.resources.groups, to_view[request.resources.physical], request.resources.group_of)
    return replace(request, spec=component, resources=resources, cand_hw=to_view[request.cand_hw])
