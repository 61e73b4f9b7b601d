"""RLinf's placement strategies (Flexible, Packed, Node), each stated as a spec and solved.

A strategy keeps RLinf's constructor signature and its ``get_placement(cluster,
isolate_accelerator)`` method, but never walks ranks itself: it translates its arguments into one
``component_placement`` entry (:meth:`PlacementStrategy.component_entry`) and lets the CP-SAT
model place it. The rules RLinf checks by hand (one node per process, one hardware type, stride
pattern, ranks in range) are therefore constraints of the model, and a layout RLinf would get
wrong (a packed process spilling into the next node) is reported as infeasible instead.

``node_group`` / ``node_group_label`` accept a label, a comma-separated string or any sequence of
labels (an OmegaConf ``ListConfig`` too); ranks then run over the groups in the listed order.

RLinf's example scripts read private attributes of the strategies they get (``_node_ranks`` of
a Node strategy; ``_start_hw_rank``, ``_end_hw_rank``, ``_num_hardware_per_process`` and
``_stride`` of a Packed one, to split a rollout's GPUs between two engines). Each is a read-only
view of the public attribute holding the same value.

``get_placement`` takes this project's :class:`Cluster` or RLinf's own ``Cluster`` (converted by
:func:`~solver_placement._frontends.rlinf.rlinf_cluster.as_cluster`), so RLinf's ``WorkerGroup`` can call it
unchanged. Errors are catchable as RLinf's (``AssertionError``; ``IndexError`` for a node rank
outside the selected groups) and carry RLinf's phrase for the rule.

A strategy solves once per cluster object and serves every later call from that solution. One a
``ComponentPlacement`` hands out is served from the placement's own solution from the start
(:meth:`PlacementStrategy.serve`, ``from_solution``), so a component is solved once however
often its placement is asked for.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from operator import attrgetter
from typing import Any

import numpy as np

from solver_placement._cluster.cluster import Cluster, ResourceSet
from solver_placement._constants import CLUSTER_LABEL
from solver_placement._errors import NodeRankError, PlacementConfigError, PlacementError, shown, with_context
from solver_placement._frontends.rlinf.rlinf_cluster import as_cluster
from solver_placement._frontends.rlinf.stated_layout import StatedLayout, csr_of, in_normal_form, packed_ranks
from solver_placement._records import Placement
from solver_placement._solver.solution import Solution
from solver_placement._solver.solve import solve
from solver_placement._specification.placement_spec import PlacementSpec

NodeGroupArg = str | int | Sequence[str] | None


def normalize_labels(value: NodeGroupArg, name: str) -> tuple[str, ...] | None:
    """Labels of ``node_group``: ``None`` (the whole cluster), a label, ``"a,b"`` or a sequence."""
    if value is None:
        return None
    raw = str(value).split(",") if isinstance(value, (str, int)) else [str(item) for item in value]
    labels = tuple(label.strip() for label in raw)
    if not labels or any(not label for label in labels):
        raise PlacementConfigError(f"{name}: node group {value!r} has an empty label")
    return labels


def check_rank(value: Any, what: str, name: str, positive: bool = False) -> int:
    """A non-negative (or positive) int that is not a bool, named in the user's terms when it is not."""
    if isinstance(value, bool) or not isinstance(value, int) or value < int(positive):
        bound = "a positive" if positive else "a non-negative"
        raise PlacementConfigError(f"{name}: {what} must be {bound} integer, not {shown(value)}")
    return value



def rlinf_name(attribute: str) -> property:
    """A read-only property under RLinf's private name for our public ``attribute`` (the module
    docstring says who reads them): one value, two names, no copy to keep in step."""
    return property(attrgetter(attribute), doc=f"RLinf's name for :attr:`{attribute}` (read-only).")

