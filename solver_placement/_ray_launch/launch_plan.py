"""From placement records to a Ray launch plan: plain, inspectable, serializable data.

One job-wide placement group reserves everything at once: one bundle per (node, GPU) and per
(node, robot item) in use, and one per CPU-only process, each pinned to its node by a label
selector: the node-rank label, or Ray's ``ray.io/node-id`` where nodes carry no rank label
(``labels`` says which scheme and why). Required ``topology`` domains add their labels, and
where Ray has ``topology_strategy`` the group splits into one per domain (``domains``). Every
process is anchored to the bundle of its first item and asks for no GPU itself (the
reservation holds them); it gets the exact device ids through ``CUDA_VISIBLE_DEVICES`` with
Ray's NOSET flag, because Ray cannot be asked for a specific GPU index. Collocated components
are separate actors anchored to the same bundles.

A node's GPU bundles come in ascending GPU order. Ray hands them the node's lowest free GPU
ids, so ``reserve`` may add *idle* bundles (``idle_gpus``, ``Bundle.idle``) for free GPUs below
the planned ones, so that every planned bundle really holds its planned GPU and Ray's
bookkeeping matches the devices the workers use (``gpu_match`` explains the attempts). A model
of the free GPUs only (``cluster.free_gpus_only``) instead reserves every GPU id a process on the
node sees, and the devices are what Ray gives (``free_gpus``).

The environment of a worker follows fixed rules (the table of docs/ray.md lists every variable):

* The device variable (``CUDA_VISIBLE_DEVICES``) is the record's ``visible_accelerators``, joined,
  for every process, and the record's ``env`` (``egl_device`` / ``numa_bind`` variables) is set
  as it is: the launch says what the record says. So a process holding no GPU sees every GPU of
  its node (RLinf's meaning, which its WorkerGroup sets from the same field) unless its
  component sets ``hide_accelerators``, and then sees none.
* ``LOCAL_RANK`` is the device index the process should use (``cuda:LOCAL_RANK``): the position
  of its first own GPU among the devices it sees. With isolated accelerators (the default) a
  process sees only its own GPUs, so it is 0 even when the records' ``local_rank`` says 3;
  ``torchrun``'s "position on the node" would select a GPU the process cannot see. Processes
  without a GPU get the position among the component's processes on their node.
  ``LOCAL_WORLD_SIZE`` counts the component's processes on the node that see the same devices.
  The node-level position is always in ``NODE_LOCAL_RANK`` / ``NODE_LOCAL_WORLD_SIZE``.
* A process holding custom hardware items (robots) gets ``HARDWARE_TYPE`` and
  ``HARDWARE_CONFIGS``: a JSON list with one object per item of ``LOCAL_HARDWARE_RANKS``, the
  item's ``hardware.configs`` entry without ``node_rank`` (e.g. ``robot_ip``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from solver_placement._cluster.cluster import Cluster
from solver_placement._cluster.ray_nodes import NODE_RANK_LABEL, RayNode, ip_key
from solver_placement._constants import ACCELERATOR, DEFAULT_ACCELERATOR_TYPE, NODE
from solver_placement._errors import PlacementConfigError, agreeing, counted
from solver_placement._ray_launch.cluster_check import EMBEDDED_RAY_HINT, check_cluster_matches, items_on
from solver_placement._ray_launch.domain_groups import PlacementGroupPlan, node_domains, placement_groups
from solver_placement._ray_launch.labels import Scheme, choose_scheme, cluster_node_labels, gpu_model_resource, node_selector
from solver_placement._records import Placement

#: Per accelerator type: the visible-devices variable and Ray's flag that leaves it alone; a type
#: not listed is launched as the default one (NVIDIA's).
DEVICE_ENV = {
    DEFAULT_ACCELERATOR_TYPE: ("CUDA_VISIBLE_DEVICES", "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"),
    "AMD_GPU": ("HIP_VISIBLE_DEVICES", "RAY_EXPERIMENTAL_NOSET_HIP_VISIBLE_DEVICES"),
    "NPU": ("ASCEND_RT_VISIBLE_DEVICES", "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES"),
    "INTEL_GPU": ("ZE_AFFINITY_MASK", "RAY_EXPERIMENTAL_NOSET_ZE_AFFINITY_MASK"),
}


@dataclass(frozen=True)
class Bundle:
    """One reserved bundle: its node, what it holds, the local item it stands for, and the node
    labels Ray must find where it goes."""

    node_rank: int
    node_id: str
    resources: dict[str, float]
    item: str  # "gpu 3", "franka 0", or "cpu <component>/<rank>"
    label_selector: dict[str, str]
    idle: bool = False  # a free GPU no process uses, held so that Ray hands the planned GPUs to their bundles


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
    """Everything a launch does, decided before anything is reserved: ``scheme`` and
    ``scheme_reason`` say how bundles find their nodes (``labels``), ``placement_groups`` how
    they are reserved (``domains``), ``free_gpus_only`` that device ids are Ray's to give (``free_gpus``)."""

    job_name: str
    node_ids: list[str]
    node_ips: list[str]
    bundles: list[Bundle]
    processes: dict[str, list[ProcessLaunch]]
    scheme: str
    scheme_reason: str
    placement_groups: list[PlacementGroupPlan]
    free_gpus_only: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def slots(self) -> list[tuple[int, int]]:
        """Per bundle of the plan: its placement group and its index there, what Ray's
        ``PlacementGroupSchedulingStrategy`` names."""
        slots = [(0, 0)] * len(self.bundles)
        for group, plan in enumerate(self.placement_groups):
            for position, bundle in enumerate(plan.bundles):
                slots[bundle] = (group, position)
        return slots

    def with_env(self, changed: Mapping[str, Sequence[Mapping[str, str]]]) -> RayLaunchPlan:
        """The same plan with, per component and process (in plan order), these env vars set (found at launch time)."""
        processes = {
            name: [replace(p, env={**p.env, **changed[name][i]}) if name in changed else p for i, p in enumerate(launches)]
            for name, launches in self.processes.items()
        }
        return replace(self, processes=processes)

    def with_master_ports(self, ports: Mapping[str, int]) -> RayLaunchPlan:
        """The same plan with ``MASTER_PORT`` filled per component (found at launch time)."""
        return self.with_env({name: [{"MASTER_PORT": str(ports[name])}] * len(launches) for name, launches in self.processes.items()})


