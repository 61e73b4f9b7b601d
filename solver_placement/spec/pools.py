"""verl-style resource pools and role mappings, compiled into placement specs.

A pool is verl's ``process_on_nodes`` list (GPUs per node entry); every role mapped to a pool
shares the pool's GPUs (one process per GPU, collocated as separate actors, or fused into one
actor per GPU). The pool becomes a declarative component the solver places: each entry is a
group of processes kept on one node, pools are exclusive with each other, and the roles of a
pool share one placement rule.

The same pools read from a config's top-level ``resource_pools:`` section (verl's vocabulary),
so the command line places them like any ``component_placement``::

    resource_pools:
      resource_pool_spec:
        global_pool: [8, 8]                 # process_on_nodes; the pool takes every role mapped to it
        reward_pool: {process_on_nodes: [4], max_colocate_count: 1, node_group: cpu_side}
      mapping: {actor_rollout: global_pool, critic: global_pool, reward: reward_pool}

A list is verl's ``process_on_nodes``; verl fuses a pool's roles into one worker per GPU, so a
list-form pool accepts every role mapped to it. The mapping form states ``max_colocate_count``
(and ``node_group``) to have more roles than that refused.

verl's own trainer config needs no such section: ``spec/verl`` builds the pools and mapping from
it as verl's driver does, and they are compiled here the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from solver_placement.cluster.cluster import Cluster
from solver_placement.cluster.schema import cluster_section
from solver_placement.config import ConfigSource, check_keys, load_config, positive_int, require_mapping, text
from solver_placement.errors import PlacementConfigError, shown
from solver_placement.spec.placement_spec import PlacementSpec
from solver_placement.spec.verl import is_verl_trainer_config, verl_cluster, verl_pools

#: The top-level config section that states verl-style pools, and its keys.
SECTION = "resource_pools"
SECTION_KEYS = ("resource_pool_spec", "mapping")
#: Keys of one pool written as a mapping (a list is ``process_on_nodes`` alone).
POOL_KEYS = ("process_on_nodes", "max_colocate_count", "node_group")


@dataclass(frozen=True)
class ResourcePool:
    """GPUs per node entry (verl's ``process_on_nodes``); roles on it share those GPUs.

    ``max_colocate_count`` is how many roles may share one GPU (verl gives each actor
    ``1/max_colocate_count`` of a GPU); ``node_group`` restricts where the pool may go.
    """

    process_on_nodes: Sequence[int]
    max_colocate_count: int = 1
    node_group: str | None = None


def pool_spec(
    cluster: Cluster, pools: Mapping[str, ResourcePool], mapping: Mapping[str, str], solver_options: Mapping[str, Any] | None = None
) -> PlacementSpec:
    """Compile pools and a role -> pool mapping into a spec (roles in mapping order).

    ``solver_options`` is a ``cluster.solver`` section (time limit, workers, ...)."""
    roles_of: dict[str, list[str]] = {name: [] for name in pools}
    for role, pool_name in mapping.items():
        if pool_name not in pools:
            raise PlacementConfigError(f"role {role!r} is mapped to unknown resource pool {pool_name!r}; pools: {', '.join(pools)}")
        roles_of[pool_name].append(role)
    used = {name: roles for name, roles in roles_of.items() if roles}
    placement: dict[str, Any] = {}
    for name, roles in used.items():
        pool = pools[name]
        entries = list(pool.process_on_nodes)
        if not entries or any(isinstance(n, bool) or not isinstance(n, int) or n <= 0 for n in entries):
            raise PlacementConfigError(f"resource pool {name!r}: process_on_nodes must be positive GPU counts, not {shown(entries)}")
        if len(set(entries)) != 1:
            raise PlacementConfigError(
                f"resource pool {name!r}: process_on_nodes {entries} mixes entry sizes; like verl, a pool's entries must be equal"
            )
        if len(roles) > pool.max_colocate_count:
            raise PlacementConfigError(
                f"resource pool {name!r}: {len(roles)} roles ({', '.join(roles)}) exceed max_colocate_count={pool.max_colocate_count}"
            )
        others = [other_roles[0] for other, other_roles in used.items() if other != name]
        rule: dict[str, Any] = {"processes": sum(entries), "tensor_parallel_size": entries[0], "exclusive_with": others}
        if pool.node_group is not None:
            rule["node_group"] = pool.node_group
        placement[",".join(roles)] = rule
    if not placement:
        raise PlacementConfigError("no role is mapped to any resource pool")
    return PlacementSpec.build(cluster, placement, solver_options)


def has_pools(config: Mapping[str, Any]) -> bool:
    """Does this (plain) job config state its placement as resource pools: a ``resource_pools:``
    section, or verl's own trainer config (whose pools verl's driver builds, ``spec/verl``)?"""
    return SECTION in config or is_verl_trainer_config(config)


def pool_spec_from_config(config: ConfigSource, cluster: Cluster | None = None) -> tuple[PlacementSpec, dict[str, str]]:
    """The spec of a config's ``resource_pools:`` section (or of verl's trainer config) on its
    ``cluster:`` (or on ``cluster``, as :meth:`PlacementSpec.from_config` takes one), and its
    role -> pool mapping."""
    plain = load_config(config)
    if is_verl_trainer_config(plain):
        if SECTION in plain:
            raise PlacementConfigError(f"the config is verl's trainer config and has a {SECTION}: section too; verl builds its pools from the trainer config alone")
        return _verl_spec(plain, cluster)
    section = require_mapping(plain.get(SECTION), SECTION)
    check_keys(section, SECTION_KEYS, SECTION, required=SECTION_KEYS)
    cluster_keys = cluster_section(plain)
    if "component_placement" in cluster_keys:
        raise PlacementConfigError(
            f"the config has both cluster.component_placement and {SECTION}:; state the placement one way (pools compile into component_placement)"
        )
    mapping = {str(role): text(pool, f"{SECTION}.mapping.{role}") for role, pool in require_mapping(section["mapping"], f"{SECTION}.mapping").items()}
    raw_pools = require_mapping(section["resource_pool_spec"], f"{SECTION}.resource_pool_spec")
    pools = {str(name): _pool(value, sum(pool == name for pool in mapping.values()), f"{SECTION}.resource_pool_spec.{name}") for name, value in raw_pools.items()}
    spec = pool_spec(cluster if cluster is not None else Cluster.from_config(cluster_keys), pools, mapping, cluster_keys.get("solver"))
    return spec, mapping


def _verl_spec(plain: dict[str, Any], cluster: Cluster | None) -> tuple[PlacementSpec, dict[str, str]]:
    """verl's pools from its trainer config, placed on its ``cluster:``, on ``cluster``, or on the
    nodes the config describes. verl fuses the trainer roles of a pool into one worker per GPU
    (and runs the others beside it within ``max_colocate_count``), so like the list form a pool
    takes every role started on it."""
    built = verl_pools(plain)
    cluster_keys = require_mapping(plain.get("cluster", {}), "cluster")
    if "component_placement" in cluster_keys:
        raise PlacementConfigError("the config is verl's trainer config and has cluster.component_placement; verl builds its pools from the trainer config alone")
    given = cluster if cluster is not None else Cluster.from_config(cluster_keys) if cluster_keys else None
    roles = [*built.workers.values()]
    pools = {name: ResourcePool(pool.process_on_nodes, max(roles.count(name), 1)) for name, pool in built.pools.items()}
    spec = pool_spec(verl_cluster(built, given), pools, built.workers, cluster_keys.get("solver"))
    return spec, dict(built.workers)


def _pool(value: Any, roles: int, where: str) -> ResourcePool:
    """One pool: a ``process_on_nodes`` list (takes all its ``roles``), or a mapping of :data:`POOL_KEYS`."""
    if isinstance(value, list):
        return ResourcePool(value, max_colocate_count=max(roles, 1))
    body = require_mapping(value, where)
    check_keys(body, POOL_KEYS, where, required=("process_on_nodes",))
    if not isinstance(body["process_on_nodes"], list):
        raise PlacementConfigError(f"{where}.process_on_nodes must be a list of GPU counts per node, e.g. [8, 8], not {shown(body['process_on_nodes'])}")
    group = body.get("node_group")
    return ResourcePool(
        body["process_on_nodes"],
        positive_int(body.get("max_colocate_count", 1), f"{where}.max_colocate_count"),
        None if group is None else text(group, f"{where}.node_group"),
    )


def fuse(role_classes: Mapping[str, type]) -> type:
    """One worker class holding an instance of every role's class (verl's WorkDict).

    The fused class takes ``{role: (args, kwargs)}``; each public method ``m`` of role ``r`` is
    exposed as ``r_m``, so one actor per GPU serves all roles of a pool.
    """
    if not role_classes:
        raise PlacementConfigError("fuse needs at least one role class")

    def __init__(self: Any, role_args: Mapping[str, tuple[Sequence[Any], Mapping[str, Any]]] | None = None) -> None:
        role_args = role_args or {}
        self._roles = {role: cls(*role_args.get(role, ((), {}))[0], **role_args.get(role, ((), {}))[1]) for role, cls in role_classes.items()}

    namespace: dict[str, Any] = {"__init__": __init__, "__doc__": f"Fused worker of roles {', '.join(role_classes)}."}
    for role, cls in role_classes.items():
        for name in dir(cls):
            if name.startswith("_") or not callable(getattr(cls, name)):
                continue
            namespace[f"{role}_{name}"] = _forward(role, name)
    return type("FusedWorker_" + "_".join(role_classes), (), namespace)


def _forward(role: str, name: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._roles[role], name)(*args, **kwargs)

    method.__name__ = f"{role}_{name}"
    return method
