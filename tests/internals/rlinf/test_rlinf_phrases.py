"""Model-parallel refusals carry RLinf's sentence for the same rule next to our own message.

Code written against RLinf matches its wording (RLinf's own ``test_placement.py`` does:
``match="Actor GPUs"``, ``"Reward GPUs"``, ``"Inference TP size"``), so each of these errors is an
``AssertionError`` whose message holds RLinf's sentence; our message, which names the setting to
change, comes first. The configs of the first three cases are those of RLinf's three tests
(``test_missing_actor_gpus_raises``, ``test_reward_required_raises``,
``test_inference_tp_size_constraint``), run on both libraries with RLinf's own cluster objects.
"""

from __future__ import annotations

from typing import Any

import pytest
import rlinf_shim
from omegaconf import OmegaConf
from rlinf_builders import fake_cluster, rlinf_cluster

import solver_placement
from solver_placement import PlacementConfigError


@pytest.fixture(scope="module")
def rl() -> Any:
    return rlinf_shim.load()


def config(placement: dict[str, str], actor_tp: int = 2, rollout_tp: int = 2, inference_tp: int | None = None) -> Any:
    sections: dict[str, Any] = {
        "cluster": {"num_nodes": 1, "component_placement": placement},
        "actor": {"model": {"tensor_model_parallel_size": actor_tp, "context_parallel_size": 1, "pipeline_model_parallel_size": 1}},
        "rollout": {"tensor_parallel_size": rollout_tp, "pipeline_parallel_size": 1},
        "algorithm": {"recompute_logprobs": True},
    }
    if inference_tp is not None:
        sections["inference"] = {"model": {"tensor_model_parallel_size": inference_tp, "pipeline_model_parallel_size": 1}}
    return OmegaConf.create(sections)


DISAGGREGATED = {"actor": "0-1", "rollout": "2-5", "inference": "6-7", "reward": "2-5"}

#: (id, class, config, GPUs, RLinf's sentence, our words)
CASES = [
    ("missing-actor", "ModelParallelComponentPlacement", config({"rollout,reward": "0-3"}), 4,
     "Actor GPUs must be specified in the component_placement config.", "has no 'actor' component"),
    ("missing-reward", "ModelParallelComponentPlacement", config({"actor": "0-1", "rollout": "2-3"}), 4,
     "Reward GPUs must be specified in the component_placement config.", "has no 'reward' component"),
    ("inference-tp", "ModelParallelComponentPlacement", config(DISAGGREGATED, inference_tp=4), 8,
     "Inference TP size 4 must be less than or equal to Inference world size 2.", "inference.model.tensor_model_parallel_size"),
    ("missing-rollout", "ModelParallelComponentPlacement", config({"actor,reward": "0-3"}), 4,
     "Rollout GPUs must be specified in the component_placement config.", "has no 'rollout' component"),
    ("actor-tp", "ModelParallelComponentPlacement", config({"actor": "0-1", "rollout": "2-5", "reward": "2-5"}, actor_tp=4), 8,
     "Actor TP size 4 must be less than or equal to Actor world size 2.", "actor.model.tensor_model_parallel_size"),
    ("rollout-tp", "ModelParallelComponentPlacement", config({"actor": "0-3", "rollout": "4-5", "reward": "4-5"}, rollout_tp=4), 8,
     "Rollout TP size 4 must be less than or equal to Rollout world size 2.", "rollout.tensor_parallel_size"),
    ("eval-missing-reward", "ModelParallelEvalComponentPlacement", config({"rollout": "0-3"}), 4,
     "Reward GPUs must be specified in the component_placement config.", "needs rollout and reward"),
    ("eval-rollout-tp", "ModelParallelEvalComponentPlacement", config({"rollout,reward": "0-1"}, rollout_tp=4), 4,
     "Rollout TP size 4 must be less than or equal to Rollout world size 2.", "rollout.tensor_parallel_size"),
]


@pytest.mark.parametrize("fake", [False, True], ids=["rlinf-Cluster", "rlinf-test-FakeCluster"])
@pytest.mark.parametrize(("kind", "job", "gpus", "sentence", "ours_words"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_refusal_holds_rlinfs_sentence(rl: Any, fake: bool, kind: str, job: Any, gpus: int, sentence: str, ours_words: str) -> None:
    cluster = rlinf_cluster(rl, job.cluster, [gpus])
    cluster = fake_cluster(cluster) if fake else cluster
    with pytest.raises(AssertionError) as theirs:
        getattr(rl, kind)(job, cluster)
    assert sentence in str(theirs.value)  # the sentence is RLinf's, verbatim
    with pytest.raises(PlacementConfigError) as ours:
        getattr(solver_placement, kind)(job, cluster)
    message = str(ours.value)
    assert isinstance(ours.value, AssertionError) and sentence in message
    assert message.index(ours_words) < message.index(sentence)  # our words first, RLinf's sentence after
