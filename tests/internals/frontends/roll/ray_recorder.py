"""A stand-in for Ray that records what ROLL asks of it and answers as a Ray cluster would.

Nodes are given as GPU and CPU counts. ``placement_group`` lands its bundle as Ray's GCS
scheduler does: on the feasible node scoring highest by the ``LeastResourceScorer``, the sum over
the asked resources of ``(free - asked) / free``, ties to the lowest node, the GPUs the node's
lowest free ones; a group no node can hold raises :class:`Pending` when ROLL waits for it (Ray
would wait forever). Remote functions run at once, with ``CUDA_VISIBLE_DEVICES`` set to their
placement group's GPUs as Ray sets it; actor classes record their options.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any


class RayModule(types.ModuleType):
    """A fake Ray module: what the recorder defines, and an inert stand-in for any other name
    (type hints such as ``ray.ObjectRef``, decorators ROLL's unrelated modules use at import)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        from roll_stubs import Anything

        return Anything()


class Pending(Exception):
    """A placement group Ray would leave pending: ``pg.ready()`` never returns."""


class PlacementGroup:
    def __init__(self, bundles: list[dict[str, float]], node: int | None, gpus: list[int]) -> None:
        self.bundle_specs, self.node, self.gpus = bundles, node, gpus

    def ready(self) -> PlacementGroup:
        if self.node is None:
            raise Pending(f"placement group {self.bundle_specs} fits no node")
        return self


class State:
    def __init__(self, gpus: list[int], cpus: list[int]) -> None:
        self.gpus, self.cpus = gpus, cpus
        self.free = [{"GPU": float(g), "CPU": float(c)} for g, c in zip(gpus, cpus, strict=True)]
        self.free_ids = [list(range(g)) for g in gpus]
        self.groups: list[PlacementGroup] = []

    def land(self, bundle: dict[str, float]) -> PlacementGroup:
        def score(node: int) -> float | None:
            total = 0.0
            for resource, asked in bundle.items():
                free = self.free[node].get(resource, 0.0)
                if asked > free:
                    return None
                total += (free - asked) / free if free else 0.0
            return total

        scored = [(value, -node, node) for node in range(len(self.gpus)) if (value := score(node)) is not None]
        if not scored:
            self.groups.append(PlacementGroup([bundle], None, []))
            return self.groups[-1]
        node = max(scored)[2]
        for resource, asked in bundle.items():
            self.free[node][resource] -= asked
        count = int(bundle.get("GPU", 0))
        taken, self.free_ids[node] = self.free_ids[node][:count], self.free_ids[node][count:]
        self.groups.append(PlacementGroup([bundle], node, taken))
        return self.groups[-1]


class RemoteFunction:
    def __init__(self, function: Any, options: dict[str, Any] | None = None) -> None:
        self.function, self.given = function, options or {}

    def options(self, **options: Any) -> RemoteFunction:
        return RemoteFunction(self.function, options)

    def remote(self, *args: Any, **kwargs: Any) -> Any:
        group = self.given.get("placement_group")
        saved = dict(os.environ)
        os.environ.pop("NODE_RANK", None)
        if group is not None and self.given.get("num_gpus"):
            os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, group.gpus[: int(self.given["num_gpus"])]))
        try:
            return self.function(*args, **kwargs)
        finally:
            os.environ.clear()
            os.environ.update(saved)


class Actor:
    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        self.get_master_addr_and_port = types.SimpleNamespace(remote=lambda: ("10.0.0.1", 29500))


class ActorClass:
    """One ROLL ``Cluster``'s worker class: each ``options(...).remote(...)`` is a worker created."""

    def __init__(self) -> None:
        self.created: list[dict[str, Any]] = []
        self.__ray_metadata__ = types.SimpleNamespace(modified_class=object)
        self.__ray_actor_class__ = object

    def options(self, **options: Any) -> ActorClass:
        self.created.append(options)
        return self

    def remote(self, **kwargs: Any) -> Actor:
        return Actor(self.created[-1])


