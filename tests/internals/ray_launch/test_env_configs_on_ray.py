"""Issue 35 item 3 in real Ray workers: what a node group's ``env_configs`` gives a worker, read
inside the worker (its ``os.environ`` and CPU affinity). Allowed settings arrive as configured; a
component without ``numa_bind`` runs on every CPU of its node, not on a config's ``NUMA_CPUS``
(which, with ``PYTHONPATH``, ``LD_PRELOAD`` and the AMD device filters, the config cannot set any
more: refused before anything is reserved); ``PYTHONPATH`` is whatever the node's Ray inherited."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
import ray
from ray_leaks import live_groups, local_ray_fixtures

from solver_placement import Cluster, PlacementConfigError, PlacementSpec, solve
from solver_placement._cluster.ranks import parse_rank_list
from solver_placement._ray_launch.reserve import reserve

CPUS = sorted(os.sched_getaffinity(0))

pytestmark = [pytest.mark.ray, pytest.mark.skipif(len(CPUS) < 2, reason="a NUMA-bound worker beside a free one needs two CPUs")]

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

ALLOWED = {"NCCL_DEBUG": "INFO", "CUDA_DEVICE_ORDER": "PCI_BUS_ID", "LD_LIBRARY_PATH": "/opt/cuda/lib64", "pythonpath": "not Python's"}
GROUP = {"label": "gpu", "node_ranks": 0, "env_configs": [{"node_ranks": "all", "env_vars": ALLOWED}]}
TOPOLOGY = [{"numa_nodes": [0, 0, 1, 1], "numa_cpus": {0: CPUS[: len(CPUS) // 2], 1: CPUS[len(CPUS) // 2 :]}}]
MODEL = Cluster(1, 4, node_groups=[GROUP], gpu_topology=TOPOLOGY)
COMPONENTS = {"free": {"node_group": "gpu", "placement": "0-1"}, "bound": {"node_group": "gpu", "placement": "2-3", "numa_bind": True}}
REPORTED = (*ALLOWED, "NUMA_CPUS", "NUMA_NODES", "PYTHONPATH", "LD_PRELOAD", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")


class Inside:
    """Reports what the worker sees, from the inside."""

    def report(self) -> dict[str, Any]:
        return {"env": {key: os.environ.get(key) for key in REPORTED}, "cpus": sorted(os.sched_getaffinity(0))}


local_ray, removing_leaks = local_ray_fixtures(MODEL, cpus_per_node=16)


def test_allowed_settings_arrive_and_only_numa_bound_workers_are_bound(local_ray) -> None:
    solution = solve(PlacementSpec.build(MODEL, COMPONENTS))
    inherited = {key: os.environ.get(key) for key in ("PYTHONPATH", "LD_PRELOAD")}
    with reserve(solution, cpus_per_process=0.1) as reservation:
        for name in COMPONENTS:
            group = reservation.launch(name, Inside)
            for record, seen in zip(solution.placements(name), group.execute_all("report"), strict=True):
                where = f"{name} rank {record.rank}"
                assert {key: seen["env"][key] for key in ALLOWED} == ALLOWED, where
                assert seen["env"]["CUDA_VISIBLE_DEVICES"] == ",".join(record.visible_accelerators), where
                assert seen["env"]["ROCR_VISIBLE_DEVICES"] is None, where
                assert seen["env"]["PYTHONPATH"] == inherited["PYTHONPATH"] and seen["env"]["LD_PRELOAD"] == inherited["LD_PRELOAD"], where
                if name == "free":
                    assert seen["env"]["NUMA_CPUS"] is None and seen["cpus"] == CPUS, where
                else:
                    assert seen["cpus"] == parse_rank_list(record.env["NUMA_CPUS"], "CPU list", where).tolist() != CPUS, where
            group.shutdown()
    assert live_groups() == []


@pytest.mark.parametrize(
    "env_vars",
    [{"NUMA_CPUS": CPUS[0]}, {"PYTHONPATH": "/tmp/sitecustomize_here"}, {"LD_PRELOAD": "/tmp/x.so"}, {"ROCR_VISIBLE_DEVICES": "1"}, {"CUDA_DEVICE_ORDER": "FASTEST_FIRST"}],
    ids=["NUMA_CPUS", "PYTHONPATH", "LD_PRELOAD", "ROCR_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"],
)
def test_a_setting_that_changes_the_plan_or_chooses_code_never_reaches_ray(local_ray, env_vars: dict[str, Any]) -> None:
    group = {**GROUP, "env_configs": [{"node_ranks": "all", "env_vars": {**ALLOWED, **env_vars}}]}
    with pytest.raises(PlacementConfigError, match=rf"node group 'gpu': env_configs\[0\] \(node_ranks 0\): env var '{next(iter(env_vars))}' cannot be set"):
        Cluster(1, 4, node_groups=[group], gpu_topology=TOPOLOGY)
    assert live_groups() == []