class PlacementStrategy(ABC):
    """A placement rule for one worker group; solved on demand for a given cluster.

    ``name`` is the component name used in the spec and in every error message (a
    ``ComponentPlacement`` passes the component's own name; standalone strategies use the class
    name).
    """

    def __init__(self, node_groups: NodeGroupArg, name: str | None) -> None:
        self.name = name or type(self).__name__
        if "," in self.name or not self.name.strip():
            raise PlacementConfigError(f"strategy name {self.name!r} must be non-empty and must not contain a comma")
        self.node_groups = normalize_labels(node_groups, self.name)
        self._served: Solution | None = None

    @abstractmethod
    def component_entry(self) -> dict[str, Any]:
        """The ``component_placement`` entry (as in YAML) that states this strategy."""

    def stated_layout(self, cluster: Cluster) -> StatedLayout | None:
        """What this strategy states on ``cluster``, as arrays (raises what solving would raise
        for the strategy's own checks on the cluster); None when it cannot say without solving,
        so it is never served from another solution."""
        return None

    @property
    def labels(self) -> tuple[str, ...]:
        """The node groups the strategy's ranks count (the whole cluster when none is given)."""
        return self.node_groups or (CLUSTER_LABEL,)

    def build_spec(self, cluster: Cluster) -> PlacementSpec:
        """The one-component spec of this strategy on ``cluster`` (validated, not yet solved);
        strategies with checks of their own on the cluster extend it."""
        return PlacementSpec.build(cluster, {self.name: self.component_entry()})

    def solve(self, cluster: Any) -> Solution:
        """Solve this strategy on ``cluster`` (ours or RLinf's); errors name the strategy and its arguments."""
        try:
            return solve(self.build_spec(as_cluster(cluster)))
        except PlacementError as error:
            raise with_context(error, repr(self)) from None

    def get_placement(self, cluster: Any, isolate_accelerator: bool = True) -> list[Placement]:
        """RLinf's entry point: one :class:`Placement` per process, ordered by rank.

        ``cluster`` is this project's :class:`Cluster` or RLinf's ``Cluster`` (see :func:`as_cluster`).
        The solution is kept: later calls on the same cluster object are served from it (records
        are built once per ``isolate_accelerator`` value); another cluster is solved anew.
        """
        ours = as_cluster(cluster)
        if self._served is None or self._served.cluster is not ours:
            self._served = self.solve(ours)
        return self._served.placements(self.name, isolate_accelerator)

    def serve(self, solution: Solution) -> bool:
        """Serve :meth:`get_placement` on ``solution.cluster`` from ``solution`` (e.g. the solution
        of a ``ComponentPlacement`` that holds this strategy's component under :attr:`name`), when it
        places that component exactly as this strategy states; returns whether it does.

        Solving the strategy alone would then give the same records, so none are solved again.
        """
        try:
            stated = self.stated_layout(solution.cluster)
        except PlacementError:
            return False  # solving would fail the same way: get_placement reports it
        if stated is None or not stated.held_by(solution, self.name):
            return False
        self._served = solution
        return True

    def _group_entry(self) -> dict[str, Any]:
        return {} if self.node_groups is None else {"node_group": list(self.node_groups)}

    def _groups_repr(self) -> str:
        return "None" if self.node_groups is None else repr(",".join(self.node_groups))


