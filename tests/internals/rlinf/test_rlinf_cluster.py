"""``as_cluster``: RLinf's own ``Cluster`` (or anything with its public surface) as our cluster.

The first half needs no RLinf: look-alike objects with the documented surface. The second half
uses RLinf 0.3.0's real classes (skipped without ``pip install --no-deps rlinf==0.3.0``): its
``Cluster`` and the ``FakeCluster`` shape of RLinf's own tests, the scenarios of RLinf's
``tests/unit_tests/test_placement.py`` with the placements RLinf's code computes, and the errors
RLinf's tests catch (``AssertionError`` / ``IndexError`` with its phrase).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
import rlinf_shim
from omegaconf import OmegaConf
from rlinf_builders import fake_cluster, records, rlinf_cluster

import solver_placement
from solver_placement import (
    Cluster,
    HybridComponentPlacement,
    NodePlacementStrategy,
    PackedPlacementStrategy,
    PlacementConfigError,
)
from solver_placement._frontends.rlinf.rlinf_cluster import as_cluster


# ----------------------------------------------------------------------- look-alikes
@dataclass
class Info:
    type: str
    model: str


@dataclass
class Resource:
    type: str
    infos: list[Info]


@dataclass(eq=False)
class Node:
    node_rank: int
    gpus: int
    robots: int = 0
    accelerator_type: str = "NV_GPU"

    @property
    def num_accelerators(self) -> int:
        return self.gpus

    @property
    def hardware_resources(self) -> list[Resource]:
        out = [Resource("Accelerator", [Info("Accelerator", "NV_GPU:H100")] * self.gpus)] if self.gpus else []
        return out + ([Resource("Franka", [Info("Franka", "Franka")] * self.robots)] if self.robots else [])


@dataclass
class Env:
    node_ranks: list[int]
    env_vars: list[dict[str, str]] | None = None
    python_interpreter_path: str | None = None


@dataclass(eq=False)
class Group:
    label: str
    nodes: list[Node]
    hardware_type: str | None
    ignore_hardware: bool = False
    env_configs: list[Env] | None = None


@dataclass(eq=False)
class LookAlike:
    """Only RLinf's public placement surface; groups in a public ``node_groups`` list."""

    nodes: list[Node]
    node_groups: list[Group] = field(default_factory=list)

    @property
    def num_nodes(self) -> int:
        return len(self.nodes)

    def get_node_info(self, rank: int) -> Node:
        return self.nodes[rank]

    def get_node_group(self, label: str | None = None) -> Group | None:
        return next((g for g in self.node_groups if g.label == (label or "cluster")), None)


def look_alike() -> LookAlike:
    nodes = [Node(0, 4), Node(1, 0, robots=2, accelerator_type="NO_ACCEL"), Node(2, 2)]
    return LookAlike(nodes, [
        Group("train", [nodes[0], nodes[2]], "Accelerator", env_configs=[Env([0, 2], [{"NCCL_IB_HCA": "mlx5"}], "/opt/py")]),
        Group("arm", [nodes[1]], "Franka"),
        Group("cpu", [nodes[1]], None, ignore_hardware=True),
        Group("cluster", nodes, "Accelerator"),
        Group("node", nodes, None, ignore_hardware=True),
    ])


def test_our_cluster_is_returned_as_is() -> None:
    cluster = Cluster(num_nodes=1, num_gpus_per_node=2)
    assert as_cluster(cluster) is cluster


def test_a_look_alike_becomes_the_same_cluster_as_its_yaml() -> None:
    converted = as_cluster(look_alike())
    assert converted.num_nodes == 3 and converted.gpus_per_node.tolist() == [4, 0, 2]
    assert converted.accelerator_types == ("NV_GPU", "NO_ACCEL", "NV_GPU")
    assert converted.accelerator_models == ("NV_GPU:H100", None, "NV_GPU:H100")
    assert converted.hw_node[converted.resources(["train"]).physical].tolist() == [0] * 4 + [2] * 2
    arm = converted.resources(["arm"])
    assert [converted.kind_of(int(h)) for h in arm.physical] == ["Franka", "Franka"]
    assert converted.node_group("cpu").hardware_type is None and len(converted.resources(["cpu"])) == 1
    env = converted.node_group("train").env_configs[0]
    assert env.node_ranks == (0, 2) and env.env_vars == {"NCCL_IB_HCA": "mlx5"} and env.python_interpreter_path == "/opt/py"


def test_conversion_is_cached_per_object() -> None:
    first, second = look_alike(), look_alike()
    assert as_cluster(first) is as_cluster(first)
    assert as_cluster(first) is not as_cluster(second)


