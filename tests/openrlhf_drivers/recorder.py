"""Ray replaced by a recorder: OpenRLHF's placement groups land on a stated cluster as Ray lands
them, and every actor it starts is written down with the bundle, node and GPU Ray gives it.

This is a second, independent statement of the Ray rules the library's prediction uses
(``solver_placement/_frontends/openrlhf/ray_landing.py``), kept deliberately plain:

* a ``PACK`` placement group is placed whole or not at all (``BundlePackSchedulingPolicy`` in
  Ray's ``bundle_scheduling_policy.cc``): the freest node (most free GPUs, then fewest CPUs
  reserved, then lowest rank) takes as many bundles as it holds, in bundle order, then the next
  freest; a group that does not fit stays pending, so ``ray.get(pg.ready())`` never returns
  (raised here as :class:`Pending`, which ends the run);
* a bundle's GPU is its node's lowest free GPU, bundles taken in index order;
* an actor in a bundle takes the bundle's GPU, its ``num_gpus`` counted against the bundle's one
  GPU; Ray refuses a bundle index outside the group (``ValueError``, as ``check_placement_group_index``);
* an actor with no placement group and a whole GPU goes to the first node, by rank, with a free
  GPU (the driver's node first: Ray's default hybrid policy below half use), on its lowest free GPU.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

from stubs import StubModule


class Pending(Exception):
    """A placement group Ray cannot place: OpenRLHF would wait in ``pg.ready()`` forever."""


class Stop(Exception):
    """OpenRLHF reached its trainer (0.10 and later) or loads its models (0.7.0): every group and
    engine is created, the recording is complete."""


class Cluster:
    """The GPUs per node, what is free, the CPUs reserved, and everything started so far."""

    def __init__(self, gpus_per_node: list[int]) -> None:
        self.free = [list(range(count)) for count in gpus_per_node]
        self.cpus = [0.0] * len(gpus_per_node)
        self.groups: list[PlacementGroup] = []
        self.actors: list[dict[str, Any]] = []
        self.pending: dict[str, Any] | None = None


CLUSTER = Cluster([8])


class PlacementGroup:
    def __init__(self, bundles: list[dict[str, float]], strategy: str) -> None:
        self.bundles = bundles
        self.strategy = strategy
        self.bundle_count = len(bundles)
        self.index = len(CLUSTER.groups)
        self.landed: list[tuple[int, int]] | None = None
        self.used = [0.0] * len(bundles)
        CLUSTER.groups.append(self)

    def ready(self) -> Ref:
        return Ref(("ready", self))

    def land(self) -> None:
        """Place every bundle (see the module docstring) or raise :class:`Pending`."""
        assert self.strategy == "PACK", self.strategy
        free = [list(gpus) for gpus in CLUSTER.free]
        cpus = list(CLUSTER.cpus)
        candidates = set(range(len(free)))
        landed: list[tuple[int, int]] = []
        while len(landed) < len(self.bundles):
            usable = [node for node in candidates if free[node]]
            if not usable:
                CLUSTER.pending = {"group": self.index, "bundles": len(self.bundles), "free": [len(gpus) for gpus in CLUSTER.free]}
                raise Pending()
            node = min(usable, key=lambda n: (-len(free[n]), cpus[n], n))
            while free[node] and len(landed) < len(self.bundles):
                landed.append((node, free[node].pop(0)))
                cpus[node] += self.bundles[len(landed) - 1].get("CPU", 0)
            candidates.discard(node)
        CLUSTER.free, CLUSTER.cpus, self.landed = free, cpus, landed


class PlacementGroupSchedulingStrategy:
    def __init__(
        self, placement_group: PlacementGroup, placement_group_bundle_index: int = -1, placement_group_capture_child_tasks: bool | None = None
    ) -> None:
        self.placement_group = placement_group
        self.placement_group_bundle_index = placement_group_bundle_index


class Ref:
    def __init__(self, value: Any) -> None:
        self.value = value


class Handle:
    """An actor: any method call returns a reference; ``get_master_addr_port`` an address."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name == "init_model_from_pretrained":  # 0.7.0 loads models right after its last group (no trainer actor)
            raise Stop()
        method = types.SimpleNamespace()
        method.remote = lambda *args, **kwargs: Ref(("10.0.0.1", 29500) if name == "get_master_addr_port" else None)
        return method


