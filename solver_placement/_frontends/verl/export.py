"""A solved layout in verl's words: the ``resource_pool_spec``, ``mapping`` and trainer overrides
that make verl's driver start the same workers on the same GPUs (``export --to verl``).

verl can state little about where things run: a pool is placement groups of equal GPU counts,
one per node, every role of a pool on all of its GPUs, one worker per GPU; its trainer config
sizes ``global_pool`` (the trainer's roles, fused) and, from 0.9, pools of their own for the
reward model and the teacher; and Ray, not the config, picks the nodes. So a layout is exported
only when it has that shape and when verl, creating the pools in its order on the solved cluster,
would land them where the solution has them, in the same rank order (``spec.pool_order``).
Anything else is refused with a :class:`VerlExportError` naming the component and the rule,
rather than exported as a config that would run differently.

Components on exactly the same GPUs become roles of one pool, which verl's trainer fuses into one
worker per GPU. Pools and roles keep verl's names (``rm`` for the reward model, ``teacher``,
``rollout_standalone_<rank>`` for a replica of ``separate_async``'s standalone rollout).

From 0.9 the reward model and the teacher serve in replicas, each a worker group on its slice of
the pool (``_frontends/verl/servers``): components named as verl names them
(``rollout_reward_colocate_<rank>``, ``rollout_teacher_colocate_<rank>_default``; a component
``rm`` or ``teacher`` is one replica) make a pool together, ``global_pool`` when they hold the
trainer's GPUs, else their own. They export when they are all one size, numbered from 0 in the
pool's order, and one teacher only (verl keys a lone teacher ``default``; several need their
keys, which a placement does not hold); the overrides state the size as tensor parallel.

Standalone replicas (verl 0.9's ``RolloutReplica.init_standalone``, ``LLMServerManager`` with
``start_rank`` in ``trainer_separate_async.py``, 0.9.1) each make a pool ``rollout_pool_<rank>``
of ``min(n_gpus_per_node, size)`` GPUs per node, ``max_colocate_count`` 2, after the trainer's
pools, ranks numbered on from the hybrid replicas that split ``global_pool`` (replicas of the
same size; from 0, with none, under 0.9.1's ``actor_rollout_ref.hybrid_engine=false``). So they
export when they are all one size (dividing ``global_pool`` when there are hybrid replicas) and
numbered as verl numbers them; a placement knows a replica's GPUs, not how its engine splits them, so the
overrides state the size as tensor parallel (any ``tensor x data x pipeline`` of that product
builds the same pools).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from solver_placement._cluster.cluster import Cluster
from solver_placement._cluster.ranks import format_ranks
from solver_placement._config import ConfigSource
from solver_placement._constants import ACCELERATOR
from solver_placement._errors import InfeasiblePlacementError, PlacementConfigError, VerlExportError, counted, shown
from solver_placement._frontends.verl import verl_pools
from solver_placement._frontends.verl.export_keys import config_of, trainer_overrides
from solver_placement._frontends.verl.export_names import (
    ALIASES,
    FUSED_RM,
    OWN_POOLS,
    RANK_BOUND,
    STANDALONE,
    check_roles,
    rank_of,
    refused,
    roles_of,
    server_of,
    trainer_roles,
)
from solver_placement._frontends.verl.pool_order import PoolRequest, land_pools
from solver_placement._frontends.verl.replicas import STANDALONE_COLOCATE
from solver_placement._frontends.verl.resource_pools import FUSED, ResourcePool, in_slice_order, slice_gpus
from solver_placement._frontends.verl.v0_9 import STANDALONE_ONLY, TRAINER_COLOCATE
from solver_placement._frontends.verl.versions import RELEASES, VERL_TRAINER
from solver_placement._job import Job, load_job
from solver_placement._solver.solution import Solution
from solver_placement._solver.solve import solve

#: The verl versions a layout can be exported to (those ``_frontends/verl`` reads back).
VERSIONS = RELEASES
#: The first release with each pool of its own.
OWN_POOL_SINCE = {"reward_pool": "0.6.1", "teacher_pool": "0.8.0"}
#: The releases with ``separate_async``'s standalone rollout replicas.
STANDALONE_RELEASES = ("0.9.0", "0.9.1", "main")
#: The rules a refusal names (``VerlExportError.rule``).
RULES = ("one worker per GPU", "pools share no GPU", "equal node entries", "verl's pools", "Ray's node order")
#: verl's name of a standalone rollout replica's pool (``rollout_pool_<rank>``).
STANDALONE_POOL = "rollout_pool_"
#: Nodes a message lists before it says how many more there are.
SHOWN_NODES = 4


@dataclass(frozen=True)
class VerlExport:
    """The layout for verl ``version``: its pools in the order verl creates them, the role ->
    pool mapping verl's driver builds from the overrides (``idle``: the roles of it verl never
    starts, such as 0.4.1's critic without GAE), the Hydra overrides of verl's trainer config
    that build those pools, and the roles that start, by pool (``started``)."""

    version: str
    pools: Mapping[str, ResourcePool]
    mapping: Mapping[str, str]
    overrides: tuple[str, ...]
    idle: frozenset[str]
    started: Mapping[str, str]

    @property
    def resource_pool_spec(self) -> dict[str, list[int]]:
        """The pools as verl's ``ResourcePoolManager`` takes them (``{name: process_on_nodes}``),
        with those standalone rollout replicas make for themselves (``rollout_pool_<rank>``)."""
        return {name: list(pool.process_on_nodes) for name, pool in self.pools.items()}

    def resource_pools(self) -> dict[str, Any]:
        """The pools as a ``resource_pools:`` section, which places the same layout when read back."""
        spec: dict[str, Any] = {}
        served = {roles_of(replica)[0] for pool in self.pools.values() for replica in pool.slices}  # rm, teacher: their replicas are the groups
        mapping = {role: pool for role, pool in self.started.items() if role not in served}
        for name, pool in self.pools.items():
            body: dict[str, Any] = {"process_on_nodes": list(pool.process_on_nodes), "max_colocate_count": pool.max_colocate_count}
            if pool.own_worker_group:
                body["own_worker_group"] = list(pool.own_worker_group)
            if pool.slices:
                body["slices"] = {replica: list(bounds) for replica, bounds in pool.slices.items()}
                mapping.update(dict.fromkeys(pool.slices, name))
            spec[name] = body
        return {"resource_pool_spec": spec, "mapping": mapping}


@dataclass(frozen=True)
class _Pool:
    """Components on one set of GPUs: their names and those GPUs by node."""

    components: tuple[str, ...]
    gpus: Mapping[int, tuple[int, ...]]
    #: How many of the GPUs each component holds (a model server replica: its slice).
    sizes: Mapping[str, int]
    #: Each component's first GPU (node, GPU): the order of several teachers' replicas in their pool.
    first: Mapping[str, tuple[int, int]]

    @property
    def roles(self) -> list[str]:
        """verl's roles: a replica's is its model's (``rm``, ``teacher``)."""
        return [role for name in self.components for role in roles_of(name)]


