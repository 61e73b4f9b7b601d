"""A group of Ray actors, one per process of a component, in rank order."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from solver_placement._dispatch.modes import REGISTER_ATTR, Dispatch, Execute, plan_call
from solver_placement._dispatch.parallel_layout import ParallelLayout
from solver_placement._ray_api import ray
from solver_placement._records import Placement


class WorkerGroup(AbstractContextManager):
    """The actors of one component, with verl-style execution and dispatch.

    Methods of the worker class marked with :func:`~solver_placement.register` are bound onto the
    group (``group.generate(batch)``); ``execute_all`` / ``execute_rank_zero`` call any method.
    ``release`` is called on :meth:`shutdown` (it frees the reservation the group owns, if any).
    """

    def __init__(
        self,
        component: str,
        actors: Sequence[Any],
        placements: Sequence[Placement],
        worker_cls: type,
        tp_size: int = 1,
        release: Callable[[], None] | None = None,
        method_prefix: str = "",
        layout: ParallelLayout | None = None,
    ) -> None:
        self.component = component
        self.actors = list(actors)
        self.placements = list(placements)
        self.tp_size = tp_size
        #: The TP/CP/PP/DP coordinates of every rank, which the dispatch modes route by.
        self.layout = layout if layout is not None else ParallelLayout(len(self.actors), tp_size)
        self._release = release
        self._prefix = method_prefix
        self._bind_registered(worker_cls)

    @property
    def world_size(self) -> int:
        return len(self.actors)

    def execute_all_async(self, method: str, *args: Any, **kwargs: Any) -> list[ray.ObjectRef]:
        """Call ``method`` on every worker with the same arguments; object refs in rank order."""
        return [getattr(actor, self._prefix + method).remote(*args, **kwargs) for actor in self.actors]

    def execute_all(self, method: str, *args: Any, **kwargs: Any) -> list[Any]:
        """Call ``method`` on every worker and wait; results in rank order."""
        return ray.get(self.execute_all_async(method, *args, **kwargs))

    def execute_rank_zero(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return ray.get(getattr(self.actors[0], self._prefix + method).remote(*args, **kwargs))

    def call(self, method: str, mode: Dispatch, *args: Any, blocking: bool = True, **kwargs: Any) -> Any:
        """Dispatch arguments by ``mode``, run, and collect (refs if not blocking)."""
        if mode == Dispatch.RANK_ZERO:
            ref = getattr(self.actors[0], self._prefix + method).remote(*args, **kwargs)
            return ray.get(ref) if blocking else ref
        plan = plan_call(mode, args, kwargs, self.layout)
        refs = [getattr(actor, self._prefix + method).remote(*a, **k) for actor, (a, k) in zip(self.actors, plan.per_worker)]
        return plan.collect(ray.get(refs)) if blocking else refs

    def _bind_registered(self, worker_cls: type) -> None:
        for name in dir(worker_cls):
            attribute = getattr(getattr(worker_cls, name, None), REGISTER_ATTR, None)
            if attribute is None or hasattr(self, name):
                continue
            mode = Dispatch.RANK_ZERO if Execute[attribute["execute_mode"]] == Execute.RANK_ZERO else Dispatch[attribute["dispatch_mode"]]
            setattr(self, name, _bound(self, name, mode, attribute["blocking"]))

    def shutdown(self) -> None:
        """Kill the actors and release what the group owns (idempotent)."""
        for actor in self.actors:
            ray.kill(actor, no_restart=True)
        self.actors = []
        if self._release is not None:
            release, self._release = self._release, None
            release()

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


def _bound(group: WorkerGroup, name: str, mode: Dispatch, blocking: bool) -> Callable[..., Any]:
    def method(*args: Any, **kwargs: Any) -> Any:
        return group.call(name, mode, *args, blocking=blocking, **kwargs)

    method.__name__ = name
    method.__doc__ = f"{name} on every worker of {group.component}, dispatched as {mode.name}."
    return method