class Recorder:
    def __init__(self) -> None:
        self.state = State([], [])

    def actor_class(self) -> ActorClass:
        return ActorClass()

    def workers(self, actor_class: ActorClass) -> list[list[Any]]:
        """Per worker in creation order: ``[RANK, node, group, group's first GPU, CUDA_VISIBLE_DEVICES
        or None, num_gpus]``, ``group`` the placement group's creation index (ROLL's node rank when
        ``NODE_RANK`` is unset), and only when Ray is told to keep out (ROLL's ``NOSET`` switch)
        does ROLL's device variable count."""
        found = []
        for options in actor_class.created:
            group = options["scheduling_strategy"].placement_group
            env = options["runtime_env"]["env_vars"]
            visible = env.get("CUDA_VISIBLE_DEVICES") if env.get("RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES") == "1" else None
            first = group.gpus[0] if group.gpus else None
            found.append([int(env["RANK"]), group.node, self.state.groups.index(group), first, visible, options.get("num_gpus")])
        return found


_RECORDER = Recorder()


def remote(*args: Any, **options: Any) -> Any:
    """``ray.remote`` bare (``@ray.remote``) or with options (``@ray.remote(num_gpus=1)``, v0.1.0):
    functions become :class:`RemoteFunction`; classes stay as they are (ROLL's ``Cluster`` gets
    the recorder's actor class instead)."""
    if args and callable(args[0]):
        return args[0] if isinstance(args[0], type) else RemoteFunction(args[0], options)
    return lambda target: remote(target, **options)


def install(gpus: list[int], cpus: list[int]) -> Recorder:
    """The fake ``ray`` modules in ``sys.modules`` (once), their cluster reset to these nodes."""
    _RECORDER.state = State(list(gpus), list(cpus))
    if getattr(sys.modules.get("ray"), "__recorder__", None) is _RECORDER:
        return _RECORDER
    state = lambda: _RECORDER.state  # noqa: E731
    ray = RayModule("ray")
    ray.__path__ = []  # type: ignore[attr-defined]
    ray.__recorder__ = _RECORDER  # type: ignore[attr-defined]
    ray.available_resources = lambda: {"GPU": sum(f["GPU"] for f in state().free), "CPU": sum(f["CPU"] for f in state().free)}  # type: ignore[attr-defined]
    ray.nodes = lambda: [
        {"NodeID": f"node{i}", "Alive": True, "Resources": {"GPU": float(g), "CPU": float(c)}}
        for i, (g, c) in enumerate(zip(state().gpus, state().cpus, strict=True))
    ]  # type: ignore[attr-defined]
    ray.get = lambda value, **kwargs: list(value) if isinstance(value, list) else value  # type: ignore[attr-defined]
    ray.remote = remote  # type: ignore[attr-defined]
    ray.get_gpu_ids = lambda: [int(gpu) for gpu in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if gpu]  # type: ignore[attr-defined]
    ray.get_runtime_context = lambda: types.SimpleNamespace(gcs_address="10.0.0.1:6379")  # type: ignore[attr-defined]
    util = RayModule("ray.util")
    util.__path__ = []  # type: ignore[attr-defined]
    util.placement_group = lambda bundles, strategy="PACK", **kwargs: state().land(bundles[0])  # type: ignore[attr-defined]
    util.remove_placement_group = lambda group: None  # type: ignore[attr-defined]
    groups = RayModule("ray.util.placement_group")
    groups.PlacementGroup = PlacementGroup  # type: ignore[attr-defined]
    strategies = RayModule("ray.util.scheduling_strategies")
    strategies.PlacementGroupSchedulingStrategy = lambda placement_group, **kwargs: types.SimpleNamespace(placement_group=placement_group, **kwargs)  # type: ignore[attr-defined]
    runtime_env = RayModule("ray.runtime_env")
    runtime_env.RuntimeEnv = lambda **kwargs: dict(kwargs)  # type: ignore[attr-defined]
    private = RayModule("ray._private")
    private.__path__ = []  # type: ignore[attr-defined]
    async_compat = RayModule("ray._private.async_compat")
    async_compat.has_async_methods = lambda cls: False  # type: ignore[attr-defined]
    worker = RayModule("ray._private.worker")
    worker.RemoteFunctionNoArgs = list  # subscripted in a type hint  # type: ignore[attr-defined]
    ray.util, ray.runtime_env, ray._private = util, runtime_env, private  # type: ignore[attr-defined]
    for module in (ray, util, groups, strategies, runtime_env, private, async_compat, worker):
        sys.modules[module.__name__] = module
    return _RECORDER
