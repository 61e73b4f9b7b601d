"""Label-based reservations on real Ray (a simulated 3-node cluster whose nodes carry the model's
labels): bundles select nodes by label, a required rack domain is held by Ray's topology
strategy where Ray has it and by label selectors otherwise, a node Ray cannot place by domain is
refused before anything is reserved, and a job read with ``Cluster.from_ray(available=True)``
launches beside another job's placement group on exactly the GPUs left free. Every test ends
with no placement group or worker actor of its own left."""

from __future__ import annotations

import os
import sys
import time

import pytest
import ray
from click.testing import CliRunner
from ray.util import placement_group_table
from ray.util.placement_group import PlacementGroup, placement_group, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy
from ray_leaks import alive_actors, live_groups, local_ray_fixtures
from test_plan_labels import RACKS, TP_IN_RACK

import solver_placement._ray_launch.reserve as reserve_module
from solver_placement import Cluster, PlacementConfigError, PlacementSpec, Solution, solve, verify
from solver_placement._cli import main
from solver_placement._cluster.ray_nodes import NODE_RANK_LABEL
from solver_placement._ray_launch.connect import ray_nodes
from solver_placement._ray_launch.features import has_topology_strategy
from solver_placement._ray_launch.reserve import reserve
from solver_placement._ray_launch.session import LocalRayCluster

pytestmark = pytest.mark.ray

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

MODEL = RACKS  # the plan tests' racks, now on a live Ray


class Where:
    def where(self) -> tuple[str, str]:
        return ray.get_runtime_context().get_node_id(), os.environ["CUDA_VISIBLE_DEVICES"]


local_ray, removing_leaks = local_ray_fixtures(MODEL, cpus_per_node=8)


def assert_no_leaks() -> None:
    assert live_groups() == []
    assert alive_actors(["Where"]) == []


def solved(placement: dict, cluster: Cluster = MODEL) -> Solution:
    solution = solve(PlacementSpec.build(cluster, placement))
    verify(solution.spec, solution.placements_by_component())
    return solution


def bundle_nodes(group_names: list[str]) -> list[str]:
    """Where Ray put each bundle of the named placement groups, in order."""
    table = {pg["name"]: pg for pg in placement_group_table().values() if pg["state"] == "CREATED"}
    return [node for name in group_names for _, node in sorted(table[name]["bundles_to_node_id"].items())]