def test_an_unhashable_look_alike_is_converted_every_time() -> None:
    @dataclass
    class Unhashable(LookAlike):
        pass  # a dataclass with eq=True has no __hash__

    cluster = Unhashable(look_alike().nodes, look_alike().node_groups)
    assert as_cluster(cluster).num_accelerators == 6


def test_only_the_reserved_groups_when_none_are_listed() -> None:
    class Bare:
        num_nodes = 1

        def get_node_info(self, rank: int) -> Node:
            return Node(0, 2)

        def get_node_group(self, label: str | None = None) -> None:
            return None

    converted = as_cluster(Bare())
    assert set(converted.node_groups) == {"cluster", "node"} and converted.num_accelerators == 2


def test_an_object_without_the_surface_is_refused() -> None:
    with pytest.raises(PlacementConfigError, match="but object has no num_nodes, get_node_info, get_node_group") as caught:
        as_cluster(object())
    assert isinstance(caught.value, AssertionError)


def test_strategies_and_component_placements_take_a_look_alike() -> None:
    cluster = look_alike()
    placed = PackedPlacementStrategy(0, 5, node_group="train").get_placement(cluster)
    assert [(p.cluster_node_rank, p.local_hardware_ranks) for p in placed] == [(0, [0]), (0, [1]), (0, [2]), (0, [3]), (2, [0]), (2, [1])]
    config = {"cluster": {"num_nodes": 3, "component_placement": {"env": {"node_group": "arm", "placement": "0-1"}}}}
    env = HybridComponentPlacement(config, cluster).get_strategy("env").get_placement(cluster)
    assert [(p.cluster_node_rank, p.local_hardware_ranks, p.node_group_label) for p in env] == [(1, [0], "arm"), (1, [1], "arm")]


# --------------------------------------------------------------------- RLinf's own objects
needs_rlinf = pytest.mark.skipif(rlinf_shim.skip_reason() is not None, reason=str(rlinf_shim.skip_reason()))


@pytest.fixture(scope="module")
def rl() -> Any:
    return rlinf_shim.load()


def cluster_of(rl: Any, gpus: list[int], groups: dict[str, list[int]] | None = None) -> Any:
    """RLinf's ``Cluster``; ``groups`` label -> node ranks, as RLinf's ``create_fake_cluster``."""
    section: dict[str, Any] = {"num_nodes": len(gpus), "component_placement": {}}
    if groups:
        section["node_groups"] = [{"label": label, "node_ranks": ",".join(map(str, nodes))} for label, nodes in groups.items()]
    return rlinf_cluster(rl, section, gpus)


#: (cluster GPUs, strategy name, args, kwargs) from RLinf's tests/unit_tests/test_placement.py.
RLINF_SCENARIOS = [
    ([4], "PackedPlacementStrategy", (0, 3), {}),
    ([4], "PackedPlacementStrategy", (), {"start_hardware_rank": 0, "end_hardware_rank": 3, "num_hardware_per_process": 2}),
    ([8], "PackedPlacementStrategy", (), {"start_hardware_rank": 0, "end_hardware_rank": 7, "stride": 2, "num_hardware_per_process": 2}),
    ([4, 4], "FlexiblePlacementStrategy", ([[0]],), {}),
    ([4], "FlexiblePlacementStrategy", ([[2, 1, 3]],), {}),
    ([4, 4], "FlexiblePlacementStrategy", ([[0], [1], [2]],), {}),
    ([4, 4, 4], "FlexiblePlacementStrategy", ([[0], [4], [8]],), {}),
    ([2, 2], "NodePlacementStrategy", ([0, 0], "node"), {}),
    ([1, 1, 1], "NodePlacementStrategy", ([0, 1, 1, 2], "node"), {}),
    ([0, 0], "NodePlacementStrategy", ([0], "node"), {}),
]


@needs_rlinf
@pytest.mark.parametrize("fake", [False, True], ids=["rlinf-Cluster", "rlinf-test-FakeCluster"])
@pytest.mark.parametrize(("gpus", "strategy", "args", "kwargs"), RLINF_SCENARIOS)
def test_rlinf_scenarios_give_rlinfs_placements(rl: Any, fake: bool, gpus: list[int], strategy: str, args: tuple, kwargs: dict) -> None:
    cluster = cluster_of(rl, gpus)
    cluster = fake_cluster(cluster) if fake else cluster
    theirs = records(getattr(rl, strategy)(*args, **kwargs).get_placement(cluster))
    ours = records(getattr(solver_placement, strategy)(*args, **kwargs).get_placement(cluster))
    if strategy == "NodePlacementStrategy":  # documented: RLinf's "0" string vs our -1 (no own GPU)
        theirs = [type(r)(r.values[:3] + (-1,) + r.values[4:]) for r in theirs]
    assert ours == theirs


