"""From placement records to a Ray launch plan: plain, inspectable, serializable data.

One job-wide placement group reserves everything at once: one bundle per (node, GPU) and per
(node, robot item) in use, and one per CPU-only process, each pinned to its node by Ray's
``ray.io/node-id`` label. Every process is anchored to the bundle of its first item and asks
for no GPU itself (the reservation holds them); it gets the exact device ids through
``CUDA_VISIBLE_DEVICES`` with Ray's NOSET flag, because Ray cannot be asked for a specific GPU
index. Collocated components are separate actors anchored to the same bundles.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from solver_placement.cluster.cluster import Cluster
from solver_placement.constants import ACCELERATOR, NODE
from solver_placement.errors import PlacementConfigError
from solver_placement.records import Placement

NODE_RANK_LABEL = "solver-placement/node-rank"
NODE_ID_LABEL = "ray.io/node-id"

#: Per accelerator type: the visible-devices variable and Ray's flag that leaves it alone.
DEVICE_ENV = {
    "NV_GPU": ("CUDA_VISIBLE_DEVICES", "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"),
    "AMD_GPU": ("HIP_VISIBLE_DEVICES", "RAY_EXPERIMENTAL_NOSET_HIP_VISIBLE_DEVICES"),
    "NPU": ("ASCEND_RT_VISIBLE_DEVICES", "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES"),
    "INTEL_GPU": ("ZE_AFFINITY_MASK", "RAY_EXPERIMENTAL_NOSET_ZE_AFFINITY_MASK"),
}


@dataclass(frozen=True)
class RayNode:
    """What the plan needs to know of one Ray node."""

    node_id: str
    ip: str
    resources: Mapping[str, float]
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Bundle:
    """One reserved bundle: its node, what it holds, and the local item it stands for."""

    node_rank: int
    node_id: str
    resources: dict[str, float]
    item: str  # "gpu 3", "franka 0", or "cpu <component>/<rank>"


@dataclass(frozen=True)
class ProcessLaunch:
    """How to start one process: its anchor bundle, resources and environment."""

    component: str
    rank: int
    node_rank: int
    node_id: str
    bundle_index: int
    num_cpus: float
    resources: dict[str, float]
    env: dict[str, str]
    py_executable: str | None
    name: str


@dataclass(frozen=True)
class RayLaunchPlan:
    """Everything a launch does, decided before anything is reserved."""

    job_name: str
    node_ids: list[str]
    node_ips: list[str]
    bundles: list[Bundle]
    processes: dict[str, list[ProcessLaunch]]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def with_master_ports(self, ports: Mapping[str, int]) -> RayLaunchPlan:
        """The same plan with ``MASTER_PORT`` filled per component (found at launch time)."""
        processes = {
            name: [
                ProcessLaunch(**{**asdict(p), "env": {**p.env, "MASTER_PORT": str(ports[name])}}) for p in launches
            ]
            for name, launches in self.processes.items()
        }
        return RayLaunchPlan(self.job_name, self.node_ids, self.node_ips, self.bundles, processes)


def modelled_nodes(cluster: Cluster, cpus_per_node: float = 64.0) -> list[RayNode]:
    """Ray nodes as the cluster model describes them, for a plan made without Ray (dry runs)."""
    nodes = []
    for rank in range(cluster.num_nodes):
        resources: dict[str, float] = {"CPU": cpus_per_node, "GPU": float(cluster.gpus_per_node[rank])}
        for hw in map(int, (cluster.hw_node == rank).nonzero()[0]):
            kind = cluster.kind_of(hw)
            if kind not in (ACCELERATOR, NODE):
                resources[kind] = resources.get(kind, 0.0) + 1.0
        nodes.append(RayNode(f"model-node-{rank}", f"node-{rank}", resources, {NODE_RANK_LABEL: str(rank)}))
    return nodes


def map_nodes(ray_nodes: Sequence[RayNode], num_nodes: int) -> list[RayNode | None]:
    """Ray node per node rank of the model.

    With the ``solver-placement/node-rank`` label, ranks come from the labels and a model node
    that Ray does not have (e.g. lost, the model re-planned around it) maps to None; the plan
    may then put nothing on it. Without labels, nodes are sorted by (IP, node id) and the counts
    must match exactly.
    """
    labelled = [node for node in ray_nodes if NODE_RANK_LABEL in node.labels]
    if not labelled:
        ordered = sorted(ray_nodes, key=lambda node: (_ip_key(node.ip), node.node_id))
        if len(ordered) != num_nodes:
            raise PlacementConfigError(f"the cluster model has {num_nodes} node(s) but Ray has {len(ordered)}; they must match")
        return list(ordered)
    by_rank: dict[int, RayNode] = {}
    for node in labelled:
        raw = node.labels[NODE_RANK_LABEL]
        if not raw.isdigit() or int(raw) in by_rank or int(raw) >= num_nodes:
            raise PlacementConfigError(
                f"Ray node {node.node_id[:12]} has a bad, duplicate or out-of-model {NODE_RANK_LABEL} label {raw!r} "
                f"(the model has nodes 0-{num_nodes - 1})"
            )
        by_rank[int(raw)] = node
    return [by_rank.get(rank) for rank in range(num_nodes)]


def to_ray(
    placements: Mapping[str, Sequence[Placement]],
    cluster: Cluster,
    ray_nodes: Sequence[RayNode],
    *,
    job_name: str = "solver-placement",
    cpus_per_process: float = 1.0,
) -> RayLaunchPlan:
    """Build the launch plan of every component (collocated ones share bundles)."""
    nodes = map_nodes(ray_nodes, cluster.num_nodes)
    used = sorted({p.cluster_node_rank for records in placements.values() for p in records})
    missing = [rank for rank in used if nodes[rank] is None]
    if missing:
        raise PlacementConfigError(
            f"node(s) {missing} of the plan have no Ray node (no Ray node carries {NODE_RANK_LABEL}={missing[0]}); "
            "re-plan without them (solver_placement.replan) or bring them back"
        )
    used_nodes = {rank: node for rank in used if (node := nodes[rank]) is not None}
    bundles, anchor = _bundles(placements, used_nodes, cpus_per_process)
    _check_capacity(bundles, used_nodes)
    processes = {
        name: [_process(p, anchor, used_nodes, cluster, records, job_name, cpus_per_process) for p in records]
        for name, records in placements.items()
    }
    return RayLaunchPlan(
        job_name, [n.node_id if n else "" for n in nodes], [n.ip if n else "" for n in nodes], bundles, processes
    )


def _item_key(p: Placement) -> tuple[int, str, int | str]:
    """The bundle a process anchors to: its first GPU or robot, or its own CPU bundle."""
    if p.hardware_type == NODE:
        return (p.cluster_node_rank, "cpu", f"{p.component}/{p.rank}")
    return (p.cluster_node_rank, p.hardware_type, p.local_hardware_ranks[0])


def _bundles(
    placements: Mapping[str, Sequence[Placement]], nodes: Mapping[int, RayNode], cpus: float
) -> tuple[list[Bundle], dict[tuple[int, str, int | str], int]]:
    held: dict[tuple[int, str, int | str], float] = defaultdict(float)
    for records in placements.values():
        for p in records:
            held[_item_key(p)] += cpus
            if p.hardware_type != NODE:
                for local in p.local_hardware_ranks[1:]:
                    held.setdefault((p.cluster_node_rank, p.hardware_type, local), 0.0)
    bundles: list[Bundle] = []
    anchor: dict[tuple[int, str, int | str], int] = {}
    for key in sorted(held, key=_bundle_order(held)):
        node_rank, kind, item = key
        resources = {"CPU": held[key]} if held[key] else {}
        if kind == ACCELERATOR:
            resources["GPU"] = 1.0
        elif kind != "cpu":
            resources[kind] = 1.0
        if not resources:
            resources = {"CPU": 0.001}
        label = f"gpu {item}" if kind == ACCELERATOR else (f"cpu {item}" if kind == "cpu" else f"{kind} {item}")
        anchor[key] = len(bundles)
        bundles.append(Bundle(node_rank, nodes[node_rank].node_id, resources, label))
    return bundles, anchor


def _bundle_order(held: Mapping[tuple[int, str, int | str], float]) -> Any:
    """Node by node: GPUs by ascending id, then robots, then CPU bundles in first-use order.

    Ray hands a node's GPUs to its bundles first-free in bundle order, so ascending GPU ids make
    a clean node's bundle i hold exactly GPU i (the probe checks it).
    """
    first_use = {key: position for position, key in enumerate(held)}

    def key(item: tuple[int, str, int | str]) -> tuple[int, int, str, int]:
        node_rank, kind, local = item
        rank = 0 if kind == ACCELERATOR else (2 if kind == "cpu" else 1)
        return (node_rank, rank, kind, local if isinstance(local, int) else first_use[item])

    return key


def _check_capacity(bundles: Sequence[Bundle], nodes: Mapping[int, RayNode]) -> None:
    """Fail before reserving when a node lacks what its bundles need."""
    need: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for bundle in bundles:
        for resource, amount in bundle.resources.items():
            need[bundle.node_rank][resource] += amount
    for node_rank, wanted in sorted(need.items()):
        have = nodes[node_rank].resources
        for resource, amount in sorted(wanted.items()):
            if have.get(resource, 0.0) + 1e-9 < amount:
                raise PlacementConfigError(
                    f"node {node_rank} (Ray node {nodes[node_rank].node_id[:12]}, {nodes[node_rank].ip}) needs "
                    f"{amount:g} {resource} but has {have.get(resource, 0.0):g}"
                )


def _process(
    p: Placement,
    anchor: Mapping[tuple[int, str, int | str], int],
    nodes: Mapping[int, RayNode],
    cluster: Cluster,
    component_records: Sequence[Placement],
    job_name: str,
    cpus: float,
) -> ProcessLaunch:
    env_vars, interpreter = _group_env(cluster, p)
    device_var, noset = DEVICE_ENV.get(p.accelerator_type, DEVICE_ENV["NV_GPU"])
    own_gpus = p.hardware_type == ACCELERATOR
    isolated = own_gpus and p.isolate_accelerator
    env = {
        **env_vars,
        device_var: ",".join(p.visible_accelerators) if own_gpus or not p.isolate_accelerator else "",
        noset: "1",
        "RANK": str(p.rank),
        "WORLD_SIZE": str(len(component_records)),
        "LOCAL_RANK": "0" if isolated else str(p.local_rank),
        "LOCAL_WORLD_SIZE": "1" if isolated else str(p.local_world_size),
        "NODE_LOCAL_RANK": str(p.local_rank),
        "NODE_LOCAL_WORLD_SIZE": str(p.local_world_size),
        "NODE_RANK": str(p.placement_node_rank),
        "CLUSTER_NODE_RANK": str(p.cluster_node_rank),
        "MASTER_ADDR": nodes[component_records[0].cluster_node_rank].ip,
        "OMP_NUM_THREADS": str(max(1, int(cpus))),
        "NODE_GROUP_LABEL": p.node_group_label,
        "LOCAL_HARDWARE_RANKS": ",".join(map(str, p.local_hardware_ranks)),
    }
    custom = {p.hardware_type: 0.001} if p.hardware_type not in (ACCELERATOR, NODE) else {}
    return ProcessLaunch(
        component=p.component,
        rank=p.rank,
        node_rank=p.cluster_node_rank,
        node_id=nodes[p.cluster_node_rank].node_id,
        bundle_index=anchor[_item_key(p)],
        num_cpus=cpus,
        resources=custom,
        env=env,
        py_executable=interpreter,
        name=f"{job_name}/{p.component}/{p.rank}",
    )


def _group_env(cluster: Cluster, p: Placement) -> tuple[dict[str, str], str | None]:
    """The env vars and interpreter the process's node group configures for its node."""
    group = cluster.node_groups.get(p.node_group_label)
    for config in group.env_configs if group else ():
        if p.cluster_node_rank in config.node_ranks:
            return dict(config.env_vars), config.python_interpreter_path
    return {}, None


def _ip_key(ip: str) -> tuple[int, ...] | tuple[str]:
    parts = ip.split(".")
    return tuple(int(x) for x in parts) if all(x.isdigit() for x in parts) else (ip,)