def stated_ray_nodes(cluster: Cluster, cpus_per_node: float = 64.0) -> list[RayNode]:
    """Ray nodes as the cluster model describes them, for a plan made without Ray (dry runs)."""
    nodes = []
    for rank in range(cluster.num_nodes):
        resources: dict[str, float] = {"CPU": cpus_per_node, "GPU": float(cluster.gpus_per_node[rank])}
        resources.update({kind: float(count) for kind, count in items_on(cluster, rank).items()})
        nodes.append(RayNode(f"model-node-{rank}", f"node-{rank}", resources, cluster_node_labels(cluster, rank)))
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
        ordered = sorted(ray_nodes, key=lambda node: (ip_key(node.ip), node.node_id))
        if len(ordered) != num_nodes:
            raise PlacementConfigError(
                f"the cluster model has {counted(num_nodes, 'node')} but Ray has {len(ordered)}; they must match "
                f"(launch on a cluster of {counted(num_nodes, 'node')}; {EMBEDDED_RAY_HINT})"
            )
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
    cluster: Cluster | None,
    ray_nodes: Sequence[RayNode],
    *,
    job_name: str = "solver-placement",
    cpus_per_process: float = 1.0,
    idle_gpus: Mapping[int, Collection[int]] | None = None,
    required_domains: Mapping[str, Sequence[str]] | None = None,
    topology_strategy: bool = False,
) -> RayLaunchPlan:
    """Build the launch plan of every component (collocated ones share bundles); ``idle_gpus``:
    per node rank, GPUs to reserve with no process on them (see ``gpu_match``);
    ``required_domains``: per component, the labels its groups must stay inside
    (``domains.required_domains``); ``topology_strategy``: whether Ray has it (``features``).

    Without ``cluster`` the records and Ray's nodes suffice (node ranks from the
    ``solver-placement/node-rank`` labels, else Ray's nodes in IP order), but the node groups'
    ``env_configs`` and hardware metadata are unknown, so workers get neither.
    """
    nodes = map_nodes(ray_nodes, cluster.num_nodes if cluster is not None else live_node_count(ray_nodes))
    used = sorted({p.cluster_node_rank for records in placements.values() for p in records})
    if cluster is not None:
        check_cluster_matches(cluster, nodes, used)
    missing = [rank for rank in used if nodes[rank] is None]
    if missing:
        raise PlacementConfigError(
            f"{agreeing(len(missing), 'node')} {missing} of the plan {agreeing(len(missing), 'has', 'have')} no Ray node (no Ray node carries {NODE_RANK_LABEL}={missing[0]}); "
            "re-plan without them (solver_placement.replan) or bring them back"
        )
    used_nodes = {rank: node for rank in used if (node := nodes[rank]) is not None}
    scheme = choose_scheme(used_nodes)
    domains = node_domains(placements, required_domains or {}, used_nodes, cluster)
    free = cluster is not None and cluster.free_gpus_only
    idle = _merged(idle_gpus or {}, _seen_gpus(placements) if free else {})
    bundles, anchor = _bundles(placements, used_nodes, cpus_per_process, idle, scheme, domains)
    _check_capacity(bundles, used_nodes)
    processes = {
        name: [_process(p, anchor, used_nodes, cluster, records, job_name, cpus_per_process) for p in records]
        for name, records in placements.items()
    }
    return RayLaunchPlan(
        job_name, [n.node_id if n else "" for n in nodes], [n.ip if n else "" for n in nodes], bundles, processes,
        scheme.name, scheme.reason, placement_groups([b.node_rank for b in bundles], domains, topology_strategy), free,
    )  # fmt: skip