def export_verl(
    source: Solution | ConfigSource | Job, *, version: str | None = None, cluster: Cluster | None = None, candidates: Sequence[str] = ()
) -> VerlExport:
    """``source`` (a Solution, or a config to solve, on ``cluster`` if given) as verl ``version``
    states it. Without a version: the releases verl's trainer config was read as (or
    ``candidates``, those a Solution's config was read as), when they all export it alike (the
    newest of them is named), else main for a config that is not verl's."""
    if isinstance(source, Solution):
        solution = source
    else:
        job = load_job(source, cluster)
        solution = solve(job)
        candidates = verl_pools(job.config).versions if job.frontend.name == VERL_TRAINER else ()
    for chosen in (version, *candidates):
        if chosen is not None and chosen not in VERSIONS:
            raise PlacementConfigError(f"verl version {shown(chosen)} is not one export writes; write one of {', '.join(VERSIONS)}")
    if version is not None or not candidates:
        return _export_as(solution, version or "main")
    outcomes = [_outcome(solution, candidate) for candidate in candidates]
    if all(_alike(outcome, outcomes[0]) for outcome in outcomes):
        if isinstance(outcomes[-1], VerlExportError):
            raise outcomes[-1]
        return outcomes[-1]
    differ = ", ".join(candidates)
    raise PlacementConfigError(
        f"the config fits verl {differ}, whose exports of this layout differ (their keys for the same pools are not the same); "
        f"state which verl it is for: verl_version: one of {differ} in the config, or --verl-version"
    )


def _export_as(solution: Solution, version: str) -> VerlExport:
    """The export for one release, checked to land as solved."""
    check_roles(solution, version)
    named = _verl_pools(_pools_of(solution), version)
    exported = _export(named, version)
    _check_verl_lands_them(solution, named, exported.pools)
    return exported


