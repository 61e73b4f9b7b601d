"""Issue 35 item 3: a node group's ``env_configs`` may not set what the plan decided (devices,
ranks, CPU binding) or choose code the workers run; each such name is refused while the config is
read, naming the group, the entry, the variable and why. Every other name passes as configured."""

from __future__ import annotations

from typing import Any

import pytest

from solver_placement import Cluster, PlacementConfigError, solve
from solver_placement._cluster.worker_env import CODE, DEVICE_SELECTION, GROUP_MAY_SET, PLANNED
from solver_placement._ray_launch.launch_plan import DEVICE_ENV, NODE_RANK_LABEL, RayNode, to_ray

ENTRY = "node group 'trainers': env_configs[1] (node_ranks 2-3): env var "


def cluster_with(env_vars: Any) -> Cluster:
    """Group ``trainers`` giving ``env_vars`` to its second env_configs entry (nodes 2-3)."""
    return Cluster(4, 2, node_groups=[{"label": "trainers", "node_ranks": "0-3", "env_configs": [
        {"node_ranks": "0-1", "env_vars": [{"NCCL_DEBUG": "INFO"}]},
        {"node_ranks": "2-3", "env_vars": env_vars},
    ]}])  # fmt: skip


REFUSED = {
    "NUMA_CPUS": "the plan sets it for every worker",
    "NUMA_NODES": "numa_bind and egl_device are the component keys",
    "EGL_DEVICE_ID": "the plan sets it",
    "MASTER_PORT": "the plan sets it",
    "CUDA_VISIBLE_DEVICES": "choose devices beside the plan's",
    "HIP_VISIBLE_DEVICES": "choose devices beside the plan's",
    "ROCR_VISIBLE_DEVICES": "ROCm filters the GPUs below HIP_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL": "ROCm's older device filter",
    "RAY_EXPERIMENTAL_NOSET_HIP_VISIBLE_DEVICES": "Ray's flag for the device variable",
    "PYTHONPATH": "imports a sitecustomize.py",
    "LD_PRELOAD": "loads that library first",
    "PYTHONUSERBASE": "usercustomize.py",
    "PYTHONHOME": "standard library",
}


@pytest.mark.parametrize("form", ["rlinf-list", "mapping"])
@pytest.mark.parametrize(("name", "why"), REFUSED.items(), ids=list(REFUSED))
def test_a_variable_the_plan_sets_or_that_picks_devices_or_code_is_refused_naming_group_and_reason(name: str, why: str, form: str) -> None:
    env_vars = [{"NCCL_SOCKET_IFNAME": "eth0"}, {name: "0"}] if form == "rlinf-list" else {"NCCL_SOCKET_IFNAME": "eth0", name: "0"}
    with pytest.raises(PlacementConfigError) as info:
        cluster_with(env_vars)
    assert str(info.value).startswith(f"{ENTRY}{name!r} cannot be set in env_configs: ") and why in str(info.value)
    if name in CODE:
        assert "python_interpreter_path" in str(info.value)


def test_cuda_device_order_is_allowed_only_as_the_order_of_the_plan_s_gpu_ids() -> None:
    with pytest.raises(PlacementConfigError, match=r"only CUDA_DEVICE_ORDER=PCI_BUS_ID keeps them, not 'FASTEST_FIRST'"):
        cluster_with({"CUDA_DEVICE_ORDER": "FASTEST_FIRST"})
    cluster = cluster_with({"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "PATH": "/opt/bin:/usr/bin", "LD_LIBRARY_PATH": "/opt/cuda/lib64", "pythonpath": "x"})
    assert dict(cluster.node_groups["trainers"].env_configs[1].env_vars) == {
        "CUDA_DEVICE_ORDER": "PCI_BUS_ID", "PATH": "/opt/bin:/usr/bin", "LD_LIBRARY_PATH": "/opt/cuda/lib64", "pythonpath": "x",
    }  # fmt: skip


def test_every_variable_the_launch_sets_is_one_env_configs_cannot_set() -> None:
    """The refused names are written in ``_cluster`` (below the launch); this keeps them in step
    with what the launch really sets, for NUMA-bound, EGL, robot and CPU processes and every vendor."""
    model = Cluster(2, [2, 0], node_groups=[
        {"label": "gpu", "node_ranks": 0},
        {"label": "robot", "node_ranks": 1, "hardware": {"type": "franka", "configs": [{"node_rank": 1, "robot_ip": "10.0.0.9"}]}},
    ], gpu_topology=[{"numa_nodes": [0, 0], "numa_cpus": {0: "0-3"}}, None])  # fmt: skip
    solution = solve({"cluster": {"component_placement": {
        "actor": {"node_group": "gpu", "placement": "0-1", "numa_bind": True, "egl_device": True},
        "robot": {"node_group": "robot", "placement": "0:0"},
    }}}, cluster=model)  # fmt: skip
    nodes = [RayNode(f"{n:056x}", f"10.0.0.{n}", {"CPU": 8.0, "GPU": 2.0, "franka": 1.0}, {NODE_RANK_LABEL: str(n)}) for n in range(2)]
    plan = to_ray(solution.placements_by_component(), solution.cluster, nodes).with_master_ports({"actor": 29500, "robot": 29501})
    launched = {name for processes in plan.processes.values() for process in processes for name in process.env}
    vendors = {name for pair in DEVICE_ENV.values() for name in pair}
    assert {"NUMA_CPUS", "EGL_DEVICE_ID", "HARDWARE_CONFIGS", "MASTER_PORT"} <= launched
    assert launched | vendors <= PLANNED | set(DEVICE_SELECTION) | GROUP_MAY_SET


def test_a_group_s_thread_count_replaces_the_plan_s_default_as_in_rlinf() -> None:
    """RLinf's isaaclab example sets OMP_NUM_THREADS: 32 for its rollout group; RLinf never sets it itself."""
    model = cluster_with([{"OMP_NUM_THREADS": 32}])
    solution = solve({"cluster": {"component_placement": {"a": {"node_group": "trainers", "placement": "0-7"}}}}, cluster=model)
    nodes = [RayNode(f"{n:056x}", f"10.0.0.{n}", {"CPU": 8.0, "GPU": 2.0}, {NODE_RANK_LABEL: str(n)}) for n in range(4)]
    processes = to_ray(solution.placements_by_component(), solution.cluster, nodes).processes["a"]
    assert [process.env["OMP_NUM_THREADS"] for process in processes] == ["1"] * 4 + ["32"] * 4  # nodes 0-1: the process's CPUs