@needs_rlinf
def test_rlinf_hybrid_scenario_with_node_groups(rl: Any) -> None:
    """RLinf's ``test_parses_gpu_and_node_groups``, on its own cluster object."""
    config = OmegaConf.create({"cluster": {"num_nodes": 2, "component_placement": {
        "actor": {"node_group": "train", "placement": "0-3"},
        "env": {"node_group": "node", "placement": "0-1:0-3"},
        "reward": {"node_group": "train", "placement": "0-1"},
    }}})
    cluster = cluster_of(rl, [4, 4], {"train": [0, 1]})
    ours, theirs = HybridComponentPlacement(config, cluster), rl.HybridComponentPlacement(config, cluster)
    assert ours.components == theirs.components and ours.get_hardware_ranks("actor") == [0, 1, 2, 3]
    assert isinstance(ours.get_strategy("env"), NodePlacementStrategy)
    env = ours.get_strategy("env").get_placement(cluster)
    assert [p.cluster_node_rank for p in env] == [0, 0, 1, 1]
    for name in ("actor", "reward"):
        assert records(ours.get_strategy(name).get_placement(cluster)) == records(theirs.get_strategy(name).get_placement(cluster))


ERROR_SCENARIOS = [
    # (cluster GPUs, build the call, exception RLinf raises, phrase RLinf's tests match)
    ([4], lambda s: s.PackedPlacementStrategy(0, 3, stride=5), AssertionError, "divisible"),
    ([4], lambda s: s.PackedPlacementStrategy(0, 2, num_hardware_per_process=4), AssertionError, "divisible"),
    ([4], lambda s: s.FlexiblePlacementStrategy([]), AssertionError, "must not be empty"),
    ([4], lambda s: s.NodePlacementStrategy([]), AssertionError, "must not be empty"),
]
PLACEMENT_ERROR_SCENARIOS = [
    ([4], lambda s: s.PackedPlacementStrategy(4, 7), AssertionError, "exceed available resources|out of range"),
    ([4, 4], lambda s: s.FlexiblePlacementStrategy([[0], [8]]), AssertionError, "out of range"),
    ([4], lambda s: s.FlexiblePlacementStrategy([[0, 0]]), AssertionError, "must be unique"),
    ([1, 1], lambda s: s.NodePlacementStrategy([0, 2], "node"), IndexError, "Node rank 2 is out of range for selected node groups"),
    ([4, 4], lambda s: s.FlexiblePlacementStrategy([[0]], "h100"), AssertionError, "not found"),
    ([4, 4], lambda s: s.PackedPlacementStrategy(0, 1, node_group="node"), AssertionError, "Packed placement requires hardware resources"),
]


@needs_rlinf
@pytest.mark.parametrize(("gpus", "make", "error", "phrase"), ERROR_SCENARIOS)
def test_constructor_errors_are_rlinfs(rl: Any, gpus: list[int], make: Any, error: type, phrase: str) -> None:
    for side in (rl, solver_placement):
        with pytest.raises(error, match=phrase):
            make(side)


@needs_rlinf
@pytest.mark.parametrize(("gpus", "make", "error", "phrase"), PLACEMENT_ERROR_SCENARIOS)
def test_placement_errors_are_rlinfs(rl: Any, gpus: list[int], make: Any, error: type, phrase: str) -> None:
    """Built without error, refused by ``get_placement`` with RLinf's exception type and phrase."""
    cluster = cluster_of(rl, gpus)
    for side in (rl, solver_placement):
        strategy = make(side)
        with pytest.raises(error, match=phrase):
            strategy.get_placement(cluster)


@needs_rlinf
@pytest.mark.parametrize(
    ("placement", "phrase"),
    [("0-1,1-2", "Resource ranks must be unique"), ("0-0:0,1-1:2", "Process ranks must be in ascending order")],
)
def test_component_placement_errors_are_rlinfs(rl: Any, placement: str, phrase: str) -> None:
    """RLinf's ``test_invalid_duplicate_resource_ranks`` / ``..._non_continuous_process_ranks``."""
    config = OmegaConf.create({"cluster": {"num_nodes": 1, "component_placement": {"actor": placement}}})
    cluster = fake_cluster(cluster_of(rl, [4]))
    for side in (rl, solver_placement):
        with pytest.raises(AssertionError, match=phrase):
            side.HybridComponentPlacement(config, cluster)