def _seen_gpus(placements: Mapping[str, Sequence[Placement]]) -> dict[int, set[int]]:
    """Per node, every GPU id a process there sees (its own, or all of the node's): with
    ``free_gpus_only`` the plan reserves each of them, so each one stands for a device Ray gave."""
    seen: dict[int, set[int]] = defaultdict(set)
    for records in placements.values():
        for p in records:
            seen[p.cluster_node_rank].update(int(gpu) for gpu in p.visible_accelerators if gpu)
    return seen


def _merged(first: Mapping[int, Collection[int]], second: Mapping[int, Collection[int]]) -> dict[int, set[int]]:
    merged: dict[int, set[int]] = defaultdict(set)
    for part in (first, second):
        for rank, gpus in part.items():
            merged[rank].update(gpus)
    return merged


def live_node_count(ray_nodes: Sequence[RayNode]) -> int:
    """How many node ranks Ray's nodes stand for: one past the largest rank label, else the count."""
    ranks = [node.labels[NODE_RANK_LABEL] for node in ray_nodes if NODE_RANK_LABEL in node.labels]
    return max((int(rank) + 1 for rank in ranks if rank.isdigit()), default=len(ray_nodes))


def _item_key(p: Placement) -> tuple[int, str, int | str]:
    """The bundle a process anchors to: its first GPU or robot, or its own CPU bundle."""
    if p.hardware_type == NODE:
        return (p.cluster_node_rank, "cpu", f"{p.component}/{p.rank}")
    return (p.cluster_node_rank, p.hardware_type, p.local_hardware_ranks[0])


def _bundles(
    placements: Mapping[str, Sequence[Placement]],
    nodes: Mapping[int, RayNode],
    cpus: float,
    idle_gpus: Mapping[int, Collection[int]],
    scheme: Scheme,
    domains: Mapping[int, Mapping[str, str]],
) -> tuple[list[Bundle], dict[tuple[int, str, int | str], int]]:
    held: dict[tuple[int, str, int | str], float] = defaultdict(float)
    groups: dict[tuple[int, str, int | str], set[str]] = defaultdict(set)
    for records in placements.values():
        for p in records:
            held[_item_key(p)] += cpus
            groups[_item_key(p)].add(p.node_group_label)
            if p.hardware_type != NODE:
                for local in p.local_hardware_ranks[1:]:
                    held.setdefault((p.cluster_node_rank, p.hardware_type, local), 0.0)
    used = set(held)
    for node_rank, gpus in idle_gpus.items():
        for local in gpus:
            held.setdefault((node_rank, ACCELERATOR, local), 0.0)
    bundles: list[Bundle] = []
    anchor: dict[tuple[int, str, int | str], int] = {}
    for key in sorted(held, key=_bundle_order(held)):
        node_rank, kind, item = key
        node = nodes[node_rank]
        resources = {"CPU": held[key]} if held[key] else {}
        if kind == ACCELERATOR:
            resources.update({"GPU": 1.0, **gpu_model_resource(scheme, node)})
        elif kind != "cpu":
            resources[kind] = 1.0
        if not resources:
            resources = {"CPU": 0.001}
        label = f"gpu {item}" if kind == ACCELERATOR else (f"cpu {item}" if kind == "cpu" else f"{kind} {item}")
        selector = {**node_selector(scheme, node, frozenset(groups.get(key, ())), kind == ACCELERATOR), **domains.get(node_rank, {})}
        anchor[key] = len(bundles)
        bundles.append(Bundle(node_rank, node.node_id, resources, label, selector, idle=key not in used))
    return bundles, anchor


