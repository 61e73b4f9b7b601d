"""The node-level model names conflicts only where it relaxes the spec."""

from __future__ import annotations

from helpers import MODELS, config

from solver_placement import PlacementSpec
from solver_placement._solver.counts.node_level import node_level_conflicts
from solver_placement._solver.options import SolverOptions


def _conflicts(source: object) -> list[str]:
    spec = PlacementSpec.from_config(source)
    return [statement.text for statement in node_level_conflicts(spec, spec.requests, SolverOptions(time_limit_s=20).start())]


def test_node_level_model_names_the_counting_conflict() -> None:
    assert _conflicts(MODELS / "infeasible" / "counting_exclusive.yaml") == [
        "actor needs 120 processes x 1 GPU in tensor-parallel groups of 8 (15 groups of 8 GPUs, each on one node)",
        "reward needs 9 processes x 1 GPU",
        "reward is exclusive with actor (no shared hardware)",
        "counting node by node: no split of their groups over the 16 nodes satisfies these",
    ]


def test_a_feasible_spec_has_no_node_level_conflict() -> None:
    placement = {"actor": {"processes": 120, "tensor_parallel_size": 8}, "reward": {"processes": 8, "exclusive_with": ["actor"]}}
    assert _conflicts(config(16, 8, placement)) == []


def test_no_claim_where_stage_one_is_not_a_relaxation() -> None:
    """TP groups required inside a rack may span nodes: stage 1's one-node groups prove nothing."""
    placement = {"tp": {"processes": 4, "tensor_parallel_size": 4, "topology": {"tensor_parallel": {"rack": "require"}}}}
    racks = [{"rack": "a"}, {"rack": "a"}]
    assert _conflicts(config(2, 2, placement, node_labels=racks)) == []
