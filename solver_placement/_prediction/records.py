"""A predicted layout in the library's own terms: placement records and CSR assignments per role.

With these, what works on a solved layout works on a framework's own layout too: the node-by-
role table (``layout_report``), the figures (``plot_layout`` takes records and the cluster), and
a script comparing records field by field. Only placed ranks have records (a rank whose
placement group stays pending has no node); the fields keep RLinf's meaning, with the
framework's role names as components and its rank numbers as ranks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from solver_placement._cluster.cluster import Cluster
from solver_placement._constants import ACCELERATOR, CLUSTER_LABEL, NODE
from solver_placement._records import Placement
from solver_placement._solver.assignment import Assignment


class PlacedRank(Protocol):
    """What a record is made of: the fields of ``layout.PredictedRank`` (which imports this module)."""

    @property
    def rank(self) -> int: ...

    @property
    def node(self) -> int | None: ...

    @property
    def gpus(self) -> tuple[int, ...]: ...

    @property
    def visible_devices(self) -> tuple[str, ...]: ...


def role_records(role: str, ranks: Sequence[PlacedRank], cluster: Cluster) -> list[Placement]:
    """The placement record of every placed rank of ``role`` (``ranks`` in rank order)."""
    placed = [rank for rank in ranks if rank.node is not None]
    order = {node: index for index, node in enumerate(dict.fromkeys(rank.node for rank in placed))}
    on_node = Counter(rank.node for rank in placed)
    seen: Counter[int | None] = Counter()
    records = []
    for rank in placed:
        node = int(rank.node)  # type: ignore[arg-type]  # placed: has a node
        records.append(
            Placement(
                rank=rank.rank,
                cluster_node_rank=node,
                placement_node_rank=order[node],
                local_accelerator_rank=rank.gpus[0] if rank.gpus else -1,
                accelerator_type=cluster.accelerator_types[node],
                local_rank=seen[node],
                local_world_size=on_node[node],
                visible_accelerators=list(rank.visible_devices),
                isolate_accelerator=rank.visible_devices == tuple(map(str, rank.gpus)),
                local_hardware_ranks=list(rank.gpus),
                node_group_label=CLUSTER_LABEL,
                component=role,
                hardware_type=ACCELERATOR if rank.gpus else NODE,
                hardware_ranks=[_global_gpu(cluster, node, gpu) for gpu in rank.gpus],
                accelerator_model=cluster.accelerator_models[node],
            )
        )
        seen[node] += 1
    return records


def role_assignment(ranks: Sequence[PlacedRank], cluster: Cluster) -> Assignment:
    """The placed ranks of one role as a CSR assignment of physical hardware ids (a rank holding
    no GPU holds its node)."""
    held = [
        [cluster.physical_id(rank.node, ACCELERATOR, gpu) for gpu in rank.gpus] or [cluster.physical_id(rank.node, NODE, 0)]
        for rank in ranks
        if rank.node is not None
    ]
    indptr = np.cumsum([0, *map(len, held)]).astype(np.int64)
    hardware = np.array([item for items in held for item in items], dtype=np.int64)
    return Assignment(indptr, hardware, hardware.copy(), cluster.num_hardware)


def _global_gpu(cluster: Cluster, node: int, gpu: int) -> int:
    """A node's GPU as a rank among the cluster's GPUs (RLinf's ``hardware_ranks`` over the whole cluster)."""
    return int(np.sum(cluster.gpus_per_node[:node])) + gpu
