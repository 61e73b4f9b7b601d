"""A stand-in for Ray that lands NeMo-RL's placement groups as Ray would and records them.

``placement_group(bundles, strategy)``: ``PACK`` puts the group on the freest node (Ray's
``LeastResourceScorer``; ties: fewer CPUs reserved, then the lower node), every bundle that fits
there, the rest on the next freest; ``SPREAD`` gives each bundle the node the group used least,
freest first; a node hands out its lowest free GPUs. A group that does not fit is pending: its
``ready()`` makes ``ray.get(..., timeout=...)`` raise ``GetTimeoutError`` as Ray's does after the
timeout. Node IDs are ``node-0000``, ``node-0001``... so NeMo-RL's sort by node ID keeps node order.
Remote functions run at once; inside a bundle ``ray.get_gpu_ids()`` and the runtime context's
node ID answer for that bundle (what NeMo-RL's ``_get_gpu_id_info`` probe reads).

A node may carry NeMo-RL's topology resources (``nvlink_domain_<id>: 1``, ``topo_rank: N``, as its
``ray.sub`` registers them): ``ray.nodes()`` reports them, and a bundle asking for a
``nvlink_domain_<id>`` resource fits only the nodes that have it (PACK: the freest such node).
"""

from __future__ import annotations

import sys
import types
from typing import Any


class Pending(Exception):
    """A placement group Ray cannot place."""


class GetTimeoutError(Exception):
    """``ray.exceptions.GetTimeoutError``."""


class PlacementGroup:
    def __init__(self, bundles: list[dict[str, float]], landed: list[tuple[int, int]] | None) -> None:
        self.bundle_specs, self.landed = bundles, landed or []
        self.pending = landed is None

    @property
    def bundle_count(self) -> int:
        return len(self.bundle_specs)

    def ready(self) -> PlacementGroup:
        return self


class Cluster:
    def __init__(self, gpus: list[int], resources: list[dict[str, float]] | None = None) -> None:
        self.free = [list(range(count)) for count in gpus]
        self.cpus = [0] * len(gpus)
        self.total = sum(gpus)
        self.resources = resources or [{} for _ in gpus]
        self.current: tuple[int, int] | None = None

    def _fits(self, node: int, bundle: dict[str, float], free: list[list[int]]) -> bool:
        wanted = [key for key in bundle if key not in ("CPU", "GPU")]
        return bool(free[node]) and all(key in self.resources[node] for key in wanted)

    def land(self, bundles: list[dict[str, float]], strategy: str) -> PlacementGroup:
        free = [list(gpus) for gpus in self.free]
        cpus = list(self.cpus)
        landed: list[tuple[int, int]] = []
        cpus_each = int(bundles[0].get("CPU", 1)) if bundles else 1
        if strategy == "SPREAD":
            used = [0] * len(free)
            for bundle in bundles:
                fitting = [n for n in range(len(free)) if self._fits(n, bundle, free)]
                if not fitting:
                    return PlacementGroup(bundles, None)
                node = min(fitting, key=lambda n: (used[n], -len(free[n]), cpus[n], n))
                landed.append((node, free[node].pop(0)))
                used[node] += 1
                cpus[node] += cpus_each
        else:
            left = set(range(len(free)))
            while len(landed) < len(bundles):
                fitting = [n for n in left if self._fits(n, bundles[len(landed)], free)]
                if not fitting:
                    return PlacementGroup(bundles, None)
                node = min(fitting, key=lambda n: (-len(free[n]), cpus[n], n))
                while len(landed) < len(bundles) and self._fits(node, bundles[len(landed)], free):
                    landed.append((node, free[node].pop(0)))
                    cpus[node] += cpus_each
                left.discard(node)
        self.free, self.cpus = free, cpus
        return PlacementGroup(bundles, landed)


STATE: Cluster | None = None


def _state() -> Cluster:
    assert STATE is not None
    return STATE


def node_id(node: int) -> str:
    return f"node-{node:04d}"


class _Remote:
    def __init__(self, function: Any) -> None:
        self.function, self.strategy = function, None

    def options(self, **options: Any) -> _Remote:
        bound = _Remote(self.function)
        bound.strategy = options.get("scheduling_strategy")
        return bound

    def remote(self, *args: Any, **kwargs: Any) -> Any:
        if self.strategy is not None:
            pg, index = self.strategy.placement_group, self.strategy.placement_group_bundle_index
            _state().current = pg.landed[index]
        return self.function(*args, **kwargs)


def remote(*args: Any, **_options: Any) -> Any:
    if args and callable(args[0]):
        return _Remote(args[0])
    return _Remote


def get(refs: Any, timeout: float | None = None) -> Any:
    if isinstance(refs, list):
        if any(isinstance(ref, PlacementGroup) and ref.pending for ref in refs):
            raise Pending("a placement group Ray cannot place: ray.get(pg.ready()) times out")
        return list(refs)
    return refs


def placement_group(bundles: list[dict[str, float]], strategy: str = "PACK", name: str = "", **_: Any) -> PlacementGroup:
    return _state().land(bundles, strategy)


def placement_group_table(pg: PlacementGroup) -> dict[str, Any]:
    return {"bundles": dict(enumerate(pg.bundle_specs)), "bundles_to_node_id": {i: node_id(node) for i, (node, _) in enumerate(pg.landed)}}


class PlacementGroupSchedulingStrategy:
    def __init__(self, placement_group: PlacementGroup, placement_group_bundle_index: int = -1, **_: Any) -> None:
        self.placement_group, self.placement_group_bundle_index = placement_group, placement_group_bundle_index


class _Context:
    def get_node_id(self) -> str:
        current = _state().current
        assert current is not None
        return node_id(current[0])


def _module(name: str, **names: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(names)
    sys.modules[name] = module
    return module


ray = _module(
    "ray", remote=remote, get=get, cluster_resources=lambda: {"GPU": float(_state().total), "CPU": 1e6},
    get_gpu_ids=lambda: [_state().current[1]],  # type: ignore[index]
    get_runtime_context=_Context, nodes=lambda: [{"NodeID": node_id(n), "Alive": True, "Resources": dict(_state().resources[n])} for n in range(len(_state().free))],
    is_initialized=lambda: True, ObjectRef=object,
)  # fmt: skip


def install(gpus: list[int], resources: list[dict[str, float]] | None = None) -> None:
    """Make ``import ray`` (and the submodules NeMo-RL's placement code imports) this recorder;
    ``resources`` each node's custom resources (NeMo-RL's topology keys)."""
    global STATE
    STATE = Cluster(list(gpus), resources)
    util = _module("ray.util", placement_group_table=placement_group_table)
    ray.util = util  # type: ignore[attr-defined]
    _module("ray.util.placement_group", PlacementGroup=PlacementGroup, placement_group=placement_group, remove_placement_group=lambda pg: None, placement_group_table=placement_group_table)
    _module("ray.util.scheduling_strategies", PlacementGroupSchedulingStrategy=PlacementGroupSchedulingStrategy, NodeAffinitySchedulingStrategy=object)
    ray.exceptions = _module("ray.exceptions", GetTimeoutError=GetTimeoutError)  # type: ignore[attr-defined]
    private = _module("ray._private")
    private.services = _module("ray._private.services", get_node_ip_address=lambda: "127.0.0.1")  # type: ignore[attr-defined]
    ray._private = private  # type: ignore[attr-defined]
