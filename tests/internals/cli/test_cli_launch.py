"""``solver-placement launch`` (dry run and a real run), the live-cluster options (``--ray``,
``--local``, ``--group-by-label``) on the commands that take a model, and ``explain`` with suggestions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray
from click.testing import CliRunner
from helpers import ROOT
from ray.util import placement_group_table

from solver_placement import Cluster
from solver_placement._cli import main
from solver_placement._ray_launch.session import LocalRayCluster

pytestmark = pytest.mark.ray

#: A running Ray cluster the commands attach to with --ray: two GPU models, a robot resource, zones.
LIVE = Cluster(
    num_nodes=3,
    num_gpus_per_node=[4, 2, 0],
    accelerator_model=["A800", "H100", None],
    node_groups=[{"label": "arm", "node_ranks": 2, "hardware": {"type": "franka", "configs": [{"node_rank": 2, "serial": "a"}, {"node_rank": 2, "serial": "b"}]}}],
    node_labels=[{"zone": "east"}, {"zone": "east"}, {"zone": "west"}],
)
#: A model that names only its components: the live cluster supplies nodes, GPUs and groups.
COMPONENTS_ONLY = """
cluster:
  component_placement:
    actor: {node_group: east, placement: 0-5}
    env: {node_group: franka, placement: 0-1}
"""
#: A model that states a cluster unlike LIVE: node 1 with 4 GPUs, node 0 with H100s, no robots.
STATED_OTHER = """
cluster:
  num_nodes: 3
  num_gpus_per_node: [4, 4, 0]
  accelerator_model: [H100, H100, null]
  node_groups: [{label: arm, node_ranks: 2, hardware: {type: franka, configs: [{node_rank: 2, serial: a}, {node_rank: 2, serial: b}, {node_rank: 2, serial: c}]}}]
  component_placement:
    actor: 0-3