def _outcome(solution: Solution, version: str) -> VerlExport | VerlExportError:
    try:
        return _export_as(solution, version)
    except VerlExportError as error:
        return error


def _alike(one: VerlExport | VerlExportError, other: VerlExport | VerlExportError) -> bool:
    """The same pools, mapping and overrides, or a refusal of the same component by the same rule."""
    if isinstance(one, VerlExportError) or isinstance(other, VerlExportError):
        return isinstance(one, VerlExportError) and isinstance(other, VerlExportError) and (one.component, one.rule) == (other.component, other.rule)
    return (one.pools, dict(one.mapping), one.overrides, one.idle) == (other.pools, dict(other.mapping), other.overrides, other.idle)


def _pools_of(solution: Solution) -> list[_Pool]:
    """The components grouped by the GPUs they hold (in component order), refusing what is not
    one worker per GPU or shares part of another's GPUs."""
    owner: dict[tuple[int, int], str] = {}
    pools: dict[frozenset[tuple[int, int]], list[str]] = {}
    held_by = {name: _held(solution, name) for name in solution.components}
    servers: dict[str, frozenset[tuple[int, int]]] = {}  # the GPUs of each model's replicas together
    for name, gpus in held_by.items():
        server = server_of(name)
        if server is not None:
            if servers.get(server[0], frozenset()) & gpus:
                other = next(other for other in held_by if other != name and roles_of(other) == [server[0]] and held_by[other] & gpus)
                raise refused(name, "pools share no GPU", f"shares GPUs with {other!r}; verl starts each replica of a model on GPUs of its own")
            servers[server[0]] = servers.get(server[0], frozenset()) | gpus
    for name in solution.components:
        server = server_of(name)
        gpus = servers[server[0]] if server is not None else held_by[name]
        clash = sorted({owner[gpu] for gpu in gpus if gpu in owner and gpus not in pools})
        if clash:
            raise refused(name, "pools share no GPU", f"shares some GPUs of {clash[0]!r} but not all; the roles of a verl pool hold all of its GPUs and pools share none")
        owner.update(dict.fromkeys(gpus, name))
        pools.setdefault(gpus, []).append(name)
    return [
        _Pool(tuple(names), _by_node(names[0], gpus), {name: len(held_by[name]) for name in names}, {name: min(held_by[name]) for name in names})
        for gpus, names in pools.items()
    ]


def _held(solution: Solution, name: str) -> frozenset[tuple[int, int]]:
    """The GPUs of a component, refused unless each process holds one of its own."""
    held = [_gpu(name, p) for p in solution.placements(name)]
    if len(set(held)) != len(held):
        raise refused(name, "one worker per GPU", "runs several processes on one GPU; verl starts one worker per GPU of a pool")
    return frozenset(held)


def _gpu(name: str, record: Any) -> tuple[int, int]:
    """The one GPU a process holds, as (node, GPU)."""
    if record.hardware_type != ACCELERATOR or len(record.local_hardware_ranks) != 1:
        held = f"{len(record.local_hardware_ranks)} GPUs" if record.hardware_type == ACCELERATOR else f"no GPU (it runs on a {record.hardware_type})"
        raise refused(name, "one worker per GPU", f"process {record.rank} holds {held}; verl starts one worker per GPU of a pool", ": ")
    return record.cluster_node_rank, record.local_hardware_ranks[0]


def _by_node(name: str, gpus: frozenset[tuple[int, int]]) -> dict[int, tuple[int, ...]]:
    """The GPUs per node, refused when nodes hold different counts (a pool's entries are equal)."""
    by_node: dict[int, list[int]] = {}
    for node, gpu in sorted(gpus):
        by_node.setdefault(node, []).append(gpu)
    counts = sorted({len(held) for held in by_node.values()})
    if len(counts) > 1:
        sizes = ", ".join(f"node {node}: {len(held)}" for node, held in list(by_node.items())[:SHOWN_NODES])
        raise refused(name, "equal node entries", f"holds {counts[0]} to {counts[-1]} GPUs per node ({sizes}); a verl pool's process_on_nodes entries are equal")
    return {node: tuple(held) for node, held in by_node.items()}