class FlexiblePlacementStrategy(PlacementStrategy):
    """Explicit hardware ranks per process (RLinf's ``FlexiblePlacementStrategy``).

    Ranks are sorted within a process and processes are ordered by their first rank, as RLinf
    documents; a process's ranks must be unique, on one node and of one hardware type (model
    constraints). Several processes may share a rank. As in RLinf, the constructor checks only
    that there are processes and that ranks are non-negative; the other rules fail in
    ``get_placement``, where RLinf code (and its tests) expect them.
    """

    def __init__(
        self,
        hardware_ranks_list: Sequence[Sequence[int]],
        node_group_label: NodeGroupArg = None,
        *,
        name: str | None = None,
    ) -> None:
        super().__init__(node_group_label, name)
        if isinstance(hardware_ranks_list, (str, bytes)) or not isinstance(hardware_ranks_list, Sequence):
            raise PlacementConfigError(f"{self.name}: hardware_ranks_list must be a list of rank lists, not {shown(hardware_ranks_list)}")
        if not hardware_ranks_list:
            raise PlacementConfigError(f"{self.name}: The hardware_ranks_list must not be empty (it gives one rank list per process)")
        per_process: list[list[Any]] = [
            list(ranks) if isinstance(ranks, Sequence) and not isinstance(ranks, (str, bytes)) else [ranks]
            for ranks in hardware_ranks_list
        ]
        for position, ranks in enumerate(per_process):
            bad = [rank for rank in ranks if isinstance(rank, bool) or not isinstance(rank, int) or rank < 0]
            if bad:
                raise PlacementConfigError(
                    f"{self.name}: process {position} ranks {shown(ranks)} must be non-negative integers, not {shown(bad[0])} "
                    f"(The start hardware rank {shown(bad[0])} must be non-negative)"
                )
        #: the rank lists, or the solved (indptr, ranks) arrays they are cut from when first read
        self._ranks: list[list[int]] | tuple[np.ndarray, np.ndarray] = sorted(
            (sorted(ranks) for ranks in per_process), key=lambda ranks: ranks[:1]
        )

    @property
    def hardware_ranks_list(self) -> list[list[int]]:
        """Per process its ranks ascending, processes ordered by first rank (RLinf's order).

        A strategy made :meth:`from_solution` cuts these lists from the assignment only when
        they are first read: serving placements never needs them.
        """
        if isinstance(self._ranks, tuple):
            flat, bounds = self._ranks[1].tolist(), self._ranks[0].tolist()
            self._ranks = [flat[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]
        return self._ranks

    @classmethod
    def from_solution(cls, solution: Solution, name: str) -> FlexiblePlacementStrategy:
        """The strategy holding ``name``'s solved ranks per process, on its node groups.

        When the solved order is already RLinf's normal form (it nearly always is) the lists are
        cut straight from the assignment, without the constructor's per-rank checks the solver
        has made already, and the strategy is served by ``solution``. Otherwise the constructor
        sorts them as RLinf does and the strategy solves its own (reordered) layout when asked.
        """
        assignment = solution.assignment(name)
        labels = list(solution.spec.resources_of(name).labels)
        if not in_normal_form(assignment.indptr, assignment.ranks):
            return cls([ranks.tolist() for ranks in np.split(assignment.ranks, assignment.indptr[1:-1])], labels, name=name)
        strategy = cls.__new__(cls)
        PlacementStrategy.__init__(strategy, labels, name)
        strategy._ranks = (assignment.indptr, assignment.ranks)
        strategy._served = solution
        return strategy

    def component_entry(self) -> dict[str, Any]:
        return {**self._group_entry(), "placement": [list(ranks) for ranks in self.hardware_ranks_list]}

    def stated_layout(self, cluster: Cluster) -> StatedLayout:
        csr = self._ranks if isinstance(self._ranks, tuple) else csr_of(self._ranks)
        return StatedLayout(cluster.resources(self.labels), *csr)

    def __repr__(self) -> str:
        return f"FlexiblePlacementStrategy({self.hardware_ranks_list!r}, node_group_label={self._groups_repr()})"


class PackedPlacementStrategy(PlacementStrategy):
    """Close-packed (``stride=1``) or strided processes over hardware ranks ``start..end``.

    Inside each block of ``num_hardware_per_process * stride`` consecutive ranks, ``stride``
    interleaved processes take ranks ``h, h+stride, ...`` (stride 2, 2 per process over 0-7:
    ``[0,2],[1,3],[4,6],[5,7]``). Contiguous layouts are stated as a rank segment (fixed by its
    text); strided ones as a declarative window whose stride is a CP-SAT constraint, with the
    window's exact cover forcing RLinf's block layout. A process never crosses a node.
    """

    def __init__(
        self,
        start_hardware_rank: int,
        end_hardware_rank: int,
        num_hardware_per_process: int = 1,
        stride: int = 1,
        node_group: NodeGroupArg = None,
        *,
        name: str | None = None,
    ) -> None:
        super().__init__(node_group, name)
        self.start_hardware_rank = check_rank(start_hardware_rank, "start_hardware_rank", self.name)
        self.end_hardware_rank = check_rank(end_hardware_rank, "end_hardware_rank", self.name)
        self.num_hardware_per_process = check_rank(num_hardware_per_process, "num_hardware_per_process", self.name, positive=True)
        self.stride = check_rank(stride, "stride", self.name, positive=True)
        if self.end_hardware_rank < self.start_hardware_rank:
            raise PlacementConfigError(
                f"{self.name}: end_hardware_rank {self.end_hardware_rank} must be greater than or equal to "
                f"start_hardware_rank {self.start_hardware_rank}"
            )
        block = self.num_hardware_per_process * self.stride
        if self.num_hardware % block:
            raise PlacementConfigError(
                f"{self.name}: the {self.num_hardware} hardware ranks {self.range_text} must be divisible by "
                f"num_hardware_per_process * stride = {self.num_hardware_per_process} * {self.stride} = {block}, "
                "so that every process gets a full set"
            )

    @property
    def num_hardware(self) -> int:
        return self.end_hardware_rank - self.start_hardware_rank + 1

    # RLinf's names, read by its scripts and its multi-agent placements
    _start_hw_rank = rlinf_name("start_hardware_rank")
    _end_hw_rank = rlinf_name("end_hardware_rank")
    _num_hardware_per_process = rlinf_name("num_hardware_per_process")
    _stride = rlinf_name("stride")

    @property
    def num_processes(self) -> int:
        return self.num_hardware // self.num_hardware_per_process

    @property
    def range_text(self) -> str:
        return f"{self.start_hardware_rank}-{self.end_hardware_rank}"

    def component_entry(self) -> dict[str, Any]:
        if self.num_hardware_per_process == 1:
            return {**self._group_entry(), "placement": self.range_text}
        if self.stride == 1:
            return {**self._group_entry(), "placement": f"{self.range_text}:0-{self.num_processes - 1}"}
        return {
            **self._group_entry(),
            "resources": self.range_text,
            "hardware_per_process": self.num_hardware_per_process,
            "stride": self.stride,
        }

    def build_spec(self, cluster: Cluster) -> PlacementSpec:
        """RLinf: packed placement needs hardware; a group whose resources are nodes has none."""
        spec = super().build_spec(cluster)
        self._check_hardware(spec.resources_of(self.name))
        return spec

    def stated_layout(self, cluster: Cluster) -> StatedLayout:
        resources = cluster.resources(self.labels)
        self._check_hardware(resources)
        first = self.start_hardware_rank
        return StatedLayout(resources, *packed_ranks(first, self.num_processes, self.num_hardware_per_process, self.stride))

    def _check_hardware(self, resources: ResourceSet) -> None:
        if resources.counts_nodes:
            raise PlacementConfigError(
                f"{self.name}: packed placement needs hardware, but {resources.describe()} counts nodes; "
                "use NodePlacementStrategy for node-only processes (Packed placement requires hardware resources)"
            )

    def __repr__(self) -> str:
        return (
            f"PackedPlacementStrategy(start_hardware_rank={self.start_hardware_rank}, end_hardware_rank="
            f"{self.end_hardware_rank}, num_hardware_per_process={self.num_hardware_per_process}, "
            f"stride={self.stride}, node_group={self._groups_repr()})"
        )


class NodePlacementStrategy(PlacementStrategy):
    """Node-only processes: ``node_ranks[i]`` is the node of process ``i`` (after sorting).

    Ranks index the nodes of the selected groups (group after group), whatever hardware they
    hold; several processes may share a node. The processes hold no accelerator and see all of
    their node's GPUs.
    """

    def __init__(self, node_ranks: Sequence[int], node_group_label: NodeGroupArg = None, *, name: str | None = None) -> None:
        super().__init__(node_group_label, name)
        if isinstance(node_ranks, (str, bytes)) or not isinstance(node_ranks, Sequence):
            raise PlacementConfigError(f"{self.name}: node_ranks must be a list of node ranks, not {shown(node_ranks)}")
        if not node_ranks:
            raise PlacementConfigError(f"{self.name}: The node_ranks list must not be empty (it gives one node per process)")
        self.node_ranks: list[int] = sorted(check_rank(rank, f"node rank {shown(rank)}", self.name) for rank in node_ranks)

    _node_ranks = rlinf_name("node_ranks")  # its agent scripts count the processes with len(strategy._node_ranks)

    @classmethod
    def from_solution(cls, solution: Solution, name: str) -> NodePlacementStrategy:
        """The strategy holding ``name``'s solved node per process, on its node groups; served by
        ``solution`` when that is what it states (the solved order is RLinf's: nodes ascending)."""
        assignment = solution.assignment(name)
        nodes = assignment.ranks[assignment.indptr[:-1]].tolist()
        strategy = cls(nodes, list(solution.spec.resources_of(name).labels), name=name)
        strategy.serve(solution)
        return strategy

    def component_entry(self) -> dict[str, Any]:
        return {**self._group_entry(), "unit": "node", "placement": list(self.node_ranks)}

    def stated_layout(self, cluster: Cluster) -> StatedLayout:
        self._check_groups(cluster)
        processes = len(self.node_ranks)
        return StatedLayout(cluster.resources(self.labels, count_nodes=True), np.arange(processes + 1), np.array(self.node_ranks, dtype=np.int64))

    def build_spec(self, cluster: Cluster) -> PlacementSpec:
        self._check_groups(cluster)
        return super().build_spec(cluster)

    def _check_groups(self, cluster: Cluster) -> None:
        """RLinf's order of checks: the groups must not share nodes (a node would get two
        ranks), then every node rank must index one of their nodes (``IndexError`` in RLinf)."""
        labels = self.labels
        groups = [cluster.node_group(label) for label in labels]
        for i, first in enumerate(groups):
            for second in groups[i + 1:]:
                shared = sorted(set(first.node_ranks) & set(second.node_ranks))
                if shared:
                    raise PlacementConfigError(
                        f"{self.name}: node groups {first.label!r} and {second.label!r} share node(s) {shared}; "
                        f"node ranks over overlapping groups would name one node twice "
                        f"(Node groups {list(labels)} have overlapping nodes {set(shared)})"
                    )
        total = sum(len(group.node_ranks) for group in groups)
        outside = [rank for rank in self.node_ranks if rank >= total]
        if outside:
            raise NodeRankError(
                f"{self.name}: node rank {outside[0]} does not index a node of {' + '.join(map(repr, labels))}, "
                f"which hold {total} node(s) (Node rank {outside[0]} is out of range for selected node groups "
                f"{list(labels)} (total nodes {total}))"
            )

    def __repr__(self) -> str:
        return f"NodePlacementStrategy({self.node_ranks!r}, node_group_label={self._groups_repr()})"