def _bundle_order(held: Mapping[tuple[int, str, int | str], float]) -> Any:
    """Node by node: GPUs by ascending id, then robots, then CPU bundles in first-use order.

    Ray hands a node's GPUs to its bundles lowest-free-first in bundle order, so ascending GPU
    ids (with the idle bundles below) make each bundle hold its planned GPU (``gpu_match``).
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
    cluster: Cluster | None,
    component_records: Sequence[Placement],
    job_name: str,
    cpus: float,
) -> ProcessLaunch:
    env_vars, interpreter = _group_env(cluster, p)
    device_var, noset = DEVICE_ENV.get(p.accelerator_type, DEVICE_ENV[DEFAULT_ACCELERATOR_TYPE])
    env = {
        **env_vars,
        **p.env,
        device_var: ",".join(p.visible_accelerators),
        noset: "1",
        "RANK": str(p.rank),
        "WORLD_SIZE": str(len(component_records)),
        **_local_rank_env(p, component_records),
        "NODE_LOCAL_RANK": str(p.local_rank),
        "NODE_LOCAL_WORLD_SIZE": str(p.local_world_size),
        "NODE_RANK": str(p.placement_node_rank),
        "CLUSTER_NODE_RANK": str(p.cluster_node_rank),
        "MASTER_ADDR": nodes[component_records[0].cluster_node_rank].ip,
        "OMP_NUM_THREADS": env_vars.get("OMP_NUM_THREADS", str(max(1, int(cpus)))),  # a node group's value replaces the default (worker_env)
        "NODE_GROUP_LABEL": p.node_group_label,
        "LOCAL_HARDWARE_RANKS": ",".join(map(str, p.local_hardware_ranks)),
        **_hardware_env(p),
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


def _local_rank_env(p: Placement, component_records: Sequence[Placement]) -> dict[str, str]:
    """``LOCAL_RANK`` / ``LOCAL_WORLD_SIZE`` by the rule of the module docstring."""
    if p.hardware_type == ACCELERATOR:
        local_rank = p.visible_accelerators.index(str(p.local_accelerator_rank))
    else:
        local_rank = p.local_rank
    same_view = [
        other for other in component_records
        if other.cluster_node_rank == p.cluster_node_rank and other.visible_accelerators == p.visible_accelerators
    ]
    return {"LOCAL_RANK": str(local_rank), "LOCAL_WORLD_SIZE": str(len(same_view))}


def _hardware_env(p: Placement) -> dict[str, str]:
    """The type and ``hardware.configs`` metadata of a process's custom items (robots), from
    the record itself, so a launch without ``cluster=`` still hands robots their configs."""
    if p.hardware_type in (ACCELERATOR, NODE):
        return {}
    configs = [dict(item) for item in p.hardware_metadata]
    return {"HARDWARE_TYPE": p.hardware_type, "HARDWARE_CONFIGS": json.dumps(configs, sort_keys=True, default=str)}


def _group_env(cluster: Cluster | None, p: Placement) -> tuple[dict[str, str], str | None]:
    """The env vars and interpreter the process's node group configures for its node."""
    group = cluster.node_groups.get(p.node_group_label) if cluster is not None else None
    for config in group.env_configs if group else ():
        if p.cluster_node_rank in config.node_ranks:
            return dict(config.env_vars), config.python_interpreter_path
    return {}, None
