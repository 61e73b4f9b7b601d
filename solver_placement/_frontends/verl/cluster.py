"""The cluster verl's pools are placed on: the one the config describes, or a given one the pools
are checked against first, in verl's words.

verl has no cluster section: it asks Ray for ``trainer.nnodes`` nodes of
``trainer.n_gpus_per_node`` GPUs (plus the nodes of its separate pools) and fails at start-up
when they are not there. So without a ``cluster:`` the nodes are those the config describes.
With one (or a live cluster), each pool is checked against it before the solver runs: a pool
that no set of its nodes can hold, and a pool past the GPUs the pools before it leave, are
refused naming the pool, its count, the nodes and the verl key to change. Where each pool then
lands is Ray's choice in verl's order (``_specification/pool_order``), which says what it cannot place.
"""

from __future__ import annotations

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import PlacementConfigError
from solver_placement._frontends.verl.pools import VerlPool, VerlPools


def verl_cluster(built: VerlPools, given: Cluster | None) -> Cluster:
    """``given`` after checking the pools fit it, else the nodes the config describes."""
    if given is None:
        return Cluster(num_nodes=len(built.nodes), num_gpus_per_node=list(built.nodes))
    gpus = [int(count) for count in given.gpus_per_node]
    shown = f"the cluster ({given.describe()})"
    used: list[str] = []
    taken = 0
    for name, pool in built.pools.items():
        _check_pool(built.version, name, pool, gpus, shown)
        if taken + pool.gpus > sum(gpus):
            raise _error(
                built.version,
                f"{name} needs {pool.gpus} GPUs ({_sizes(pool)}) beyond the {taken} of {', '.join(used)}, but {shown} has {sum(gpus)} "
                f"in all: {name}'s nodes are not in the cluster. Add {_nodes_short(pool, sum(gpus) - taken)} to the cluster, "
                f"or lower {pool.keys.nnodes}{_instead(pool)}",
            )
        used.append(name)
        taken += pool.gpus
    return given


def _check_pool(version: str, name: str, pool: VerlPool, gpus: list[int], shown: str) -> None:
    """A pool's placement groups, each on one node, must find nodes big enough."""
    size, groups = pool.process_on_nodes[0], len(pool.process_on_nodes)
    room = sum(count // size for count in gpus)
    if room >= groups:
        return
    if room:
        fix = f"set {pool.keys.nnodes}={room}, or give the cluster more nodes of {size} GPUs"
    else:
        largest = max(gpus, default=0)
        fix = f"no node has {size} GPUs (the largest has {largest})" + (f": set {pool.keys.gpus_per_node}={largest}" if largest else "")
    raise _error(
        version,
        f"{name} needs {groups} placement group(s) of {size} GPUs, each on one node ({_sizes(pool)}), but {shown} has room "
        f"for {room}; {fix}{_instead(pool)}",
    )


def _sizes(pool: VerlPool) -> str:
    return f"{pool.keys.nnodes}, {pool.keys.gpus_per_node}: {len(pool.process_on_nodes)} x {pool.process_on_nodes[0]}"


def _nodes_short(pool: VerlPool, free: int) -> str:
    """How many nodes of the pool's size would cover what is missing."""
    size = pool.process_on_nodes[0]
    return f"{-(-(pool.gpus - free) // size)} node(s) of {size} GPUs"


def _instead(pool: VerlPool) -> str:
    return f", or set {pool.keys.instead}" if pool.keys.instead else ""


def _error(version: str, text: str) -> PlacementConfigError:
    return PlacementConfigError(f"verl config (read as verl {version}): {text}")
