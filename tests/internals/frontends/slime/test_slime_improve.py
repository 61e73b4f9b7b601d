"""The solver's layout for a slime job, and the slime flags that realise it (checked by predicting
them) or what slime cannot be asked for."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from solver_placement._cli import main
from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import PlacementConfigError
from solver_placement._prediction.frameworks import Improvement
from solver_placement._prediction.predict import improve


def improved(flags: str, *gpus: int) -> Improvement:
    return improve("slime", flags.split(), cluster=Cluster(num_nodes=len(gpus), num_gpus_per_node=list(gpus)))


def layout(improvement: Improvement) -> dict[str, list[tuple[int, list[int]]]]:
    solution = improvement.solution
    return {name: [(p.cluster_node_rank, p.local_hardware_ranks) for p in solution.placements(name)] for name in solution.components}


def test_slimes_flags_realise_the_solvers_layout_once_the_node_size_is_stated() -> None:
    improvement = improved("--actor-num-gpus-per-node 4 --rollout-num-gpus 4 --rollout-num-gpus-per-engine 2", 4, 4)
    assert layout(improvement) == {"actor": [(0, [g]) for g in range(4)], "rollout": [(1, [g]) for g in range(4)]}
    assert improvement.arguments == ("--actor-num-gpus-per-node", "4", "--rollout-num-gpus", "4", "--rollout-num-gpus-per-engine", "2", "--num-gpus-per-node", "4")
    assert improvement.cannot_express == ()


def test_idle_rollout_gpus_are_given_back() -> None:
    improvement = improved("--actor-num-gpus-per-node 4 --rollout-num-gpus 5 --rollout-num-gpus-per-engine 2 --num-gpus-per-node 4", 4, 4, 4)
    assert improvement.arguments is not None and improvement.arguments[-2:] == ("--rollout-num-gpus", "4")
    assert len(layout(improvement)["rollout"]) == 4


def test_colocated_roles_are_nested_as_slime_nests_them() -> None:
    improvement = improved("--actor-num-nodes 2 --colocate --rollout-num-gpus-per-engine 4 --advantage-estimator ppo", 8, 8)
    placed = layout(improvement)
    assert placed["critic"] == placed["actor"] and sorted(placed["rollout"]) == sorted(placed["actor"])
    assert improvement.arguments == ("--actor-num-nodes", "2", "--colocate", "--rollout-num-gpus-per-engine", "4", "--advantage-estimator", "ppo")


def test_a_layout_slime_cannot_be_asked_for_is_said_so() -> None:
    """The solver keeps whole engines on one node; slime's rollout always follows the actor's bundles."""
    improvement = improved("--actor-num-gpus-per-node 2 --rollout-num-gpus 4 --rollout-num-gpus-per-engine 4 --num-gpus-per-node 4", 4, 4)
    assert improvement.arguments is None
    assert any("slime would not place it so" in reason for reason in improvement.cannot_express)
    assert len({node for node, _ in layout(improvement)["rollout"]}) == 1


def test_uneven_nodes_are_named() -> None:
    improvement = improved("--actor-num-gpus-per-node 2 --rollout-num-gpus 8 --rollout-num-gpus-per-engine 2", 4, 8)
    assert improvement.cannot_express == ("slime assumes every node has --num-gpus-per-node GPUs; these nodes have 4, 8",)


def test_debug_modes_are_not_improved() -> None:
    with pytest.raises(PlacementConfigError, match="debug modes"):
        improved("--debug-train-only --actor-num-gpus-per-node 4", 8)


def test_the_command_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text("cluster:\n  num_nodes: 2\n  num_gpus_per_node: 4\n")
    runner = CliRunner()
    wrong = runner.invoke(main, ["predict", "slime", "--cluster", str(cluster), "--", "--actor-num-gpus-per-node", "2", "--rollout-num-gpus", "4"])
    assert wrong.exit_code != 0 and "is told node 0's address as its host" in wrong.output
    better = runner.invoke(main, ["predict", "slime", "--cluster", str(cluster), "--better", "--", "--actor-num-gpus-per-node", "4", "--rollout-num-gpus", "4"])
    assert better.exit_code == 0, better.output
    assert "Flags that make the framework place it so: --actor-num-gpus-per-node 4 --rollout-num-gpus 4 --num-gpus-per-node 4" in better.output
