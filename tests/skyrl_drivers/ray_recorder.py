"""Ray replaced by a recorder: SkyRL's placement groups land as Ray lands ``PACK`` groups, its
actors take GPUs of their bundles (first GPU with room for the fraction asked), and every actor
is recorded with the options SkyRL gave it. Nothing runs remotely.

The landing is Ray's ``BundlePackSchedulingPolicy`` on an idle cluster of whole GPUs: the freest
node (GPUs, then CPUs reserved, then node rank) takes the first unplaced bundle and every
further one that fits; a group no nodes hold is never ready (``ray.get(pg.ready(), timeout)``
raises). An actor without a group goes to the first node by rank with a whole GPU free. Node IDs
are hex strings that sort in node order.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field
from typing import Any

from inert import Inert, inert_class


class GetTimeoutError(Exception):
    pass


@dataclass
class Group:
    bundles: list[dict[str, float]]
    strategy: str
    landed: list[tuple[int, tuple[int, ...]]] | None = None  # per bundle: node, GPUs

    @property
    def bundle_specs(self) -> list[dict[str, float]]:
        return self.bundles

    def ready(self) -> Ref:
        return Ref(("ready", self))


@dataclass
class Ref:
    value: Any


@dataclass
class Actor:
    cls: str
    options: dict[str, Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    node: int | None = None
    gpus: tuple[int, ...] = ()
    bundle: int | None = None
    workers: list[tuple[int, int, int]] = field(default_factory=list)  # vLLM workers: bundle, node, GPU

    def __getattr__(self, name: str) -> Any:
        return _Method(self, name)


class _Method:
    def __init__(self, actor: Actor, name: str) -> None:
        self.actor, self.name = actor, name

    def remote(self, *args: Any, **kwargs: Any) -> Ref:
        if self.name == "get_master_addr_port":
            return Ref(("127.0.0.1", 29500))
        if self.name == "get_gpu_id":
            return Ref(self.actor.gpus[0] if self.actor.gpus else 0)
        return Ref(None)


class Cluster:
    def __init__(self, gpus_per_node: list[int]) -> None:
        self.free = [list(range(count)) for count in gpus_per_node]
        self.cpus = [0.0] * len(gpus_per_node)
        self.share: dict[tuple[int, int], float] = {}
        self.actors: list[Actor] = []

    def land(self, group: Group) -> None:
        size = int(group.bundles[0].get("GPU", 0))
        free = [list(gpus) for gpus in self.free]
        cpus = list(self.cpus)
        left = set(range(len(free)))
        landed: list[tuple[int, tuple[int, ...]]] = []
        while len(landed) < len(group.bundles):
            usable = [node for node in left if len(free[node]) >= size]
            if not usable:
                return
            node = min(usable, key=lambda n: (-len(free[n]), cpus[n], n))
            while len(landed) < len(group.bundles) and len(free[node]) >= size:
                landed.append((node, tuple(free[node][:size])))
                del free[node][:size]
                cpus[node] += group.bundles[0].get("CPU", 0)
            left.discard(node)
        self.free, self.cpus, group.landed = free, cpus, landed

    def take(self, node: int, gpus: tuple[int, ...], fraction: float) -> int | None:
        for gpu in gpus:
            if self.share.get((node, gpu), 0.0) + fraction <= 1 + 1e-6:
                self.share[(node, gpu)] = self.share.get((node, gpu), 0.0) + fraction
                return gpu
        return None


STATE: dict[str, Cluster] = {}


class SchedulingStrategy:
    def __init__(self, placement_group: Group, placement_group_bundle_index: int = -1, placement_group_capture_child_tasks: bool = False) -> None:
        self.placement_group = placement_group
        self.bundle_index = placement_group_bundle_index


class _RemoteClass:
    def __init__(self, target: Any, defaults: dict[str, Any]) -> None:
        self.target, self.defaults = target, defaults

    def options(self, **options: Any) -> _RemoteClass:
        return _RemoteClass(self.target, {**self.defaults, **options})

    def remote(self, *args: Any, **kwargs: Any) -> Any:
        name = getattr(self.target, "__name__", str(self.target))
        if isinstance(self.target, types.FunctionType):
            return Ref(("127.0.0.1", 29500) if name == "get_addr_port" else self.target(*args, **kwargs))
        actor = Actor(name, dict(self.defaults), args, kwargs)
        _place(actor)
        if name != "InfoActor":
            STATE["cluster"].actors.append(actor)
        return actor


def _place(actor: Actor) -> None:
    cluster = STATE["cluster"]
    fraction = float(actor.options.get("num_gpus", 0) or 0)
    strategy = actor.options.get("scheduling_strategy")
    if isinstance(strategy, SchedulingStrategy):
        group = strategy.placement_group
        if group.landed is None:
            return
        index = max(strategy.bundle_index, 0)
        node, gpus = group.landed[index]
        actor.node, actor.bundle = node, index
        if actor.cls == "InfoActor":
            actor.gpus = gpus[:1]
            return
        if fraction:
            gpu = cluster.take(node, gpus, fraction)
            actor.gpus = () if gpu is None else (gpu,)
            if gpu is None:
                actor.node = None
        for bundle in actor.kwargs.get("bundle_indices") or ():  # vLLM's Ray executor: one worker per bundle
            worker_node, worker_gpus = group.landed[bundle]
            gpu = cluster.take(worker_node, worker_gpus, float(actor.kwargs.get("num_gpus", 1)))
            actor.workers.append((bundle, worker_node, -1 if gpu is None else gpu))
        return
    if fraction:
        for node, gpus in enumerate(cluster.free):
            if gpus:
                actor.node, actor.gpus = node, (gpus.pop(0),)
                return


def remote(*args: Any, **kwargs: Any) -> Any:
    if args and callable(args[0]) and not kwargs:
        return _RemoteClass(args[0], {})
    return lambda target: _RemoteClass(target, kwargs)


def get(value: Any, timeout: float | None = None) -> Any:
    if isinstance(value, list):
        return [get(item) for item in value]
    if isinstance(value, Ref):
        if isinstance(value.value, tuple) and value.value and value.value[0] == "ready":
            group = value.value[1]
            STATE["cluster"].land(group)
            if group.landed is None:
                raise GetTimeoutError("placement group never ready")
            return True
        return value.value
    return value


def placement_group(bundles: list[dict[str, float]], strategy: str = "PACK", **_: Any) -> Group:
    return Group([dict(bundle) for bundle in bundles], strategy)


def placement_group_table(group: Group) -> dict[str, Any]:
    landed = group.landed or []
    return {"bundles": dict(enumerate(group.bundles)), "bundles_to_node_id": {index: f"{node:056x}" for index, (node, _) in enumerate(landed)}}


def install(gpus_per_node: list[int]) -> None:
    STATE["cluster"] = Cluster(gpus_per_node)
    ray = types.ModuleType("ray")
    ray.remote = remote  # type: ignore[attr-defined]
    ray.get = get  # type: ignore[attr-defined]
    ray.kill = lambda *args, **kwargs: None  # type: ignore[attr-defined]
    ray.is_initialized = lambda: True  # type: ignore[attr-defined]
    ray.get_gpu_ids = lambda: [0]  # type: ignore[attr-defined]
    ray.ObjectRef = Ref  # type: ignore[attr-defined]
    ray.__getattr__ = lambda name: inert_class(name)  # type: ignore[attr-defined]
    ray.__path__ = []  # type: ignore[attr-defined]
    util = types.ModuleType("ray.util")
    util.__path__ = []  # type: ignore[attr-defined]
    pg = types.ModuleType("ray.util.placement_group")
    pg.placement_group = placement_group  # type: ignore[attr-defined]
    pg.placement_group_table = placement_group_table  # type: ignore[attr-defined]
    pg.PlacementGroup = Group  # type: ignore[attr-defined]
    pg.PlacementGroupSchedulingStrategy = SchedulingStrategy  # type: ignore[attr-defined]
    strategies = types.ModuleType("ray.util.scheduling_strategies")
    strategies.PlacementGroupSchedulingStrategy = SchedulingStrategy  # type: ignore[attr-defined]
    strategies.NodeAffinitySchedulingStrategy = inert_class("NodeAffinitySchedulingStrategy")  # type: ignore[attr-defined]
    actor = types.ModuleType("ray.actor")
    actor.ActorHandle = Actor  # type: ignore[attr-defined]
    for module in (ray, util, pg, strategies, actor):
        sys.modules[module.__name__] = module
    ray.util = util  # type: ignore[attr-defined]
    util.placement_group = pg  # type: ignore[attr-defined]
    util.scheduling_strategies = strategies  # type: ignore[attr-defined]
    _ = Inert
