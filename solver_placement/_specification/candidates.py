"""Resolving a spec against a cluster: per-process candidate hardware, ready for the model.

A rank-based component's segments fix each process's candidates to exactly the resources the
grammar gives it (RLinf's even split), so the model has one candidate per needed item. A
declarative component lets every process choose among all resources of its node groups (or its
``resources`` window). Candidates are stored CSR-style (``indptr`` + flat arrays) so 100,000
GPUs never need a dense process x hardware matrix. Only what the config states is checked here
(groups exist, ranks in range, counts divide); whether the cluster has room is the counting
bounds' question (``_solver/bounds``), asked when the spec is solved.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from solver_placement._arrays import distinct
from solver_placement._cluster.cluster import Cluster, ResourceSet
from solver_placement._cluster.ranks import MAX_RANK, check_in_bounds, valid_ranks
from solver_placement._config import did_you_mean
from solver_placement._constants import ACCELERATOR
from solver_placement._errors import InternalError, PlacementConfigError, counted
from solver_placement._specification.grammar import ComponentSpec, Declarative, ExplicitRanks, RankSegments, Segment, check_multiple

#: Largest number of (process, candidate hardware) pairs a declarative component may create.
MAX_CANDIDATE_PAIRS = 4_000_000


@dataclass(frozen=True)
class ComponentRequest:
    """What the model must place for one component (or one shared-rule key).

    Per process ``p``: candidates ``cand_rank[indptr[p]:indptr[p+1]]`` (ranks in ``resources``)
    (with ``shared_window``, all processes share the one window ``indptr[0]:indptr[1]``; see
    :meth:`expanded`)
    and ``cand_hw`` (physical ids), ``amount[p]`` items to take, ``origin[p]`` the segment index
    (rank-based) or 0 (declarative). ``stride`` (declarative only) forces the items of a process
    to be ranks ``h, h+stride, ...``; ``fill_share`` forces every candidate of the window to be
    used by exactly that many processes; ``max_share`` bounds the processes per item otherwise.
    """

    spec: ComponentSpec
    resources: ResourceSet
    amount: np.ndarray
    indptr: np.ndarray
    cand_rank: np.ndarray
    cand_hw: np.ndarray
    origin: np.ndarray
    origin_text: tuple[str, ...]
    determined: bool
    stride: int | None = None
    fill_share: int | None = None
    max_share: int = 1
    shared_window: bool = False

    @property
    def candidate_pairs(self) -> int:
        """(process, candidate) pairs of the expanded request."""
        return self.num_processes * int(self.indptr[1]) if self.shared_window else int(self.cand_hw.size)

    def expanded(self) -> ComponentRequest:
        """Every process with its own copy of a shared window (what the flat model needs).

        The copy is refused above ``MAX_CANDIDATE_PAIRS`` with the sizes named.
        """
        if not self.shared_window:
            return self
        if self.candidate_pairs > MAX_CANDIDATE_PAIRS:
            width = int(self.indptr[1])
            raise PlacementConfigError(
                f"{self.name}: {counted(self.num_processes, 'process', 'processes')} x {counted(width, 'candidate ' + component_noun(self.resources))} = "
                f"{self.candidate_pairs} pairs exceeds the limit of {MAX_CANDIDATE_PAIRS} for the exact model; "
                "narrow it with 'resources' or node_group"
            )
        return replace(
            self,
            indptr=np.arange(self.num_processes + 1) * int(self.indptr[1]),
            cand_rank=np.tile(self.cand_rank, self.num_processes),
            cand_hw=np.tile(self.cand_hw, self.num_processes),
            shared_window=False,
        )

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def num_processes(self) -> int:
        return int(self.amount.size)

    @cached_property
    def window_items(self) -> np.ndarray:
        """The distinct items some process may take, ascending (a free request's window, which
        every process shares): read by many stages of the count path and the counting bounds,
        taken once (65,536 nodes: 524,288 ids a request). Read-only: every reader shares it."""
        items = distinct(self.cand_hw)
        items.flags.writeable = False
        return items

    @cached_property
    def cand_process(self) -> np.ndarray:
        """Process index of every flat candidate entry."""
        return np.repeat(np.arange(self.num_processes), np.diff(self.indptr))

    def subset(self, processes: np.ndarray) -> ComponentRequest:
        """The same request restricted to some processes (kept in the given order)."""
        lo, hi = self.indptr[processes], self.indptr[processes + 1]
        lengths = hi - lo
        indptr = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        picks = np.arange(int(indptr[-1]), dtype=np.int64) + np.repeat(lo - indptr[:-1], lengths)  # each process's entries, in turn
        return replace(
            self,
            amount=self.amount[processes],
            indptr=indptr,
            cand_rank=self.cand_rank[picks],
            cand_hw=self.cand_hw[picks],
            origin=self.origin[processes],
        )

    def process_where(self, process: int) -> str:
        """How to name a process in messages: component, its segment and rank."""
        match self.spec.form:
            case Declarative():
                return f"{self.name}: process {process}"
            case ExplicitRanks() as explicit:
                return f"{self.name}: process {process} (ranks {explicit.of(process)})"
            case RankSegments():
                return f'{self.name}: segment "{self.origin_text[self.origin[process]]}" (process {process})'



def expand_all(requests: Mapping[str, ComponentRequest]) -> dict[str, ComponentRequest]:
    """Requests as the flat model needs them (shared windows copied per process)."""
    return {name: request.expanded() for name, request in requests.items()}


def resolve_components(components: Mapping[str, ComponentSpec], cluster: Cluster) -> dict[str, ComponentRequest]:
    """Resolve every component that owns its rule; components sharing a key reuse the first's."""
    requests: dict[str, ComponentRequest] = {}
    for component in components.values():
        if component.shares_rule_with is None:
            requests[component.name] = resolve_component(component, components, cluster)
    return requests


