"""ModelParallelComponentPlacement.has_dedicated_inference_for_role, RLinf's per-role question:
``actor`` -> has_dedicated_actor_inference, ``critic`` -> has_dedicated_critic_inference, both true
only in DISAGGREGATED or AUTO mode with the inference GPUs placed (rlinf/utils/placement.py)."""

from __future__ import annotations

import pytest

from solver_placement import ModelParallelComponentPlacement, PlacementConfigError


def job(placement: dict[str, str]) -> dict[str, object]:
    return {
        "cluster": {"num_nodes": 2, "num_gpus_per_node": 8, "component_placement": placement},
        "algorithm": {"recompute_logprobs": True},
    }


def test_disaggregated_roles():
    placement = {"actor": "0-3", "critic": "4-5", "reward": "6-7", "rollout": "8-11", "actor_inference": "12-13", "critic_inference": "14-15"}
    cp = ModelParallelComponentPlacement(job(placement))
    assert cp.has_dedicated_inference_for_role("actor") and cp.has_dedicated_inference_for_role("critic")


def test_collocated_roles():
    cp = ModelParallelComponentPlacement(job({"actor,rollout,reward": "all"}))
    assert not cp.has_dedicated_inference_for_role("actor") and not cp.has_dedicated_inference_for_role("critic")


def test_unknown_role():
    # RLinf: "Unknown role reward while calling has_dedicated_inference_for_role"
    cp = ModelParallelComponentPlacement(job({"actor,rollout,reward": "all"}))
    with pytest.raises(PlacementConfigError, match="unknown role 'reward'"):
        cp.has_dedicated_inference_for_role("reward")