@pytest.mark.parametrize("strategy", [True, False], ids=["topology_strategy", "label_selectors"])
def test_a_required_rack_is_held_by_ray_and_every_bundle_lands_on_its_labelled_node(strategy: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if strategy and not has_topology_strategy():
        pytest.skip(f"Ray {ray.__version__} has no topology_strategy (2.57 on)")
    monkeypatch.setattr(reserve_module, "has_topology_strategy", lambda: strategy)
    solution = solved(TP_IN_RACK)
    with reserve(solution, cpus_per_process=0.25, job_name="racks") as reservation:
        plan = reservation.plan
        assert plan.scheme == "labels"
        assert all(b.label_selector[NODE_RANK_LABEL] == str(b.node_rank) and "ray.io/node-id" not in b.label_selector for b in plan.bundles)
        actor_ranks = {p.cluster_node_rank for p in solution.placements("actor")}
        assert all(b.label_selector.get("rack") == "r1" for b in plan.bundles if b.node_rank in actor_ranks)
        names = sorted(pg["name"] for pg in live_groups("racks-reservation-"))
        assert len(names) == (2 if strategy else 1)
        domain_groups = [g for g in plan.placement_groups if g.topology_strategy]
        assert [g.topology_strategy for g in domain_groups] == ([{"ray.io/node-id": "PACK", "rack": "STRICT_PACK"}] if strategy else [])
        landed = bundle_nodes(names)
        assert sorted(landed) == sorted(b.node_id for b in plan.bundles)
        got = reservation.launch("actor", Where).execute_all("where")
        assert got == [(plan.node_ids[p.cluster_node_rank], ",".join(p.visible_accelerators)) for p in solution.placements("actor")]
    assert_no_leaks()


def test_a_node_without_the_required_domain_label_is_named_and_nothing_is_reserved() -> None:
    nvlink = Cluster(  # MODEL with an NVLink domain label on nodes 0 and 1 only
        3, 2, accelerator_model="A800", node_labels=[{"rack": "r1", "nvlink": "n1"}, {"rack": "r1", "nvlink": "n1"}, {"rack": "r2"}],
        node_groups=[{"label": "train", "node_ranks": "0-2"}],
    )  # fmt: skip
    solution = solved({"actor": {"processes": 4, "tensor_parallel_size": 4, "topology": {"tensor_parallel": {"nvlink": "require"}}}}, nvlink)
    groups_before = len(placement_group_table())
    with pytest.raises(PlacementConfigError, match=r"node 0 \(Ray node \w+, [\d.]+\) carries no 'nvlink' label, which actor requires there; "
                       r"node 1 .* carries no 'nvlink' label"):  # fmt: skip
        reserve(solution, cpus_per_process=0.25)
    assert len(placement_group_table()) == groups_before
    assert_no_leaks()


def hold_gpus(rank: int, count: int) -> PlacementGroup:
    """Another job's reservation of ``count`` GPUs of node ``rank``, once Ray's view of free
    resources shows every GPU of the cluster free before and the hold after (Ray refreshes that
    view every few hundred milliseconds, and removing an earlier test's groups takes a moment)."""
    for each in ray_nodes():
        wait_free_gpus(each.node_id, each.resources["GPU"])
    node = next(node for node in ray_nodes() if node.labels[NODE_RANK_LABEL] == str(rank))
    total = node.resources["GPU"]
    other = placement_group([{"GPU": 1}] * count, bundle_label_selector=[{NODE_RANK_LABEL: str(rank)}] * count, name="other-job")
    assert other.wait(30)
    wait_free_gpus(node.node_id, total - count)
    return other


def wait_free_gpus(node_id: str, free: float, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while next(node for node in ray_nodes(available=True) if node.node_id == node_id).resources.get("GPU", 0.0) != free:
        assert time.monotonic() < deadline, f"Ray's view of free GPUs never showed {free:g} free"
        time.sleep(0.2)


@ray.remote(num_cpus=0, num_gpus=0.001)
def gpu_ids() -> list[str]:
    return [str(gpu) for gpu in ray.get_gpu_ids()]


def test_a_job_read_with_available_gpus_launches_beside_another_job_on_the_gpus_left_free() -> None:
    other = hold_gpus(0, 1)
    try:
        held = ray.get(gpu_ids.options(scheduling_strategy=PlacementGroupSchedulingStrategy(other, placement_group_bundle_index=0)).remote())
        free = Cluster.from_ray(available=True)
        assert free.free_gpus_only and free.gpus_per_node.tolist() == [1, 2, 2]
        assert free.node_labels[0] == {"rack": "r1", "ray.io/accelerator-type": "A800"} and free.node_groups["train"].node_ranks == (0, 1, 2)
        solution = solved({"a": {"node_group": "train", "placement": "0-4"}}, free)
        with reserve(solution, cpus_per_process=0.25) as reservation:
            plan = reservation.plan
            got = reservation.launch("a", Where).execute_all("where")
            assert got == [(plan.node_ids[0], "1" if held == ["0"] else "0"), (plan.node_ids[1], "0"), (plan.node_ids[1], "1"),
                           (plan.node_ids[2], "0"), (plan.node_ids[2], "1")]  # fmt: skip
            assert got[0][1] not in held
        # the other job's reservation was never touched
        assert ray.get(gpu_ids.options(scheduling_strategy=PlacementGroupSchedulingStrategy(other, placement_group_bundle_index=0)).remote()) == held
    finally:
        remove_placement_group(other)
    assert_no_leaks()


def test_the_cli_places_and_launches_beside_another_job_with_available(local_ray: LocalRayCluster, tmp_path) -> None:
    model = tmp_path / "beside.yaml"
    model.write_text("cluster:\n  component_placement:\n    a: {node_group: train, placement: 0-3}\n")
    other = hold_gpus(1, 2)
    try:
        dry = CliRunner().invoke(main, ["launch", str(model), "--ray", local_ray.address, "--available"], catch_exceptions=False)
        assert dry.exit_code == 0, dry.output
        assert "scheme: labels" in dry.output and "free GPUs only" in dry.output
        result = CliRunner().invoke(main, ["launch", str(model), "--ray", local_ray.address, "--available", "--run"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert "4 of 4 processes ran on exactly their planned node and devices; reservation released" in result.output
    finally:
        remove_placement_group(other)
    assert_no_leaks()