def resolve_component(component: ComponentSpec, components: Mapping[str, ComponentSpec], cluster: Cluster) -> ComponentRequest:
    """One component's candidates; ``components`` is the whole job (``stride: auto`` reads the target)."""
    resources = _selection(component, cluster)
    match component.form:
        case Declarative() as declarative:
            request = _resolve_declarative(component, declarative, resources, components, cluster)
        case ExplicitRanks() as explicit:
            request = _resolve_explicit(component, explicit, resources)
        case RankSegments(segments):
            request = _resolve_segments(component, segments, resources)
    _check_whole_groups(component, request.num_processes)
    return request


def _check_whole_groups(component: ComponentSpec, processes: int) -> None:
    """Refuse processes that do not form whole tensor-parallel groups: a model split ``tp`` ways
    runs on exactly ``tp`` processes, so a remainder would be a group no model can use."""
    tp = component.constraints.tensor_parallel_size
    if processes % tp:
        given = "processes" if component.is_declarative else f'placement "{component.text}" gives {counted(processes, "process", "processes")};'
        raise PlacementConfigError(
            f"{component.name}: {given} {processes} is not a multiple of tensor_parallel_size {tp} "
            f"(its processes must form whole tensor-parallel groups of {tp})"
        )


def _selection(component: ComponentSpec, cluster: Cluster) -> ResourceSet:
    for label in component.node_groups:
        if label not in cluster.node_groups:
            raise PlacementConfigError(f"{component.name}: node group {label!r} not found{did_you_mean(label, cluster.node_groups, 'groups')}")
    resources = cluster.resources(component.node_groups, component.count_nodes)
    if resources.counts_nodes and not all(g.hardware_type is None for g in resources.groups):
        raise PlacementConfigError(
            f"{component.name}: node_group {','.join(component.node_groups)!r} mixes groups whose resources are nodes "
            "with groups whose resources are hardware; a component's ranks must count one kind"
        )
    if len(resources) == 0:
        raise PlacementConfigError(f"{component.name}: {resources.describe()} has no resources to place on")
    return resources


