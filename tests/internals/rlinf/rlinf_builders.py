"""RLinf's own cluster objects, built without Ray the way RLinf builds them, and placement records
in a form both libraries can be compared in.

RLinf's ``Cluster`` probes nodes with Ray actors (``NodeProbe``). Here the same objects are made
from their dataclasses: the ``cluster:`` section goes through RLinf's own ``ClusterConfig``
parsing, each node gets a ``NodeInfo`` with one ``HardwareResource`` of accelerators and one per
robot type configured for it (one item per hardware config naming the node, as the robot
policies enumerate them, without pinging anything), and node groups are grouped exactly as
``NodeProbe`` does (config groups in order, empty ones dropped, then ``cluster`` and ``node``).
The result is an instance of RLinf's real ``Cluster`` class whose singleton ``__init__`` (Ray,
managers) is bypassed; its placement API (``num_nodes``, ``get_node_info``, ``get_node_group``,
``num_accelerators``) is RLinf's unmodified code.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from omegaconf import DictConfig, OmegaConf

#: The 11 fields of RLinf's ``Placement``.
FIELDS = (
    "rank",
    "cluster_node_rank",
    "placement_node_rank",
    "local_accelerator_rank",
    "accelerator_type",
    "local_rank",
    "local_world_size",
    "visible_accelerators",
    "isolate_accelerator",
    "local_hardware_ranks",
    "node_group_label",
)
ACCELERATOR_MODEL = "NV_GPU:A800"


def rlinf_cluster(rl: SimpleNamespace, section: Mapping[str, Any] | DictConfig, gpus_per_node: Sequence[int]) -> Any:
    """RLinf's ``Cluster`` for a ``cluster:`` section and the GPU count of each node."""
    section = section if isinstance(section, DictConfig) else OmegaConf.create(dict(section))
    config = rl.ClusterConfig.from_dict_cfg(section)
    nodes = [_node(rl, config, rank, gpus_per_node[rank]) for rank in range(config.num_nodes)]
    groups = []
    for group in config.node_groups or []:
        members = [node for node in nodes if node.node_rank in group.node_ranks]
        if members:
            groups.append(
                rl.NodeGroupInfo(
                    label=group.label,
                    nodes=members,
                    hardware_type=group.hardware_type,
                    env_configs=group.env_configs,
                    ignore_hardware=group.ignore_hardware,
                )
            )
    groups.append(rl.NodeGroupInfo(label="cluster", nodes=nodes))
    groups.append(rl.NodeGroupInfo(label="node", nodes=nodes, ignore_hardware=True))
    labels = [group.label for group in groups]
    assert len(set(labels)) == len(labels), f"Node group labels must be unique, but got: {labels}"
    cluster = object.__new__(rl.Cluster)  # RLinf's class, without its Ray-starting singleton __init__
    cluster._nodes, cluster._node_groups, cluster._num_nodes = nodes, groups, config.num_nodes
    cluster._cluster_cfg, cluster._has_initialized = config, True
    return cluster


def _node(rl: SimpleNamespace, config: Any, rank: int, gpus: int) -> Any:
    resources = []
    if gpus:
        infos = [rl.HardwareInfo(type=rl.Accelerator.HW_TYPE, model=ACCELERATOR_MODEL) for _ in range(gpus)]
        resources.append(rl.HardwareResource(type=rl.Accelerator.HW_TYPE, infos=infos))
    for group in config.node_groups or []:
        if group.hardware is None:
            continue
        items = [item for item in group.hardware.configs if item.node_rank == rank]
        if items:
            kind = group.hardware.type
            resources.append(rl.HardwareResource(type=kind, infos=[rl.HardwareInfo(type=kind, model=kind) for _ in items]))
    return rl.NodeInfo(
        node_labels=config.get_node_labels_by_rank(rank),
        node_rank=rank,
        ray_id=f"ray-node-{rank}",
        node_ip=f"10.0.0.{rank + 1}",
        num_cpus=8,
        python_interpreter_path=sys.executable,
        default_env_vars={},
        env_vars={},
        hardware_resources=resources,
    )


class FakeCluster:
    """The shape of the ``FakeCluster`` of RLinf's own placement tests: ``_nodes`` and a
    label -> group mapping in ``_node_groups``, no ``Cluster`` base class."""

    def __init__(self, nodes: list[Any], node_groups: dict[str, Any]) -> None:
        self._nodes = nodes
        self._node_groups = node_groups

    @property
    def num_nodes(self) -> int:
        return len(self._nodes)

    @property
    def num_accelerators(self) -> int:
        return sum(node.num_accelerators for node in self._nodes)

    def get_node_group(self, label: str | None = "cluster") -> Any:
        return self._node_groups.get("cluster" if label is None else str(label))

    def get_node_info(self, node_rank: int) -> Any:
        return self._nodes[node_rank]


def fake_cluster(cluster: Any) -> FakeCluster:
    """The same nodes and groups as RLinf's ``cluster``, held the way RLinf's test fake holds them."""
    return FakeCluster(cluster._nodes, {group.label: group for group in cluster._node_groups})


@dataclass(frozen=True)
class Record:
    """One placement as the 11 RLinf fields, values as each library produced them."""

    values: tuple[Any, ...]

    def differing(self, other: Record) -> set[str]:
        return {name for name, mine, theirs in zip(FIELDS, self.values, other.values) if mine != theirs or type(mine) is not type(theirs)}


def records(placements: Sequence[Any]) -> list[Record]:
    """The 11 RLinf fields of each placement, lists copied, types kept (``"0"`` is not ``0``)."""
    out = []
    for placement in placements:
        values = []
        for name in FIELDS:
            value = getattr(placement, name)
            values.append(tuple(value) if isinstance(value, list) else value)
        out.append(Record(tuple(values)))
    return out