def _verl_pools(pools: Sequence[_Pool], version: str) -> dict[str, _Pool]:
    """The pools by verl's names, in the order verl creates them: global_pool, reward_pool,
    teacher_pool, then the standalone rollout replicas' by rank."""
    named: dict[str, _Pool] = {}
    for pool in pools:
        standalone = [role for role in pool.roles if role.startswith(STANDALONE)]
        if standalone:
            named[_standalone_pool(pool, standalone[0], version)] = pool
            continue
        own = OWN_POOLS.get(pool.roles[0]) if len(set(pool.roles)) == 1 else None
        if own is not None and RELEASES.index(version) < RELEASES.index(OWN_POOL_SINCE[own]):
            why = "has one pool, global_pool, for every role" if version in ("0.4.1", "0.5.0") else f"has no {own}"
            raise refused(pool.components[0], "verl's pools", f"holds GPUs of its own; verl {version} {why} (export to {OWN_POOL_SINCE[own]} or later)")
        name = own or "global_pool"
        if name in named:
            raise VerlExportError(pool.components[0], "verl's pools", _second_pool(name, named[name], pool))
        named[name] = pool
    if "global_pool" not in named:
        raise refused(pools[0].components[0], "verl's pools", "is a pool of its own and no component holds the trainer's GPUs; verl's trainer always starts its actor on global_pool")
    if "teacher" in named["global_pool"].roles:
        raise refused(_holding(named["global_pool"], "teacher"), "verl's pools", "shares global_pool's GPUs; verl runs the teacher only on teacher_pool, GPUs of its own")
    replicas = sorted((name for name in named if name.startswith(STANDALONE_POOL)), key=lambda name: int(name[len(STANDALONE_POOL) :]))
    return {name: named[name] for name in ("global_pool", *OWN_POOLS.values(), *replicas) if name in named}


def _standalone_pool(pool: _Pool, role: str, version: str) -> str:
    """``rollout_pool_<rank>``: the pool of a standalone replica, alone on its GPUs."""
    component = _holding(pool, role)
    rank = rank_of(role[len(STANDALONE) :])
    if rank is None:
        raise refused(component, "verl's pools", f"serves role {shown(role)}, not a standalone replica verl names (rollout_standalone_<rank>, rank 0, 1, ...){RANK_BOUND}")
    if version not in STANDALONE_RELEASES:
        raise refused(component, "verl's pools", f"is a standalone rollout replica; verl {version} has none (export to {', '.join(STANDALONE_RELEASES)})")
    if pool.roles != [role]:
        others = ", ".join(repr(name) for name in pool.components if name != component) or repr(FUSED.join(pool.roles))
        raise refused(component, "verl's pools", f"shares its GPUs with {others}; verl starts each standalone rollout replica on a pool of its own")
    return f"{STANDALONE_POOL}{rank}"


def _holding(pool: _Pool, role: str) -> str:
    """The component of ``pool`` whose workers serve ``role``."""
    return next(name for name in pool.components if role in roles_of(name))


def _second_pool(name: str, first: _Pool, second: _Pool) -> str:
    component = second.components[0]
    if name != "global_pool":
        return f"component {component!r} is a second {name}; verl starts one"
    return (
        f"components {first.components[0]!r} and {component!r} hold GPUs of their own; verl's trainer config has one pool for the "
        f"trainer's roles (global_pool) and pools of their own only for the reward model (role rm) and the teacher (teacher): "
        f"name the component so, or place it on {first.components[0]!r}'s GPUs"
    )


def _export(named: Mapping[str, _Pool], version: str) -> VerlExport:
    """The pools with the version's worker groups and ``max_colocate_count``, and the overrides."""
    colocate = 1 if version in FUSED_RM else TRAINER_COLOCATE
    pools: dict[str, ResourcePool] = {}
    mapping: dict[str, str] = {}
    replicas_of: dict[tuple[str, str], list[int]] = {}  # each model's replicas' GPUs, (role, teacher key) -> counts, in the pool's order
    hybrid = not (f"{STANDALONE_POOL}0" in named and version in STANDALONE_ONLY)
    for name, pool in named.items():
        entries = [len(held) for held in pool.gpus.values()]
        slices = _replicas(pool, entries[0], version)
        pools[name] = ResourcePool(entries, STANDALONE_COLOCATE if name.startswith(STANDALONE_POOL) else colocate, None, (), slices)
        mapping.update(dict.fromkeys(_pool_roles(name, pool, version, hybrid), name))
        for replica, (_, count) in slices.items():
            role, key, _ = server_of(replica) or ("", "", 0)
            replicas_of.setdefault((role, key), []).append(count)
    overrides = trainer_overrides(pools, mapping, replicas_of, version) + _rollout_overrides(pools, named, mapping, version)
    built = verl_pools(config_of(overrides, version))
    return VerlExport(version, pools, built.mapping, overrides, built.idle, mapping)