def _resolve_segments(component: ComponentSpec, segments: tuple[Segment, ...], resources: ResourceSet) -> ComponentRequest:
    total = len(resources)
    rank_parts, indptr_parts, amount_parts, origin_parts = [], [], [], []
    offset = 0
    described = resources.describe()  # once: a pass over the ranks per group (32,768 segments on 65,536 nodes: 4 s a segment at a time)
    for index, segment in enumerate(segments):
        where = f'{component.name}: segment "{segment.text}"'
        if segment.resources is None:
            ranks = np.arange(total, dtype=np.int64)
        else:
            check_in_bounds(segment.resources, total, "resource ranks", f"{where} on {described}")
            ranks = segment.resources.to_array()
        num_processes = len(segment.processes) if segment.processes is not None else ranks.size
        check_multiple(ranks.size, num_processes, where)
        if ranks.size >= num_processes:
            per_process = ranks.size // num_processes
            rank_parts.append(ranks)
            indptr_parts.append(offset + np.arange(1, num_processes + 1) * per_process)
            amount_parts.append(np.full(num_processes, per_process))
            offset += ranks.size
        else:
            rank_parts.append(np.repeat(ranks, num_processes // ranks.size))
            indptr_parts.append(offset + np.arange(1, num_processes + 1))
            amount_parts.append(np.ones(num_processes, dtype=np.int64))
            offset += num_processes
        origin_parts.append(np.full(num_processes, index))
    if offset > MAX_RANK:
        raise PlacementConfigError(f'{component.name}: placement "{component.text}": asks for {offset} process slots; the limit is {MAX_RANK}')
    cand_rank = np.concatenate(rank_parts)
    return ComponentRequest(
        spec=component,
        resources=resources,
        amount=np.concatenate(amount_parts),
        indptr=np.concatenate(([0], *indptr_parts)),
        cand_rank=cand_rank,
        cand_hw=resources.physical[cand_rank],
        origin=np.concatenate(origin_parts),
        origin_text=tuple(segment.text for segment in segments),
        determined=True,
    )


def _resolve_explicit(component: ComponentSpec, explicit: ExplicitRanks, resources: ResourceSet) -> ComponentRequest:
    total = len(resources)
    last = explicit.ranks[explicit.indptr[1:] - 1]  # each process's largest rank (its ranks are sorted)
    outside = np.flatnonzero(last >= total)
    if outside.size:
        position, limit = int(outside[0]), valid_ranks(total)
        raise PlacementConfigError(
            f"{component.name}: process {position} ranks {explicit.of(position)} are out of range on {resources.describe()}; {limit}"
        )
    sizes = np.diff(explicit.indptr)
    cand_rank = explicit.ranks
    return ComponentRequest(
        spec=component,
        resources=resources,
        amount=sizes,
        indptr=explicit.indptr,
        cand_rank=cand_rank,
        cand_hw=resources.physical[cand_rank],
        origin=np.zeros(sizes.size, dtype=np.int64),
        origin_text=(component.text,),
        determined=True,
    )


def _resolve_declarative(
    component: ComponentSpec, decl: Declarative, resources: ResourceSet, components: Mapping[str, ComponentSpec], cluster: Cluster
) -> ComponentRequest:
    """Every process may take any item of the window (a filled one in blocks, see below); how
    many items the cluster has for them is counted by the bounds (``_solver/bounds/shortfall.py``)."""
    where = component.name
    if decl.resources is not None:
        check_in_bounds(decl.resources, len(resources), "resources", f"{where} on {resources.describe()}")
        window = decl.resources.to_array()
    else:
        window = np.arange(len(resources), dtype=np.int64)
    fill = decl.fill
    if fill:
        # a filled window is used evenly per physical item: overlapping groups' second ranks
        # of an item are dropped. A free window keeps them (a stride may need either rank of an
        # item; ``add_distinct_hardware`` stops a process from taking one item twice).
        _, first = np.unique(resources.physical[window], return_index=True)
        window = window[np.sort(first)]
    processes, per_process, share = _shape(component.name, decl, window.size)
    stride = _stride(component, decl.stride, per_process, components, cluster)
    shared = False
    if fill and share == 1 and window.size % (per_process * stride) == 0:
        # An exact cover of a window by stride-s progressions of g ranks is unique and tiles
        # each block of g*s consecutive ranks with s interleaved processes; with processes
        # ordered by first rank, process p lies in block p // s. Offering each process only its
        # block keeps the model linear in the window; the stride constraint still picks the
        # interleaving inside it.
        block = per_process * stride
        width = block
        cand_rank = window.reshape(-1, block).repeat(stride, axis=0).ravel()
    elif fill:
        width = window.size
        cand_rank = np.tile(window, processes)
    else:  # every process may take any item: one shared window, expanded only when needed
        width, shared = window.size, True
        cand_rank = window
    return ComponentRequest(
        spec=component,
        resources=resources,
        amount=np.full(processes, per_process),
        indptr=np.array([0, width]) if shared else np.arange(processes + 1) * width,
        cand_rank=cand_rank,
        cand_hw=resources.physical[cand_rank],
        origin=np.zeros(processes, dtype=np.int64),
        origin_text=(component.text,),
        determined=False,
        stride=stride,
        fill_share=share if fill else None,
        max_share=share,
        shared_window=shared,
    )


def _shape(name: str, decl: Declarative, window_size: int) -> tuple[int, int, int]:
    """Processes, hardware per process and processes per item of a declarative component."""
    processes, per_process = decl.processes, decl.hardware_per_process
    if not decl.fill:
        if processes is None:  # the grammar requires processes when no window is given
            raise InternalError(f"{name}: a declarative component without a window has no process count")
        return processes, per_process or 1, 1
    where = f"{name}: resources \"{decl.resources or 'all'}\""
    if processes is None:
        per_process = per_process or 1
        if window_size % per_process:
            raise PlacementConfigError(f"{where} has {counted(window_size, 'item')}, not a multiple of hardware_per_process={per_process}")
        return window_size // per_process, per_process, 1
    check_multiple(window_size, processes, where)
    natural = max(1, window_size // processes)
    if per_process is not None and per_process != natural:
        raise PlacementConfigError(
            f"{where} gives {counted(processes, 'process', 'processes')} {counted(natural, 'item')} each, but hardware_per_process={per_process}"
        )
    return processes, natural, max(1, processes // window_size)


def _stride(
    component: ComponentSpec, stride: int | str, per_process: int, components: Mapping[str, ComponentSpec], cluster: Cluster
) -> int:
    if stride != "auto":
        return int(stride)
    target_name = component.constraints.collocate_with
    if target_name is None:
        raise PlacementConfigError(f"{component.name}: stride: auto needs collocate_with (it spreads a process over the target's TP group)")
    target = components[target_name]
    group = _group_items(target, components, cluster)
    if group is None or group % per_process:
        raise PlacementConfigError(
            f"{component.name}: stride: auto needs {target_name}'s hardware per TP group ({group}) to be a multiple of "
            f"hardware_per_process={per_process}"
        )
    return group // per_process


def _group_items(target: ComponentSpec, components: Mapping[str, ComponentSpec], cluster: Cluster) -> int | None:
    """Hardware items held by one TP group of ``target`` (None if processes differ in size)."""
    owner = components[target.rule_owner]
    request = resolve_component(owner, components, cluster)
    sizes = np.unique(request.amount)
    return int(sizes[0]) * target.constraints.tensor_parallel_size if sizes.size == 1 else None


def component_noun(resources: ResourceSet) -> str:
    """What one of the resources is called (``GPU``, ``node``, ``item``); :func:`counted` makes it plural."""
    kinds = {group.hardware_type for group in resources.groups}
    if kinds == {ACCELERATOR}:
        return "GPU"
    if kinds == {None}:
        return "node"
    return "item"