class RemoteClass:
    def __init__(self, cls: Any) -> None:
        self.cls = cls
        self.__name__ = getattr(cls, "__name__", "function")

    def options(self, **options: Any) -> Any:
        launcher = types.SimpleNamespace()
        launcher.remote = lambda *args, **kwargs: self._start(options, args, kwargs)
        return launcher

    def remote(self, *args: Any, **kwargs: Any) -> Any:
        return self._start({}, args, kwargs)

    def _start(self, options: dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self.__name__.startswith("PPOTrainer"):
            raise Stop()
        if not isinstance(self.cls, type):  # a remote function (0.7.0 asks one for the environment)
            return Ref(dict(os.environ))
        record: dict[str, Any] = {"class": self.__name__, "args": [a for a in args if isinstance(a, (int, str)) or a is None][:2],
                                  "num_gpus": options.get("num_gpus", 0), "bundle_indices": kwargs.get("bundle_indices"), "worker_gpus": kwargs.get("num_gpus")}  # fmt: skip
        strategy = options.get("scheduling_strategy")
        share = float(options.get("num_gpus") or 0)
        if isinstance(strategy, PlacementGroupSchedulingStrategy):
            group = strategy.placement_group
            for worker in kwargs.get("bundle_indices") or ():  # vLLM's Ray workers: VLLM_RAY_PER_WORKER_GPUS of each bundle
                group.used[worker] += float(kwargs["num_gpus"])
                assert group.used[worker] <= 1 + 1e-6, f"bundle {worker} of group {group.index} over-full: Ray would leave a vLLM worker pending"
            index = strategy.placement_group_bundle_index
            if not 0 <= index < group.bundle_count:
                raise ValueError(f"placement group bundle index {index} is invalid. Valid placement group indexes: 0-{group.bundle_count}")
            assert group.landed is not None, "an actor in a placement group that is not ready"
            group.used[index] += share
            assert group.used[index] <= 1 + 1e-6, f"bundle {index} of group {group.index} over-full: Ray would leave the actor pending"
            node, gpu = group.landed[index]
            record.update(group=group.index, bundle=index, node=node, gpu=gpu if share else None)
        else:
            assert share == 1, f"an actor with {share} GPU outside a placement group"
            usable = [node for node, gpus in enumerate(CLUSTER.free) if gpus]
            if not usable:
                CLUSTER.pending = {"actor": self.__name__}
                raise Pending()
            node = usable[0]
            record.update(group=None, bundle=None, node=node, gpu=CLUSTER.free[node].pop(0))
        CLUSTER.actors.append(record)
        return Handle()


def remote(*args: Any, **kwargs: Any) -> Any:
    if args and callable(args[0]) and not kwargs:
        return RemoteClass(args[0])
    return lambda target: RemoteClass(target)


def get(value: Any, timeout: float | None = None) -> Any:
    if isinstance(value, list):
        return [get(item) for item in value]
    if isinstance(value, Ref):
        if isinstance(value.value, tuple) and value.value and value.value[0] == "ready":
            value.value[1].land()
            return True
        return value.value
    return value


def placement_group(bundles: list[dict[str, float]], strategy: str = "PACK", **kwargs: Any) -> PlacementGroup:
    return PlacementGroup(bundles, strategy)


def placement_group_table(group: PlacementGroup) -> dict[str, Any]:
    assert group.landed is not None
    return {"bundles_to_node_id": {index: f"node-{node}" for index, (node, _) in enumerate(group.landed)}}


def reset(gpus_per_node: list[int]) -> None:
    """A fresh cluster for the next run (OpenRLHF's modules keep the recorder's functions)."""
    global CLUSTER
    CLUSTER = Cluster(gpus_per_node)


def install() -> None:
    """Put the recorder in ``sys.modules`` as ``ray`` (and the submodules OpenRLHF imports)."""
    ray = StubModule("ray")
    ray.__path__ = []  # type: ignore[attr-defined]
    for name, value in {"remote": remote, "get": get, "put": lambda value: Ref(value), "init": lambda *a, **k: None,
                        "is_initialized": lambda: True, "get_gpu_ids": lambda: [0], "wait": lambda refs, **k: (refs, [])}.items():  # fmt: skip
        setattr(ray, name, value)
    modules = {"ray": ray}
    for name in ("ray.util", "ray.util.placement_group", "ray.util.scheduling_strategies", "ray.util.queue", "ray.util.collective",
                 "ray._private", "ray._private.services", "ray._private.worker", "ray.actor"):  # fmt: skip
        module = StubModule(name)
        module.__path__ = []  # type: ignore[attr-defined]
        modules[name] = module
    modules["ray.util"].placement_group_table = placement_group_table  # type: ignore[attr-defined]
    modules["ray.util.placement_group"].placement_group = placement_group  # type: ignore[attr-defined]
    modules["ray.util.placement_group"].PlacementGroup = PlacementGroup  # type: ignore[attr-defined]
    modules["ray.util.placement_group"].placement_group_table = placement_group_table  # type: ignore[attr-defined]
    modules["ray.util.scheduling_strategies"].PlacementGroupSchedulingStrategy = PlacementGroupSchedulingStrategy  # type: ignore[attr-defined]
    ray.util = modules["ray.util"]  # type: ignore[attr-defined]
    ray._private = modules["ray._private"]  # type: ignore[attr-defined]
    ray.util.placement_group = modules["ray.util.placement_group"]  # type: ignore[attr-defined]
    ray.util.scheduling_strategies = modules["ray.util.scheduling_strategies"]  # type: ignore[attr-defined]
    sys.modules.update(modules)
