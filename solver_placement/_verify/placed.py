"""The placements under check, read once so every check sees the same physical ids.

Each record names its items the way RLinf does (node, hardware type, local index); the checks
reason about physical ids, looked up with the cluster's own index (:meth:`Cluster.physical_id`)
so the verifier and the records agree on what an id means. Items that do not exist are kept
aside as violations instead of ids, so no check ever has to guard against them. A component
whose records all name existing items is also read as numpy columns (``columns.py``), which the
checks test first at scale.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from solver_placement._cluster.cluster import Cluster
from solver_placement._constants import NODE
from solver_placement._errors import PlacementConfigError
from solver_placement._records import Placement, PlacementRecords
from solver_placement._specification.grammar import ComponentSpec
from solver_placement._verify.columns import Columns, ItemIndex, read_columns

if TYPE_CHECKING:  # a type only: the verifier reads a spec's components and cluster, never the candidates it resolves
    from solver_placement._specification.placement_spec import PlacementSpec


@dataclass(frozen=True)
class Placed:
    """A spec and the placements to check against it.

    ``records``: every component of the spec, in config order (``[]`` when none were given).
    ``held``: only components that have records; per process (rank order) the physical ids of
    the items it holds that exist. ``unknown``: per component in ``held``, one violation per
    item a record names that the cluster does not have. ``columns``: the components in ``held``
    whose records all name existing items, as numpy columns.
    """

    spec: PlacementSpec
    records: Mapping[str, Sequence[Placement]]
    held: Mapping[str, list[list[int]]]
    unknown: Mapping[str, list[str]]
    columns: Mapping[str, Columns]
    #: What :meth:`ranked` and :meth:`use` computed, per (what, component): several checks ask.
    _known: dict[tuple[str, str], np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    @property
    def cluster(self) -> Cluster:
        return self.spec.cluster

    def used(self, name: str) -> set[int]:
        """Every item any process of ``name`` holds."""
        if name in self.columns:
            return set(self.columns[name].ids.tolist())
        return {hw for ids in self.held[name] for hw in ids}

    def use(self, name: str) -> np.ndarray:
        """Per item of the cluster, how many of the processes of ``name`` hold it (an item a
        process lists twice counted twice: the bookkeeping check reports that)."""
        if ("use", name) not in self._known:
            ids = self.columns[name].ids if name in self.columns else np.fromiter((hw for ids in self.held[name] for hw in ids), dtype=np.int64)
            self._known["use", name] = np.bincount(ids, minlength=self.cluster.num_hardware)
        return self._known["use", name]

    def ranked(self, name: str) -> np.ndarray:
        """:func:`ranked_items` of the component ``name``, as an array."""
        if ("ranked", name) not in self._known:
            component = self.spec.components[name]
            self._known["ranked", name] = self.cluster.resources(component.node_groups, component.count_nodes).physical.astype(np.int64, copy=False)
        return self._known["ranked", name]


class _Held(Mapping[str, list[list[int]]]):
    """``Placed.held``: the lists of a component read as columns are made the first time a
    check asks for them (a list per process: most checks at scale never need them)."""

    def __init__(self, lists: dict[str, list[list[int]]], columns: Mapping[str, Columns], order: list[str]) -> None:
        self._lists = lists
        self._columns = columns
        self._order = order

    def __getitem__(self, name: str) -> list[list[int]]:
        if name not in self._lists:
            if name not in self._columns:
                raise KeyError(name)
            self._lists[name] = self._columns[name].held()
        return self._lists[name]

    def __contains__(self, name: object) -> bool:
        """Without making the lists (``Mapping.__contains__`` reads the value)."""
        return name in self._lists or name in self._columns

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)


def read_placements(spec: PlacementSpec, placements: Mapping[str, Sequence[Placement]]) -> Placed:
    """Look every record's items up once; components the spec does not know are ignored."""
    records = {name: _kept(placements.get(name, [])) for name in spec.components}
    held: dict[str, list[list[int]]] = {}
    unknown: dict[str, list[str]] = {}
    columns: dict[str, Columns] = {}
    index = ItemIndex(spec.cluster)
    for name, component_records in records.items():
        if not component_records:
            continue
        read = read_columns(spec.cluster, index, component_records)
        if read is not None:  # every item exists: nothing unknown
            unknown[name], columns[name] = [], read
            continue
        held[name], unknown[name] = [], []
        for record in component_records:
            ids, missing = _physical_ids(spec.cluster, record)
            held[name].append(ids)
            unknown[name].extend(f"{name} rank {record.rank}: {problem}" for problem in missing)
    return Placed(spec, records, _Held(held, columns, list(unknown)), unknown, columns)


def _kept(records: Sequence[Placement]) -> Sequence[Placement]:
    """The records as a list, except records not made yet, kept as they are: their arrays are
    read instead, and they are made only if a check reads them one by one."""
    return records if isinstance(records, PlacementRecords) else list(records)


def _physical_ids(cluster: Cluster, record: Placement) -> tuple[list[int], list[str]]:
    """The ids of the record's items that exist, and what the cluster says about the others."""
    locals_ = record.local_hardware_ranks if record.hardware_type != NODE else [0]
    ids: list[int] = []
    missing: list[str] = []
    for local in locals_:
        try:
            ids.append(cluster.physical_id(record.cluster_node_rank, record.hardware_type, local))
        except PlacementConfigError as error:
            missing.append(str(error))
    return ids, missing


def ranked_items(component: ComponentSpec, cluster: Cluster) -> list[int]:
    """The physical id of each rank the component's placement counts (its node groups' items,
    or their nodes with ``unit: node``), re-read from the cluster tables, not the candidates."""
    return cluster.resources(component.node_groups, component.count_nodes).physical.tolist()
