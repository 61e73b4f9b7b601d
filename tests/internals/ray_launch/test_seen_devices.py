"""What a launched process sees is what its record says, for every kind of placement: real Ray
actors on a simulated 3-node cluster (logical GPUs) report their device variable, Ray's own view
of their GPUs, their EGL and NUMA variables and the CPUs they may run on.

Measured, per kind (``[...]`` is the record's ``visible_accelerators``):

* GPU processes, one or several GPUs, collocated or not: ``CUDA_VISIBLE_DEVICES`` is their own
  GPUs (``"1"``, ``"0,2"``); the bundle standing for each of those GPUs holds exactly it in Ray.
* node-level processes on a GPU node, and robot processes: every GPU of their node (``"0,1,2,3"``),
  RLinf's meaning; ``""`` with ``hide_accelerators``; ``""`` on a node without GPUs.
* everywhere: Ray read the same devices from the worker's environment when the process started
  (``original_visible_accelerator_ids``), and ``ray.get_gpu_ids()`` is ``[]``: the actor itself
  asks Ray for no GPU (the placement group holds them). Asking for a sliver of its first GPU would
  not help: Ray maps its slot through the process's own device list, so a process on GPUs 1 and 3
  would be told ``['3']`` (measured with Ray 2.60).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
import ray
from ray_leaks import live_groups, local_ray_fixtures

from solver_placement import Cluster, PlacementSpec, solve, verify
from solver_placement._cluster.ranks import parse_rank_list
from solver_placement._ray_launch.probe import probe_bundles
from solver_placement._ray_launch.reserve import reserve

#: The CPUs this machine lets processes use: node 0's two "NUMA nodes" below split them.
CPUS = sorted(os.sched_getaffinity(0))

pytestmark = [pytest.mark.ray, pytest.mark.skipif(len(CPUS) < 2, reason="binding to two NUMA halves needs two CPUs")]

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

TOPOLOGY = [
    {"numa_nodes": [0, 0, 1, 1], "numa_cpus": {0: CPUS[: len(CPUS) // 2], 1: CPUS[len(CPUS) // 2 :]}, "egl_devices": [2, 3, 0, 1]},
    {"numa_nodes": [0, 0, 0, 0], "numa_cpus": {0: CPUS}},
    None,
]
MODEL = Cluster(
    3,
    [4, 4, 0],
    node_groups=[
        {"label": "gpu", "node_ranks": "0-1"},
        {"label": "robot", "node_ranks": 1, "hardware": {"type": "franka", "configs": [{"node_rank": 1, "robot_ip": "10.0.0.9"}]}},
        {"label": "cpu", "node_ranks": 2},
    ],
    gpu_topology=TOPOLOGY,
)
EVERY_KIND = {
    "actor": {"node_group": "gpu", "placement": "0-7", "numa_bind": True, "egl_device": True},
    "rollout": {"node_group": "gpu", "resources": "0-7", "hardware_per_process": 2, "stride": 2, "collocate_with": "actor"},
    "engine": {"node_group": "gpu", "placement": "4-7:0-1", "numa_bind": True},
    "env": {"node_group": "node", "placement": "0-2", "egl_device": True},
    "quiet_env": {"node_group": "node", "placement": "0-1", "hide_accelerators": True},
    "robot": {"node_group": "robot", "placement": "0:0-1"},
    "cpu": {"node_group": "cpu", "placement": "0:0-1"},
}
REPORTED = ("MUJOCO_EGL_DEVICE_ID", "EGL_DEVICE_ID", "NUMA_NODES", "NUMA_CPUS")


class Seen:
    """Reports what the process sees, from the inside."""

    def report(self) -> dict[str, Any]:
        context = ray.get_runtime_context()
        return {
            "node": context.get_node_id(),
            "devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "ray_gpu_ids": [str(g) for g in ray.get_gpu_ids()],
            "ray_accelerator_ids": context.get_accelerator_ids().get("GPU", []),
            "ray_startup_view": ray._private.worker.global_worker.original_visible_accelerator_ids.get("GPU"),
            "env": {key: os.environ.get(key) for key in REPORTED},
            "cpus": sorted(os.sched_getaffinity(0)),
        }


local_ray, removing_leaks = local_ray_fixtures(MODEL, cpus_per_node=16)


@pytest.fixture(scope="module")
def solution():
    solved = solve(PlacementSpec.build(MODEL, EVERY_KIND))
    verify(solved.spec, solved.placements_by_component())
    return solved


def _expected_cpus(record: Any) -> list[int]:
    return parse_rank_list(record.env["NUMA_CPUS"], "CPU list", "record").tolist() if "NUMA_CPUS" in record.env else CPUS


@pytest.mark.parametrize("env_in_constructor", [False, True], ids=["runtime_env", "env_in_constructor"])
def test_every_launched_process_sees_exactly_its_record(local_ray, solution, env_in_constructor: bool) -> None:
    with reserve(solution, cpus_per_process=0.1) as reservation:
        nodes = reservation.plan.node_ids
        for name in EVERY_KIND:
            group = reservation.launch(name, Seen, env_in_constructor=env_in_constructor)
            for record, seen in zip(solution.placements(name), group.execute_all("report"), strict=True):
                where = f"{name} rank {record.rank}"
                assert seen["node"] == nodes[record.cluster_node_rank], where
                assert seen["devices"] == ",".join(record.visible_accelerators), where
                assert {key: value for key, value in seen["env"].items() if value is not None} == record.env, where
                assert seen["cpus"] == _expected_cpus(record), where
                assert seen["ray_gpu_ids"] == [] and seen["ray_accelerator_ids"] == [], where  # the reservation holds the GPUs
                if not env_in_constructor:  # the variables were in place before the worker process started
                    assert seen["ray_startup_view"] == record.visible_accelerators, where
            group.shutdown()
    assert live_groups() == []


def test_ray_holds_each_gpu_process_s_own_gpus_in_the_bundles_it_stands_on(local_ray, solution) -> None:
    with reserve(solution, cpus_per_process=0.1) as reservation:
        plan = reservation.plan
        held = probe_bundles(plan, reservation.placement_groups, timeout_s=60).gpus
        bundle_of = {(bundle.node_rank, bundle.item): index for index, bundle in enumerate(plan.bundles)}
        for name in ("actor", "rollout", "engine"):
            for record in solution.placements(name):
                ray_view = [g for gpu in record.local_hardware_ranks for g in held[bundle_of[(record.cluster_node_rank, f"gpu {gpu}")]]]
                assert ray_view == record.visible_accelerators, f"{name} rank {record.rank}"
    assert live_groups() == []


def test_records_made_with_shared_gpus_launch_as_they_read(local_ray, solution) -> None:
    shared = {"actor": solution.placements("actor", isolate_accelerator=False)}
    with reserve(shared, MODEL, cpus_per_process=0.1) as reservation:
        seen = reservation.launch("actor", Seen).execute_all("report")
    assert [s["devices"] for s in seen] == ["0,1,2,3"] * 8
    assert [s["env"]["MUJOCO_EGL_DEVICE_ID"] for s in seen] == [p.env["MUJOCO_EGL_DEVICE_ID"] for p in shared["actor"]] == ["2", "3", "0", "1", "0", "1", "2", "3"]
    assert [s["cpus"] for s in seen] == [_expected_cpus(p) for p in shared["actor"]]
    assert live_groups() == []
