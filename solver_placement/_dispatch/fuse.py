"""Fused workers: one actor per GPU serving every role of a verl resource pool.

verl starts one worker per GPU for all roles mapped to a pool (its ``WorkDict``), so the roles
share a process and call each other without a network hop. :func:`fuse` builds that worker
class from the roles' own classes; a reservation launches it like any other worker class, and
:func:`verl_worker_env` gives it the variables verl's role classes read when they are built.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from solver_placement._errors import DispatchError


def fuse(role_classes: Mapping[str, type]) -> type:
    """One worker class holding an instance of every role's class (verl's WorkDict).

    The fused class takes ``{role: (args, kwargs)}``; each public method ``m`` of role ``r`` is
    exposed as ``r_m``, so one actor per GPU serves all roles of a pool. Launched by a
    reservation, it adds verl's worker-group variables (:func:`verl_worker_env`) before the
    roles are built, since verl's role classes read them in their constructors.
    """
    if not role_classes:
        raise DispatchError("fuse needs at least one role class")

    def __init__(self: Any, role_args: Mapping[str, tuple[Sequence[Any], Mapping[str, Any]]] | None = None) -> None:
        for name, value in verl_worker_env(os.environ).items():
            os.environ.setdefault(name, value)
        role_args = role_args or {}
        self._roles = {role: cls(*role_args.get(role, ((), {}))[0], **role_args.get(role, ((), {}))[1]) for role, cls in role_classes.items()}

    namespace: dict[str, Any] = {"__init__": __init__, "__doc__": f"Fused worker of roles {', '.join(role_classes)}."}
    for role, cls in role_classes.items():
        for name in dir(cls):
            if name.startswith("_") or not callable(getattr(cls, name)):
                continue
            namespace[f"{role}_{name}"] = _forward(role, name)
    return type("FusedWorker_" + "_".join(role_classes), (), namespace)


def verl_worker_env(planned: Mapping[str, str]) -> dict[str, str]:
    """The variables verl's ``RayWorkerGroup`` gives a worker beyond the plan's ``RANK``,
    ``WORLD_SIZE`` and ``MASTER_*``, from the plan's own (none when the plan's are absent).

    ``RAY_LOCAL_WORLD_SIZE`` is the worker's placement group size (verl 0.9's vLLM rollout
    reads it): the pool's workers on the node. ``RAY_LOCAL_RANK`` is verl's bundle index, which
    verl 0.4.1's ``Worker`` passes to ``set_device`` when Ray leaves the device variable alone,
    as the plan does; a planned worker sees only its own GPU, so the index that names it is the
    plan's ``LOCAL_RANK`` (0), not the bundle's position. ``WG_PREFIX`` is left out on purpose:
    with it, 0.4.1's ``Worker`` has rank 0 create a register center the other ranks look up as
    they start, which only verl's driver orders (it waits for rank 0 first); a reservation starts
    every rank at once, and the plan already gives every rank ``MASTER_ADDR``/``MASTER_PORT``."""
    if "LOCAL_RANK" not in planned or "NODE_LOCAL_WORLD_SIZE" not in planned:
        return {}
    return {"WG_BACKEND": "ray", "RAY_LOCAL_RANK": planned["LOCAL_RANK"], "RAY_LOCAL_WORLD_SIZE": planned["NODE_LOCAL_WORLD_SIZE"]}


def _forward(role: str, name: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._roles[role], name)(*args, **kwargs)

    method.__name__ = f"{role}_{name}"
    return method
