"""The environment keys (``hide_accelerators``, ``egl_device``, ``numa_bind``): what each record
says a process sees, that the verifier re-derives it, that the launch plan says the same, and that
a key which can do nothing is refused naming the component, the key and the rule."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from helpers import MODELS

from solver_placement import Cluster, PlacementConfigError, PlacementSpec, VerificationError, solve, verify
from solver_placement._ray_launch.launch_plan import stated_ray_nodes, to_ray
from solver_placement._replan import replan

TOPOLOGY = [
    {"numa_nodes": [0, 0, 1, 1], "numa_cpus": {0: "0-15", 1: "16-31"}, "egl_devices": [2, 3, 0, 1]},
    {"numa_nodes": [0, 0, 0, 0], "numa_cpus": {0: "0-7"}},
    None,
]
#: Every kind of process: GPUs (one and several, collocated), node-level on GPU nodes (seeing
#: them or hiding them), robots on a GPU node, and a CPU-only node.
CLUSTER = Cluster(
    3,
    [4, 4, 0],
    node_groups=[
        {"label": "gpu", "node_ranks": "0-1"},
        {"label": "robot", "node_ranks": 1, "hardware": {"type": "franka", "configs": [{"node_rank": 1, "robot_ip": "10.0.0.9"}]}},
        {"label": "cpu", "node_ranks": 2},
    ],
    gpu_topology=TOPOLOGY,
)
PLACEMENT: dict[str, Any] = {
    "actor": {"node_group": "gpu", "placement": "0-7", "numa_bind": True, "egl_device": True},
    "rollout": {"node_group": "gpu", "resources": "0-7", "hardware_per_process": 2, "stride": 2, "collocate_with": "actor", "numa_bind": True},
    "env": {"node_group": "node", "placement": "0-2", "egl_device": True},
    "quiet_env": {"node_group": "node", "placement": "0-1", "hide_accelerators": True},
    "robot": {"node_group": "robot", "placement": "0:0-1", "egl_device": True},
    "cpu": {"node_group": "cpu", "placement": "0:0-1"},
}


@pytest.fixture(scope="module")
def solution():
    solved = solve(PlacementSpec.build(CLUSTER, PLACEMENT))
    verify(solved.spec, solved.placements_by_component())
    return solved


def _seen(solution, name: str) -> list[tuple[int, list[str], dict[str, str]]]:
    return [(p.cluster_node_rank, p.visible_accelerators, p.env) for p in solution.placements(name)]


def test_gpu_processes_see_their_gpus_render_on_the_first_and_bind_to_its_numa_node(solution) -> None:
    actor = _seen(solution, "actor")
    assert [(node, visible) for node, visible, _ in actor] == [(r // 4, [str(r % 4)]) for r in range(8)]
    assert actor[0][2] == {"MUJOCO_EGL_DEVICE_ID": "2", "EGL_DEVICE_ID": "2", "NUMA_NODES": "0", "NUMA_CPUS": "0-15"}
    assert actor[3][2] == {"MUJOCO_EGL_DEVICE_ID": "1", "EGL_DEVICE_ID": "1", "NUMA_NODES": "1", "NUMA_CPUS": "16-31"}
    assert actor[5][2] == {"MUJOCO_EGL_DEVICE_ID": "1", "EGL_DEVICE_ID": "1", "NUMA_NODES": "0", "NUMA_CPUS": "0-7"}  # no egl_devices: CUDA id
    rollout = _seen(solution, "rollout")
    assert [(visible, env) for _, visible, env in rollout[:2]] == [
        (["0", "2"], {"NUMA_NODES": "0,1", "NUMA_CPUS": "0-31"}), (["1", "3"], {"NUMA_NODES": "0,1", "NUMA_CPUS": "0-31"})]


def test_processes_without_gpu_see_their_node_s_gpus_as_in_rlinf_unless_hidden(solution) -> None:
    egl = {"MUJOCO_EGL_DEVICE_ID": "2", "EGL_DEVICE_ID": "2"}
    assert _seen(solution, "env") == [(0, ["0", "1", "2", "3"], egl), (1, ["0", "1", "2", "3"], {**egl, "MUJOCO_EGL_DEVICE_ID": "0", "EGL_DEVICE_ID": "0"}), (2, [], {})]
    assert _seen(solution, "quiet_env") == [(0, [], {}), (1, [], {})]
    assert _seen(solution, "robot") == [(1, ["0", "1", "2", "3"], {"MUJOCO_EGL_DEVICE_ID": "0", "EGL_DEVICE_ID": "0"})] * 2
    assert _seen(solution, "cpu") == [(2, [], {})] * 2


def test_the_launch_plan_says_what_every_record_says(solution) -> None:
    records = solution.placements_by_component()
    plan = to_ray(records, CLUSTER, stated_ray_nodes(CLUSTER))
    for name, launches in plan.processes.items():
        for record, launch in zip(records[name], launches, strict=True):
            assert launch.env["CUDA_VISIBLE_DEVICES"] == ",".join(record.visible_accelerators), (name, record.rank)
            assert {key: launch.env[key] for key in record.env} == record.env, (name, record.rank)
            assert not {"MUJOCO_EGL_DEVICE_ID", "NUMA_CPUS"} & (set(launch.env) - set(record.env))


#: 16,768 processes: planned with the slow tests (CI); every other model plans in the fast tier.
AT_SCALE = {"synthetic_1024x8.yaml"}


@pytest.mark.parametrize(
    "model", [pytest.param(path, marks=[pytest.mark.slow] if path.name in AT_SCALE else []) for path in sorted(MODELS.glob("*.yaml"))], ids=lambda path: path.name
)
def test_every_model_s_plan_sets_the_devices_its_records_name(model) -> None:
    solved = solve(str(model))
    records = solved.placements_by_component()
    plan = to_ray(records, solved.cluster, stated_ray_nodes(solved.cluster), cpus_per_process=0.001)
    for name, launches in plan.processes.items():
        for record, launch in zip(records[name], launches, strict=True):
            device_variable = next(key for key in launch.env if key.endswith("VISIBLE_DEVICES") or key == "ZE_AFFINITY_MASK")
            assert launch.env[device_variable] == ",".join(record.visible_accelerators)


def test_isolate_accelerator_false_renders_each_gpu_process_on_its_own_gpu(solution) -> None:
    shared = solution.placements("actor", isolate_accelerator=False)
    assert [p.visible_accelerators for p in shared] == [["0", "1", "2", "3"]] * 8
    assert [p.env["MUJOCO_EGL_DEVICE_ID"] for p in shared[:4]] == ["2", "3", "0", "1"]  # RLinf: all "2" (the first visible)
    verify(solution.spec, {**solution.placements_by_component(), "actor": shared})


@pytest.mark.parametrize(
    ("component", "rank", "change", "violation"),
    [
        ("env", 0, {"visible_accelerators": []}, r"env rank 0: visible_accelerators \[\], expected \['0', '1', '2', '3'\] \(hide_accelerators: False\)"),
        ("quiet_env", 1, {"visible_accelerators": ["0"]}, r"quiet_env rank 1: visible_accelerators \['0'\], expected \[\] \(hide_accelerators: True\)"),
        ("actor", 0, {"env": {}}, r"actor rank 0: env \{\}, expected .*NUMA_CPUS.*\(egl_device: True, numa_bind: True\)"),
        ("cpu", 0, {"env": {"NUMA_CPUS": "0"}}, r"cpu rank 0: env \{'NUMA_CPUS': '0'\}, expected \{\}"),
        ("robot", 0, {"env": None}, r"robot rank 0: env None is not a mapping"),
    ],
)
def test_the_verifier_catches_a_record_that_says_otherwise(solution, component: str, rank: int, change: dict, violation: str) -> None:
    records = solution.placements_by_component()
    records[component][rank] = replace(records[component][rank], **change)
    with pytest.raises(VerificationError, match=violation):
        verify(solution.spec, records)


@pytest.mark.parametrize(
    ("component", "message"),
    [
        ({"node_group": "gpu", "placement": "0-3", "hide_accelerators": True}, r"component 'x': hide_accelerators hides GPUs from processes that hold none .* node group 'gpu'"),
        ({"node_group": "cpu", "placement": "0", "egl_device": True}, r"component 'x': egl_device .* no process can see one \(node group 'cpu' has no GPU\)"),
        ({"node_group": "node", "placement": "0", "egl_device": True, "hide_accelerators": True}, r"egl_device .* \(hide_accelerators hides the node GPUs from them\)"),
        ({"node_group": "robot", "placement": "0", "numa_bind": True}, r"component 'x': numa_bind binds a process to the NUMA nodes of its own GPUs, but its processes hold none"),
        ({"processes": 2, "numa_bind": "yes"}, r"component 'x': numa_bind must be true or false, not 'yes'"),
        ({"processes": 2, "hide_accelerator": True}, r"unknown key 'hide_accelerator'; did you mean 'hide_accelerators'"),
    ],
)
def test_a_key_that_can_do_nothing_here_is_refused(component: dict, message: str) -> None:
    with pytest.raises(PlacementConfigError, match=message):
        PlacementSpec.build(CLUSTER, {"x": component})


def test_numa_bind_needs_every_gpu_node_it_may_use_to_state_its_numa_nodes() -> None:
    cluster = Cluster(3, 4, gpu_topology=[TOPOLOGY[0], {"egl_devices": [0, 1, 2, 3]}, None])
    with pytest.raises(PlacementConfigError, match=r"component 'x': numa_bind .* states no numa_nodes for node 1-2 \(solver-placement gpu-topology"):
        PlacementSpec.build(cluster, {"x": {"processes": 4, "numa_bind": True}})
    PlacementSpec.build(cluster, {"x": {"processes": 4, "resources": "0-3", "numa_bind": True}})  # a window on node 0 only


def test_the_keys_place_nothing_differently(solution) -> None:
    plain = {name: {k: v for k, v in body.items() if k not in ("hide_accelerators", "egl_device", "numa_bind")} for name, body in PLACEMENT.items()}
    bare = solve(PlacementSpec.build(CLUSTER, plain))
    assert all((bare.assignment(n).hardware == solution.assignment(n).hardware).all() for n in PLACEMENT)


def test_the_keys_survive_a_replan() -> None:
    cluster = Cluster(3, 4, gpu_topology={"numa_nodes": [0, 0, 1, 1], "numa_cpus": {0: "0-7", 1: "8-15"}})
    keys = {"actor": {"numa_bind": True, "egl_device": True}, "env": {"hide_accelerators": True}}
    before = solve(PlacementSpec.build(cluster, {
        "actor": {"processes": 4, **keys["actor"]}, "env": {"node_group": "node", "processes": 2, **keys["env"]}}))  # fmt: skip
    after = replan(before, lost_nodes=[before.placements("actor")[0].cluster_node_rank])
    assert {name: after.spec.components[name].environment.as_config() for name in keys} == keys
    assert all(p.env["NUMA_CPUS"] in ("0-7", "8-15") for p in after.placements("actor"))
    verify(after.spec, after.placements_by_component())