def _pool_roles(name: str, pool: _Pool, version: str, hybrid: bool) -> list[str]:
    """verl's roles on a pool: on global_pool the trainer's, as verl names them
    (``export_names.trainer_roles``), then the model servers'; elsewhere the pool's own."""
    if name != "global_pool":
        return pool.roles
    servers = [role for component in pool.components if server_of(component) is not None for role in roles_of(component)]
    return list(trainer_roles(list(pool.components), version, hybrid)) + servers


def _replicas(pool: _Pool, gpus_per_node: int, version: str) -> dict[str, tuple[int, int]]:
    """The pool's model server replicas as verl slices the pool for them, (first GPU, count) by
    name, after checking verl would number and size them so (none up to 0.6.1, which fuse ``rm``)."""
    servers = {name: server for name in pool.components if (server := server_of(name)) is not None}
    if version in FUSED_RM:
        replica = next((name for name in servers if roles_of(name) != [name] and name not in ALIASES), None)
        if replica is not None:
            raise refused(replica, "verl's pools", f"is a model server replica; verl {version} fuses its reward model into the trainer's workers (export to 0.7.1 or later)")
        return {}
    models: dict[tuple[str, str], list[str]] = {}  # each model's replicas (several teachers: one model per key)
    for name, (role, key, _) in servers.items():
        models.setdefault((role, key), []).append(name)
    slices: dict[str, tuple[int, int]] = {}
    first = 0
    for names in sorted(models.values(), key=lambda names: min(pool.first[name] for name in names)):  # verl cuts the teachers in entry order
        ranked = sorted(names, key=lambda name: servers[name][2])
        for rank, name in enumerate(ranked):
            size = pool.sizes[name]
            if size != pool.sizes[ranked[0]]:
                raise refused(name, "verl's pools", f"holds {size} GPUs and {ranked[0]!r} {pool.sizes[ranked[0]]}; verl's replicas of a model are all one size")
            if servers[name][2] != rank:
                raise refused(name, "verl's pools", f"is replica {servers[name][2]} where verl numbers the replicas of a model 0 to {len(ranked) - 1}")
            per_node = min(gpus_per_node, size)
            spans = (first + size - 1) // gpus_per_node - first // gpus_per_node + 1
            if size % per_node or (servers[name][0] == "teacher" and spans != -(-size // gpus_per_node)):
                why = f"is a replica of {size} GPUs in a pool of nodes of {gpus_per_node}, which verl cannot cut so (a replica wider than a node fills whole nodes, a teacher's spans no more nodes than it needs)"
                raise refused(name, "verl's pools", why)
            slices[name] = (first, size)
            first += size
    return slices


def _rollout_overrides(pools: Mapping[str, ResourcePool], named: Mapping[str, _Pool], mapping: Mapping[str, str], version: str) -> tuple[str, ...]:
    """``separate_async``'s keys when there are standalone replicas: their nodes, their size as
    tensor parallel, and ``hybrid_engine=false`` when they are numbered from 0 (no hybrid
    replicas, from 0.9.1), after checking verl would build and number them so."""
    replicas = [name for name in pools if name.startswith(STANDALONE_POOL)]
    if not replicas:
        return ()
    entries = list(pools[replicas[0]].process_on_nodes)
    size, trainer = sum(entries), sum(pools["global_pool"].process_on_nodes)
    first = named[replicas[0]].components[0]
    for name in replicas:
        if list(pools[name].process_on_nodes) != entries:
            why = f"holds {list(pools[name].process_on_nodes)} GPUs per node and {first!r} {entries}; verl's standalone replicas are all one size"
            raise refused(named[name].components[0], "verl's pools", why)
    hybrid = not (replicas[0] == f"{STANDALONE_POOL}0" and version in STANDALONE_ONLY)
    if hybrid and trainer % size:
        why = f"is a replica of {size} GPUs, which do not divide global_pool's {trainer}; verl sizes the hybrid replicas on global_pool alike and asserts they fill it"
        raise refused(first, "verl's pools", why)
    start = trainer // size if hybrid else 0
    expected = [f"{STANDALONE_POOL}{rank}" for rank in range(start, start + len(replicas))]
    if replicas != expected:
        wrong = next(name for name, want in zip(replicas, expected) if name != want)
        why = f"is not numbered as verl numbers standalone replicas: on from global_pool's {counted(start, 'hybrid replica')}, {STANDALONE}{start} to {STANDALONE}{start + len(replicas) - 1}"
        raise refused(named[wrong].components[0], "verl's pools", why)
    if mapping.get("rm") == "global_pool":
        raise refused(_holding(named["global_pool"], "rm"), "verl's pools", "shares global_pool's GPUs, but verl's separate_async asserts the reward model runs on a pool of its own")
    nnodes, gpus_per_node = _rollout_nodes([named[name] for name in replicas], entries)
    rollout = "actor_rollout_ref.rollout"
    return (
        "trainer.v1.trainer_mode=separate_async", *(() if hybrid else ("actor_rollout_ref.hybrid_engine=false",)), f"{rollout}.nnodes={nnodes}",
        f"{rollout}.n_gpus_per_node={gpus_per_node}", f"{rollout}.tensor_model_parallel_size={size}", f"{rollout}.data_parallel_size=1",
        f"{rollout}.pipeline_model_parallel_size=1",
    )  # fmt: skip


def _rollout_nodes(replicas: Sequence[_Pool], entries: Sequence[int]) -> tuple[int, int]:
    """``rollout.nnodes`` and ``rollout.n_gpus_per_node``: only their product and, for a replica
    wider than a node, the GPUs per node decide verl's pools; they also describe the nodes (when
    no cluster is given), so they are the solution's when its replicas fill nodes alike."""
    held: dict[int, int] = {}
    for replica in replicas:
        for node, gpus in replica.gpus.items():
            held[node] = held.get(node, 0) + len(gpus)
    counts = set(held.values())
    if len(entries) == 1 and len(counts) == 1 and counts.pop() % entries[0] == 0:
        return len(held), next(iter(held.values()))
    return len(entries) * len(replicas), entries[0]


def _check_verl_lands_them(solution: Solution, named: Mapping[str, _Pool], pools: Mapping[str, ResourcePool]) -> None:
    """Refuse a layout verl would not start as solved: Ray picks the nodes (``pool_order``) and
    verl the rank order (node, then GPU) and each replica's slice, and the config can choose none."""
    cluster = solution.cluster
    nodes = tuple(range(cluster.num_nodes))
    requests = [
        PoolRequest(name, tuple(len(held) for held in pool.gpus.values()), nodes, pool.components[0], pools[name].max_colocate_count)
        for name, pool in named.items()
    ]
    try:
        landed = land_pools(cluster.gpus_per_node.tolist(), requests)
    except InfeasiblePlacementError as error:
        pending = error.statements[0].component
        raise VerlExportError(pending, "Ray's node order", f"component {pending!r}: verl could not start this layout: {error.conflicts[0]}") from None
    for name, pool in named.items():
        slices = pools[name].slices
        whole = any(component not in slices for component in pool.components)
        for component in pool.components:
            groups = slice_gpus(in_slice_order(landed[name], whole), *slices[component]) if component in slices else landed[name]
            verl = [(group.node, gpu) for group in groups for gpu in group.gpus]
            solved = [_gpu(component, p) for p in solution.placements(component)]
            if solved != verl:
                same = "the same GPUs in another rank order (verl ranks by node, then GPU)" if sorted(solved) == sorted(verl) else _where(solved)
                raise VerlExportError(
                    component,
                    "Ray's node order",
                    f"component {component!r}: verl would start {name}'s workers on {_where(verl)} (Ray gives each placement group "
                    f"the freest node, pools in the order verl creates them), but the solution has {same}; verl's config cannot choose nodes",
                )


def _where(gpus: Sequence[tuple[int, int]]) -> str:
    """``node 0 GPUs 0-7, node 2 GPUs 0-3``, the first few nodes only."""
    by_node: dict[int, list[int]] = {}
    for node, gpu in gpus:
        by_node.setdefault(node, []).append(gpu)
    parts = [f"node {node} GPUs {format_ranks(held)}" for node, held in list(by_node.items())[:SHOWN_NODES]]
    more = f" and {counted(len(by_node) - SHOWN_NODES, 'more node')}" if len(by_node) > SHOWN_NODES else ""
    return ", ".join(parts) + more
