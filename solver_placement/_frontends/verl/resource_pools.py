"""verl-style resource pools and role mappings, compiled into placement specs.

A pool is verl's ``process_on_nodes`` list (GPUs per placement group, each group on one node).
verl's trainer fuses the roles it maps to a pool into one worker class (``WorkerDict``) and
starts one worker of it per GPU, so the roles of a pool are one component here, named by its
roles joined with ``+`` (``actor_rollout+critic``): a summary counts the 16 workers verl starts on
16 GPUs, not 16 per role. A role verl runs as a worker group of its own on a pool (0.9's reward
model beside the trainer on ``global_pool``) is a component of its own on the same GPUs.
A role in ``slices`` runs as a worker group of its own on a slice of the pool, ranks from 0: verl
0.9 serves its reward model and teachers so, one group per replica (``split_resource_pool``).
``max_colocate_count`` is verl's: how many worker groups may share the pool's GPUs (each worker
asks Ray for ``1/max_colocate_count`` of one, so one group more would wait for a GPU forever).

Where each pool runs is not the solver's choice but Ray's: ``pool_order`` places the pools'
placement groups in the order verl creates them, on the nodes Ray would give them, and each
component gets those GPUs as its fixed ranks, in verl's rank order.

The same pools read from a config's top-level ``resource_pools:`` section (verl's vocabulary),
so the command line places them like any ``component_placement``::

    resource_pools:
      resource_pool_spec:
        global_pool: {process_on_nodes: [8, 8], max_colocate_count: 2, own_worker_group: [rm]}
        teacher_pool: {process_on_nodes: [8], max_colocate_count: 3, slices: {teacher_0: [0, 4], teacher_1: [4, 4]}}
        eval_pool: [8]                      # process_on_nodes; its roles fused, max_colocate_count 1
      mapping: {actor_rollout: global_pool, critic: global_pool, rm: global_pool, teacher_0: teacher_pool,
                teacher_1: teacher_pool, evaluator: eval_pool}

A slice is ``[first, count]``: GPUs ``first`` to ``first + count - 1`` of the pool, counted over its
placement groups as verl's split sees them: by node when a group runs on all of the pool's GPUs
(verl creates that group first and sorts the pool's placement groups by node), else in the order
the pool created them (the split is then the first to ask for them, and gets them unsorted).

Pools are created in ``resource_pool_spec`` order; a pool's ``node_group`` limits its nodes. verl's own trainer config needs no such
section: ``_frontends/verl`` builds the pools and mapping from it as verl's driver does, with the
version's ``max_colocate_count`` and the roles it starts as groups of their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from solver_placement._cluster.cluster import Cluster
from solver_placement._cluster.ranks import format_ranks
from solver_placement._config import ConfigSource, check_keys, positive_int, require_mapping, text
from solver_placement._constants import ACCELERATOR, CLUSTER_LABEL
from solver_placement._errors import InfeasiblePlacementError, PlacementConfigError, counted, shown
from solver_placement._frontends.verl import verl_cluster, verl_pools
from solver_placement._frontends.verl.keys import VerlSizeError
from solver_placement._frontends.verl.pool_order import Landed, PoolRequest, land_pools
from solver_placement._frontends.verl.pools import VerlPools
from solver_placement._frontends.verl.size_fix import in_verl_keys, size_in_verl_keys
from solver_placement._frontends.verl.versions import VERL_TRAINER
from solver_placement._job import Job, load_job
from solver_placement._limits import check
from solver_placement._solver_settings import SolverSettings
from solver_placement._specification.placement_spec import PlacementSpec

#: The top-level config section that states verl-style pools, and its keys.
SECTION = "resource_pools"
SECTION_KEYS = ("resource_pool_spec", "mapping")
#: Keys of one pool written as a mapping (a list is ``process_on_nodes`` alone).
POOL_KEYS = ("process_on_nodes", "max_colocate_count", "own_worker_group", "node_group", "slices")
#: Joins the roles of a fused worker group into its component name; never part of a role name.
FUSED = "+"


@dataclass(frozen=True)
class ResourcePool:
    """GPUs per node entry (verl's ``process_on_nodes``); the roles mapped to it share those GPUs.

    The roles are fused into one worker per GPU, except those in ``own_worker_group``, which
    each run as a worker group of their own on the same GPUs, and those in ``slices``, each a
    group of its own on ``(first, count)`` of the pool's GPUs. ``max_colocate_count`` bounds the
    worker groups on a GPU (verl gives each worker ``1/max_colocate_count`` of one); ``node_group``
    restricts the nodes Ray may give the pool.
    """

    process_on_nodes: Sequence[int]
    max_colocate_count: int = 1
    node_group: str | None = None
    own_worker_group: Sequence[str] = ()
    slices: Mapping[str, tuple[int, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class PoolGroup:
    """One component placed from a pool: the pool, the roles its workers serve (several: fused
    into one worker per GPU) and the GPUs of each of the pool's placement groups."""

    pool: str
    roles: tuple[str, ...]
    entry: int


def pool_spec(
    cluster: Cluster, pools: Mapping[str, ResourcePool], mapping: Mapping[str, str], solver_options: Mapping[str, Any] | None = None
) -> PlacementSpec:
    """Compile pools and a role -> pool mapping into a spec (pools created in ``pools`` order).

    ``solver_options`` is a ``cluster.solver`` section (time limit, workers, ...) as a config
    writes it."""
    return pool_groups(cluster, pools, mapping, solver_options)[0]


def pool_groups(
    cluster: Cluster, pools: Mapping[str, ResourcePool], mapping: Mapping[str, str], solver_options: SolverSettings | Mapping[str, Any] | None = None
) -> tuple[PlacementSpec, dict[str, PoolGroup]]:
    """:func:`pool_spec`, and the pool and roles of each component it makes."""
    groups: dict[str, PoolGroup] = {}
    requests: list[PoolRequest] = []
    roles_by_pool = _roles_by_pool(pools, mapping)
    entries_by_pool = _sizes_checked(pools, roles_by_pool)
    node_sets: dict[str | None, tuple[int, ...]] = {}  # one tuple per node group, shared by its pools' requests
    for name, roles in roles_by_pool.items():
        entries = entries_by_pool[name]
        worker_groups = _worker_groups(name, pools[name], roles)
        groups.update({FUSED.join(group): PoolGroup(name, group, entries[0]) for group in worker_groups})
        if pools[name].node_group not in node_sets:
            node_sets[pools[name].node_group] = _nodes(cluster, name, pools[name])
        requests.append(PoolRequest(name, entries, node_sets[pools[name].node_group], FUSED.join(worker_groups[0]), pools[name].max_colocate_count))
    landed = land_pools(cluster.gpus_per_node.tolist(), requests)
    first_gpus = {node_group: _first_gpus(cluster, nodes) for node_group, nodes in node_sets.items()}
    ordered = {
        name: in_slice_order(landed[name], any(role not in pools[name].slices for role in roles)) for name, roles in roles_by_pool.items() if pools[name].slices
    }
    placement: dict[str, Any] = {}
    for component, group in groups.items():
        pool = pools[group.pool]
        held = slice_gpus(ordered[group.pool], *pool.slices[component]) if component in pool.slices else landed[group.pool]
        rule = {"placement": _ranks(first_gpus[pool.node_group], held)}
        node_group = pools[group.pool].node_group
        placement[component] = rule if node_group is None else {**rule, "node_group": node_group}
    return PlacementSpec.build(cluster, placement, solver_options), groups


def _roles_by_pool(pools: Mapping[str, ResourcePool], mapping: Mapping[str, str]) -> dict[str, list[str]]:
    """The roles of each pool that has any, pools in their given order."""
    roles_of: dict[str, list[str]] = {name: [] for name in pools}
    for role, pool_name in mapping.items():
        if not isinstance(role, str) or not role or FUSED in role or "," in role:
            raise PlacementConfigError(f"role {shown(role)}: a role name is a non-empty string without {FUSED!r} or ','")
        if pool_name not in pools:
            raise PlacementConfigError(f"role {role!r} is mapped to unknown resource pool {pool_name!r}; pools: {', '.join(pools)}")
        roles_of[pool_name].append(role)
    used = {name: roles for name, roles in roles_of.items() if roles}
    if not used:
        raise PlacementConfigError("no role is mapped to any resource pool")
    return used


def _sizes_checked(pools: Mapping[str, ResourcePool], roles_by_pool: Mapping[str, Sequence[str]]) -> dict[str, tuple[int, ...]]:
    """Each used pool's entries, after the counts every later step grows with are checked against
    their limits: worker groups (components), GPUs of all pools, slices. Checked from the input's
    own sizes, before any list per GPU or per node is made (``process_on_nodes: [10**9]`` is
    refused here, not after a list of a billion GPUs)."""
    entries = {name: _entries(name, pools[name]) for name in roles_by_pool}
    components = sum(
        bool(set(roles) - set(pools[name].own_worker_group) - set(pools[name].slices)) + len(pools[name].own_worker_group) + len(pools[name].slices)
        for name, roles in roles_by_pool.items()
    )
    check("max_components", components, "resource pools", "the number of worker groups (a component each)")
    check("max_processes", sum(map(sum, entries.values())), "resource pools", "the number of GPUs the pools ask for")
    return entries


def _entries(name: str, pool: ResourcePool) -> tuple[int, ...]:
    """``process_on_nodes``: one entry per node (``max_nodes``), each a placement group on one node
    (``max_items_per_node`` GPUs at most), all equal."""
    entries = tuple(pool.process_on_nodes)
    where = f"resource pool {name!r}: process_on_nodes"
    check("max_nodes", len(entries), where, "the number of entries (a node each)")
    if not entries or any(isinstance(n, bool) or not isinstance(n, int) or n <= 0 for n in entries):
        raise PlacementConfigError(f"{where} must be positive GPU counts, not {shown(list(entries))}")
    check("max_items_per_node", max(entries), where, "the GPUs of one entry (a placement group on one node)")
    if len(set(entries)) != 1:
        raise PlacementConfigError(f"resource pool {name!r}: process_on_nodes {list(entries)} mixes entry sizes; like verl, a pool's entries must be equal")
    return entries


def _worker_groups(name: str, pool: ResourcePool, roles: Sequence[str]) -> list[tuple[str, ...]]:
    """The pool's fused roles as one group, then each role that runs as a group of its own (on
    all of the pool's GPUs, then on its slice)."""
    own = list(pool.own_worker_group)
    mapped, own_roles = set(roles), set(own)
    for key, named in (("own_worker_group", own), ("slices", list(pool.slices))):
        strays = [role for role in named if role not in mapped]
        if strays:
            raise PlacementConfigError(f"resource pool {name!r}: {key} names {', '.join(map(repr, strays))}, not mapped to the pool")
    both = [role for role in own if role in pool.slices]
    if both:
        raise PlacementConfigError(f"resource pool {name!r}: {both[0]!r} is in own_worker_group and slices; a role runs on all of the pool's GPUs or on a slice")
    fused = tuple(role for role in roles if role not in own_roles and role not in pool.slices)
    whole = ([fused] if fused else []) + [(role,) for role in own]
    gpus = sum(pool.process_on_nodes)
    for role, (first, count) in pool.slices.items():
        if first < 0 or count < 1 or first + count > gpus:
            raise PlacementConfigError(f"resource pool {name!r}: slice {role!r} [{first}, {count}] is not within the pool's {gpus} GPUs (first from 0, count from 1)")
    sharing = _most_slices_on_a_gpu(pool.slices.values())
    if len(whole) + sharing > pool.max_colocate_count:
        listed = " and ".join(part for part in (", ".join(FUSED.join(group) for group in whole), f"up to {counted(sharing, 'slice')} on one GPU" * bool(pool.slices)) if part)
        raise PlacementConfigError(
            f"resource pool {name!r}: {len(whole) + sharing} worker groups ({listed}) exceed max_colocate_count="
            f"{pool.max_colocate_count}; verl gives each worker 1/{pool.max_colocate_count} of a GPU, so a further group would wait for GPUs forever"
        )
    return whole + [(role,) for role in pool.slices]


def _most_slices_on_a_gpu(slices: Iterable[tuple[int, int]]) -> int:
    """The most slices holding one GPU, swept over the slices' ends (not a count per GPU: the work
    follows the slices, not the pool's size); a slice ends before the next one starts on its GPU."""
    edges = sorted(edge for first, count in slices for edge in ((first, 1), (first + count, -1)))  # an end (-1) sorts first
    most = held = 0
    for _, change in edges:
        held += change
        most = max(most, held)
    return most


def in_slice_order(landed: Sequence[Landed], by_node: bool) -> list[Landed]:
    """A pool's placement groups in the order its slices count GPUs over them: by node (``by_node``:
    a group runs on all of the pool's GPUs), else in the order the pool created them (module
    docstring). Made once per pool, not once per slice."""
    return list(landed) if by_node else sorted(landed, key=lambda group: group.created)


def slice_gpus(ordered: Sequence[Landed], first: int, count: int) -> list[Landed]:
    """The GPUs of the slice ``[first, count]`` (within the pool), as the parts of the pool's
    placement groups (``in_slice_order``) it holds. A pool's groups are equal (its entries are), so
    the slice's groups are found by division: the work follows the slice, not the pool."""
    size = len(ordered[0].gpus)
    held: list[Landed] = []
    for index in range(first // size, (first + count - 1) // size + 1):
        group, start = ordered[index], index * size
        held.append(Landed(group.node, group.gpus[max(first - start, 0) : min(first + count - start, size)], group.created))
    return sorted(held, key=lambda group: group.node)


def _nodes(cluster: Cluster, name: str, pool: ResourcePool) -> tuple[int, ...]:
    """The nodes Ray may give the pool: its node group's (which must count GPUs), else all."""
    group = cluster.node_group(pool.node_group if pool.node_group is not None else CLUSTER_LABEL)
    if group.hardware_type != ACCELERATOR:
        raise PlacementConfigError(f"resource pool {name!r}: node group {group.label!r} counts {group.resource_noun}, not GPUs; a pool holds GPUs")
    return tuple(sorted(group.node_ranks))


def _first_gpus(cluster: Cluster, nodes: Sequence[int]) -> dict[int, int]:
    """The rank of each node's first GPU in its node group (GPUs counted node after node): once per
    node group, not once per component."""
    offset, start = 0, {}
    for node in nodes:
        start[node] = offset
        offset += int(cluster.gpus_per_node[node])
    return start


def _ranks(first_gpus: Mapping[int, int], landed: Sequence[Landed]) -> str:
    """The GPUs of ``landed`` as ranks of their node group, in rank text."""
    return format_ranks(first_gpus[group.node] + gpu for group in landed for gpu in group.gpus)


def pool_spec_from_config(config: ConfigSource | Job, cluster: Cluster | None = None) -> tuple[PlacementSpec, dict[str, PoolGroup]]:
    """The spec of a job's ``resource_pools:`` section (or of verl's trainer config) on its
    ``cluster:`` (or on ``cluster``, as :meth:`PlacementSpec.from_config` takes one), and the
    pool and roles of each of its components."""
    job = load_job(config, cluster)
    if job.frontend.name == VERL_TRAINER:
        if SECTION in job.config:
            raise PlacementConfigError(f"the config is verl's trainer config and has a {SECTION}: section too; verl builds its pools from the trainer config alone")
        return _verl_spec(job)
    section = require_mapping(job.config.get(SECTION), SECTION)
    check_keys(section, SECTION_KEYS, SECTION, required=SECTION_KEYS)
    if "component_placement" in job.section:
        raise PlacementConfigError(
            f"the config has both cluster.component_placement and {SECTION}:; state the placement one way (pools compile into component_placement)"
        )
    mapping = {str(role): text(pool, f"{SECTION}.mapping.{role}") for role, pool in require_mapping(section["mapping"], f"{SECTION}.mapping").items()}
    raw_pools = require_mapping(section["resource_pool_spec"], f"{SECTION}.resource_pool_spec")
    check("max_components", len(raw_pools), f"{SECTION}.resource_pool_spec", "the number of pools (a worker group each at least)")
    pools = {str(name): _pool(value, f"{SECTION}.resource_pool_spec.{name}") for name, value in raw_pools.items()}
    return pool_groups(job.stated_cluster, pools, mapping, job.solver_options)


def _verl_spec(job: Job) -> tuple[PlacementSpec, dict[str, PoolGroup]]:
    """verl's pools from its trainer config, placed on its ``cluster:``, on the given cluster, or
    on the nodes the config describes, with the version's ``max_colocate_count`` and worker
    groups; when they find no placement, the error says so in the config's size keys, with the
    nearest sizes that place (``size_fix``)."""
    if "component_placement" in job.section:
        raise PlacementConfigError("the config is verl's trainer config and has cluster.component_placement; verl builds its pools from the trainer config alone")
    def place(changed: Job) -> PlacementSpec:
        return _verl_groups(changed, verl_pools(changed.config))[0]

    try:
        built = verl_pools(job.config)
    except VerlSizeError as error:
        raise size_in_verl_keys(error, job, place) from None
    try:
        return _verl_groups(job, built)
    except InfeasiblePlacementError as error:
        raise in_verl_keys(error, job, built, place) from None


def _verl_groups(job: Job, built: VerlPools) -> tuple[PlacementSpec, dict[str, PoolGroup]]:
    """The spec of ``built`` (read from ``job``'s config) and its groups."""
    workers: dict[str, list[str]] = {name: [] for name in built.pools}  # each pool's roles, in one pass (10,000 replica pools)
    for role, pool_name in built.workers.items():
        workers[pool_name].append(role)
    pools = {
        name: ResourcePool(
            pool.process_on_nodes, pool.max_colocate_count, None,
            [r for r in workers[name] if r in built.own_groups and r not in built.slices],
            {r: built.slices[r] for r in workers[name] if r in built.slices},
        )
        for name, pool in built.pools.items()
    }  # fmt: skip
    return pool_groups(verl_cluster(built, job.cluster), pools, built.workers, job.solver_options)


def _pool(value: Any, where: str) -> ResourcePool:
    """One pool: a ``process_on_nodes`` list, or a mapping of :data:`POOL_KEYS`."""
    if isinstance(value, list):
        return ResourcePool(value)
    body = require_mapping(value, where)
    check_keys(body, POOL_KEYS, where, required=("process_on_nodes",))
    if not isinstance(body["process_on_nodes"], list):
        raise PlacementConfigError(f"{where}.process_on_nodes must be a list of GPU counts per node, e.g. [8, 8], not {shown(body['process_on_nodes'])}")
    own = body.get("own_worker_group", [])
    if not isinstance(own, list):
        raise PlacementConfigError(f"{where}.own_worker_group must be a list of role names, not {shown(own)}")
    group = body.get("node_group")
    return ResourcePool(
        body["process_on_nodes"],
        positive_int(body.get("max_colocate_count", 1), f"{where}.max_colocate_count"),
        None if group is None else text(group, f"{where}.node_group"),
        [text(role, f"{where}.own_worker_group[{index}]") for index, role in enumerate(own)],
        {str(role): _slice(bounds, f"{where}.slices.{role}") for role, bounds in require_mapping(body.get("slices", {}), f"{where}.slices").items()},
    )


def _slice(value: Any, where: str) -> tuple[int, int]:
    """``[first, count]``: the first of the pool's GPUs a slice holds (from 0) and how many."""
    if not isinstance(value, list) or len(value) != 2 or any(isinstance(n, bool) or not isinstance(n, int) for n in value) or value[0] < 0 or value[1] < 1:
        raise PlacementConfigError(f"{where} must be [first, count]: the first of the pool's GPUs (from 0) and how many (from 1), not {shown(value)}")
    check("max_processes", value[0] + value[1], where, "the GPUs up to the slice's last (first + count)")
    return value[0], value[1]