"""


def run(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def live() -> Iterator[str]:
    """The address of a simulated 3-node Ray cluster this test process is not connected to."""
    with LocalRayCluster(LIVE, cpus_per_node=4) as cluster:
        yield cluster.address


def placement_groups_on(address: str) -> list[str]:
    """Names of the placement groups not removed on the cluster at ``address``."""
    ray.init(address=address, log_to_driver=False)
    try:
        return [pg["name"] for pg in placement_group_table().values() if pg["state"] != "REMOVED"]
    finally:
        ray.shutdown()


def test_a_model_naming_only_components_is_solved_and_launched_on_the_live_cluster(live: str, tmp_path: Path) -> None:
    model = tmp_path / "components.yaml"
    model.write_text(COMPONENTS_ONLY)
    solved = run("solve", model, "--ray", live, "--group-by-label", "zone", "--format", "json")
    assert solved.exit_code == 0, solved.output
    components = json.loads(solved.output)["components"]
    assert [(p["cluster_node_rank"], p["local_accelerator_rank"]) for p in components["actor"]] == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1)]
    assert [(p["cluster_node_rank"], p["hardware_type"], p["local_hardware_ranks"]) for p in components["env"]] == [(2, "franka", [0]), (2, "franka", [1])]
    dry = json.loads(run("launch", model, "--ray", live, "--group-by-label", "zone", "--format", "json").output)
    assert dry["node_ids"][0] != "model-node-0" and len(dry["bundles"]) == 8  # planned on the live nodes
    launched = run("launch", model, "--ray", live, "--group-by-label", "zone", "--run")
    assert launched.exit_code == 0, launched.output
    assert "8 of 8 processes ran on exactly their planned node and devices; reservation released" in launched.output
    assert not ray.is_initialized() and placement_groups_on(live) == []


def test_a_stated_cluster_unlike_the_live_one_fails_before_reserving_with_every_difference(live: str, tmp_path: Path) -> None:
    model = tmp_path / "stated.yaml"
    model.write_text(STATED_OTHER)
    result = CliRunner().invoke(main, ["launch", str(model), "--ray", live, "--run"])
    assert result.exit_code == 2, result.output
    assert "differs from the cluster model in 3 ways: " in result.output
    for difference in ("node 0 (Ray node", "has A800 GPUs, the model H100", "has 2 GPUs, the model 4", "has 2 franka, the model 3"):
        assert difference in result.output
    assert not ray.is_initialized() and placement_groups_on(live) == []
    assert run("solve", model, "cluster.num_gpus_per_node=[4,2,0]", "cluster.accelerator_model=[A800,H100,null]",
               "cluster.node_groups=[]", "--ray", live).exit_code == 0  # fmt: skip


def test_local_starts_an_embedded_ray_shaped_like_a_stated_model(tmp_path: Path) -> None:
    model = tmp_path / "small.yaml"
    model.write_text("cluster:\n  num_nodes: 1\n  num_gpus_per_node: 2\n  component_placement:\n    a: 0-1\n")
    result = run("launch", model, "--local", "--run")
    assert result.exit_code == 0, result.output
    assert "2 of 2 processes ran on exactly their planned node and devices" in result.output
    assert not ray.is_initialized()


def test_dry_run_prints_the_plan_without_ray() -> None:
    result = run("launch", ROOT / "models" / "quickstart.yaml", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "20 bundles in one placement group, 36 processes" in result.output
    plan = json.loads(run("launch", ROOT / "models" / "quickstart.yaml", "--format", "json").output)
    rollout = plan["processes"]["rollout"]
    assert [p["env"]["CUDA_VISIBLE_DEVICES"] for p in rollout[:4]] == ["0,2", "1,3", "4,6", "5,7"]
    assert {p["env"]["RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"] for p in rollout} == {"1"}
    assert [p["env"]["CUDA_VISIBLE_DEVICES"] for p in plan["processes"]["env"]] == [""] * 4
    assert len(plan["bundles"]) == 20 and plan["bundles"][0]["resources"] == {"CPU": 4.0, "GPU": 1.0}  # actor 0, rollout 0, reward 0-1


def test_run_launches_on_an_embedded_ray_and_checks_every_process(tmp_path: Path) -> None:
    model = tmp_path / "small.yaml"
    model.write_text(
        "cluster:\n  num_nodes: 2\n  num_gpus_per_node: [2, 0]\n  component_placement:\n"
        "    rollout:\n      resources: all\n      hardware_per_process: 2\n"
        "    env:\n      node_group: node\n      placement: '1:0-1'\n"
    )
    result = run("launch", model, "--run")
    assert result.exit_code == 0, result.output
    assert "3 of 3 processes ran on exactly their planned node and devices; reservation released" in result.output
    assert "0,1" in result.output


def test_explain_suggests_a_checked_fix(tmp_path: Path) -> None:
    model = tmp_path / "tight.yaml"
    model.write_text(
        "cluster:\n  num_nodes: 2\n  num_gpus_per_node: 4\n  component_placement:\n"
        "    actor: 0-3\n    rollout:\n      processes: 6\n      exclusive_with: [actor]\n"
    )
    result = CliRunner().invoke(main, ["explain", str(model)])
    assert result.exit_code == 3
    assert "rollout is exclusive with actor" in result.output
    assert "suggestion: rollout: processes 4 instead of 6 fits" in result.output


def test_auto_prints_the_reference_split_and_a_ready_block() -> None:
    result = run("auto", ROOT / "models" / "auto_reference_16x8.yaml", "--top-k", "2")
    assert result.exit_code == 0, result.output
    assert "disaggregated, predicted 289.096 s per iteration (proven optimal)" in result.output
    assert "  rollout: 0-79\n  inference: 80-95\n  actor: 96-127" in result.output
    block = run("auto", ROOT / "models" / "auto_reference_16x8.yaml", "--format", "yaml").output
    assert "component_placement:\n    rollout: 0-79" in block
