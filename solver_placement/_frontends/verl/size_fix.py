"""A verl config whose pools find no placement, said in its own keys with the nearest sizes that
place: ``trainer.n_gpus_per_node=8 ...; with distillation.n_gpus_per_node=4 it places (checked
by solving with it)``.

A pool that does not fit fails in two places: the cluster check (``cluster``) and Ray's order of
placement groups (``pool_order``), whose messages name pools and placement groups. The keys the
user wrote are the pools' size keys (``trainer.nnodes``, ``reward.reward_model.n_gpus_per_node``,
...), so each pool's two keys are tried, pool by pool in verl's order, nearest values first
(``_solver/nearest_sizes``): the config is read again with them, checked, landed and solved, and
the first sizes that place are the fix. On the nodes the config describes the sizes only shrink
(a larger node would be hardware the user does not have); on a given cluster they range up to its
nodes. Standalone rollout pools are sized by the replica, not by their keys alone, and are left
out. When no size places, the error stands as it was. A parallel size that does not divide its
pool (``keys.VerlSizeError``) is a config error, refused before any pool is placed; it gets the
nearest value of its key that places the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from solver_placement._errors import InfeasiblePlacementError, PlacementError, Statement
from solver_placement._frontends.verl.keys import VerlSizeError
from solver_placement._frontends.verl.pools import VerlPools
from solver_placement._job import Job
from solver_placement._solver.nearest_sizes import MAX_CHOICES, Sizes, StatedSize, fix_text, nearest_fit
from solver_placement._solver.solve import solve
from solver_placement._specification.placement_spec import PlacementSpec

#: The rule a fix in the user's keys is stated under (``Statement.rule``).
RULE = "verl pools"


def in_verl_keys(error: InfeasiblePlacementError, job: Job, built: VerlPools, place: Callable[[Job], PlacementSpec]) -> InfeasiblePlacementError:
    """``error`` with the nearest pool sizes that place, in verl's keys; unchanged when none does."""
    nodes = [int(count) for count in job.cluster.gpus_per_node] if job.cluster is not None else None
    seen: set[tuple[str, str]] = set()
    named = {key for statement in error.statements for key in statement.keys}
    for name, pool in sorted(built.pools.items(), key=lambda item: item[1].keys.nnodes not in named):  # the pool the error names first
        keys = (pool.keys.nnodes, pool.keys.gpus_per_node)
        if name.startswith("rollout_pool_") or keys in seen:
            continue
        seen.add(keys)
        count, size = len(pool.process_on_nodes), pool.process_on_nodes[0]
        stated = [
            StatedSize(keys[0], count, name, _choices(count, len(nodes) if nodes else count)),
            StatedSize(keys[1], size, name, _choices(size, max(nodes) if nodes else size)),
        ]
        fix = nearest_fit(stated, lambda sizes: _places(job, sizes, place))
        if fix is not None:
            return _said(error, stated, fix)
    return error


def size_in_verl_keys(error: VerlSizeError, job: Job, place: Callable[[Job], PlacementSpec]) -> VerlSizeError:
    """``error`` (a size verl would refuse) with the nearest value of its key that places, checked
    by solving; unchanged when none of the first tries does."""
    fix = nearest_fit(error.sizes, lambda sizes: _places(job, sizes, place))
    if fix is None:
        return error
    return VerlSizeError(f"{error}; {fix_text(error.sizes, fix)[1]}", error.sizes)


def _choices(value: int, most: int) -> tuple[int, ...]:
    """The values a size may take: 1 up to ``most`` (at least the stated one), the nearest kept."""
    top = max(value, most)
    return tuple(range(max(1, value - MAX_CHOICES), min(top, value + MAX_CHOICES) + 1))


def _places(job: Job, sizes: Sizes, place: Callable[[Job], PlacementSpec]) -> bool:
    """Whether the config with ``sizes`` is read, checked, landed and solved."""
    config: Mapping[str, Any] = job.config
    for key, value in sizes.items():
        config = _with(config, key.split("."), value)
    try:
        solve(place(replace(job, config=dict(config))))
    except PlacementError:
        return False
    return True


def _with(node: Mapping[str, Any], path: list[str], value: int) -> dict[str, Any]:
    """A copy of ``node`` with ``value`` at ``path`` (sections on the way copied, not changed)."""
    head, *rest = path
    child = node.get(head)
    return {**node, head: _with(child if isinstance(child, Mapping) else {}, rest, value) if rest else value}


def _said(error: InfeasiblePlacementError, stated: list[StatedSize], fix: Sizes) -> InfeasiblePlacementError:
    changed, hint = fix_text(stated, fix)
    asked = " and ".join(f"{size.key}={size.value}" for size in changed)
    reason = error.conflicts[0] if error.conflicts else str(error)
    text = f"{reason}; {asked}: {hint}"
    return InfeasiblePlacementError(f"no placement exists: {text}", [Statement(text, "", tuple(size.key for size in changed), RULE)])
