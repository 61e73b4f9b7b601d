"""The cluster verl's pools are placed on: the one the config describes, or a given one the pools
are checked against first, in verl's words.

verl has no cluster section: it asks Ray for ``trainer.nnodes`` nodes of
``trainer.n_gpus_per_node`` GPUs (plus the nodes of its separate pools) and fails at start-up
when they are not there. So without a ``cluster:`` the nodes are those the config describes.
With one (or a live cluster), each pool is checked against it before the solver runs: a pool
that no set of its nodes can hold, and a pool past the GPUs the pools before it leave, are
infeasible (the cluster cannot hold what the config asks: exit status 3, as for any placement
that does not exist), naming the pool, its count, the nodes and the verl key to change. Where
each pool then lands is Ray's choice in verl's order (``pool_order``), which says what it cannot
place; ``size_fix`` then looks for the nearest pool sizes that place, by solving.
"""

from __future__ import annotations

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import InfeasiblePlacementError, Statement, counted
from solver_placement._frontends.verl.pools import VerlPool, VerlPools

#: The rule a pool that does not fit the cluster breaks (``Statement.rule``).
RULE = "verl pools"


def verl_cluster(built: VerlPools, given: Cluster | None) -> Cluster:
    """``given`` after checking the pools fit it, else the nodes the config describes."""
    if given is None:
        return Cluster(num_nodes=len(built.nodes), num_gpus_per_node=list(built.nodes))
    gpus = [int(count) for count in given.gpus_per_node]
    shown = f"the cluster ({given.describe()})"
    used: dict[str, VerlPool] = {}
    taken = 0
    for name, pool in built.pools.items():
        _check_pool(built.label, name, pool, gpus, shown)
        if taken + pool.gpus > sum(gpus):
            raise _error(
                built.label,
                pool,
                f"{name} needs {pool.gpus} GPUs ({_sizes(pool)}) beyond the {taken} of {', '.join(used)}, but {shown} has {sum(gpus)} "
                f"in all: {name}'s nodes are not in the cluster. Add {_nodes_short(pool, sum(gpus) - taken)} to the cluster, "
                f"or {_smaller(pool, used, sum(gpus) - taken)}{_instead(pool)}",
            )
        used[name] = pool
        taken += pool.gpus
    return given


def _smaller(pool: VerlPool, before: dict[str, VerlPool], free: int) -> str:
    """Which sizes to lower: the pool's own only while the pools before it leave a placement group
    of it room (lowering it cannot help otherwise), else theirs, to make room."""
    if free >= pool.process_on_nodes[0]:
        return f"lower {pool.keys.nnodes}"
    if free > 0:
        return f"lower {pool.keys.gpus_per_node} to at most {free}, or {pool.keys.nnodes}"
    keys = " or ".join(dict.fromkeys(key for other in before.values() for key in (other.keys.nnodes, other.keys.gpus_per_node)))
    return f"make room: {', '.join(before)} {'takes' if len(before) == 1 else 'take'} every GPU, so lower {keys}"


def _check_pool(version: str, name: str, pool: VerlPool, gpus: list[int], shown: str) -> None:
    """A pool's placement groups, each on one node, must find nodes big enough."""
    size, groups = pool.process_on_nodes[0], len(pool.process_on_nodes)
    room = sum(count // size for count in gpus)
    if room >= groups:
        return
    if room:
        fix = f"lower {pool.keys.nnodes}, or give the cluster more nodes of {size} GPUs"
    else:
        fix = f"no node has {size} GPUs (the largest has {max(gpus, default=0)}): lower {pool.keys.gpus_per_node}"
    raise _error(
        version,
        pool,
        f"{name} needs {counted(groups, 'placement group')} of {size} GPUs, each on one node ({_sizes(pool)}), but {shown} has room "
        f"for {room}; {fix}{_instead(pool)}",
    )


def _sizes(pool: VerlPool) -> str:
    return f"{pool.keys.nnodes}, {pool.keys.gpus_per_node}: {len(pool.process_on_nodes)} x {pool.process_on_nodes[0]}"


def _nodes_short(pool: VerlPool, free: int) -> str:
    """How many nodes of the pool's size would cover what is missing."""
    size = pool.process_on_nodes[0]
    return f"{counted(-(-(pool.gpus - free) // size), 'node')} of {size} GPUs"


def _instead(pool: VerlPool) -> str:
    return f", or set {pool.keys.instead}" if pool.keys.instead else ""


def _error(version: str, pool: VerlPool, text: str) -> InfeasiblePlacementError:
    """No placement exists: the pool's size keys ask for more than the cluster holds."""
    statement = Statement(f"verl config (read as verl {version}): {text}", "", (pool.keys.nnodes, pool.keys.gpus_per_node), RULE)
    return InfeasiblePlacementError(f"no placement exists: {statement.text}", [statement])
