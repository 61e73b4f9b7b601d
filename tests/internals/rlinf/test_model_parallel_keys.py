"""The two meanings of tensor_parallel_size: a component_placement entry (tp consecutive processes
per group, docs/guide.md "Both forms accept") versus RLinf's rollout section (GPUs per engine,
``rollout.tensor_parallel_size`` read by ``ModelParallelComponentPlacement.rollout_tp_size``).
A config that could mean either is refused with both meanings explained."""

from __future__ import annotations

from typing import Any

import pytest

from solver_placement import ComponentPlacement, ModelParallelComponentPlacement, PlacementConfigError
from solver_placement._frontends.rlinf import HybridComponentPlacement, ModelParallelEvalComponentPlacement


def job(placement: dict[str, Any], **sections: Any) -> dict[str, Any]:
    return {"cluster": {"num_nodes": 1, "num_gpus_per_node": 8, "component_placement": placement}, **sections}


ROLLOUT_TP2 = {"rollout": {"tensor_parallel_size": 2}}


@pytest.mark.parametrize(
    "placement, sections, key",
    [
        # a rank string plus tensor_parallel_size, and rollout.tensor_parallel_size: 2
        ({"actor": "0-7", "rollout": {"placement": "0-7", "tensor_parallel_size": 2}}, ROLLOUT_TP2, "tensor_parallel_size"),
        # declarative, and a rollout section without the key: the section still gives it its RLinf meaning
        ({"rollout": {"processes": 4, "hardware_per_process": 2, "tensor_parallel_size": 2}}, {"rollout": {"group_name": "R"}}, "tensor_parallel_size"),
        # an extra engine with its own section (WideSeek-R1's rollout_judge)
        ({"rollout_judge": {"placement": "0-3", "tensor_parallel_size": 2}}, {"rollout_judge": {"tensor_parallel_size": 2}}, "tensor_parallel_size"),
        # a shared key names the engine too
        ({"rollout,reward": {"placement": "0-7", "pipeline_parallel_size": 2}}, ROLLOUT_TP2, "pipeline_parallel_size"),
        # any section stating tensor_parallel_size is an engine section
        ({"judge": {"placement": "0-3", "tensor_parallel_size": 2}}, {"judge": {"tensor_parallel_size": 2}}, "tensor_parallel_size"),
    ],
)
def test_ambiguous_entries_are_refused(placement, sections, key):
    with pytest.raises(PlacementConfigError) as info:
        ComponentPlacement(job(placement, **sections))
    message = str(info.value)
    for fragment in (f"sets {key}", "engine section", "consecutive processes", "number of GPUs one engine process holds", "hardware_per_process"):
        assert fragment in message, message


@pytest.mark.parametrize("cls", [HybridComponentPlacement, ModelParallelComponentPlacement, ModelParallelEvalComponentPlacement])
def test_every_rlinf_class_refuses_them(cls):
    placement = {"actor,reward": "all", "rollout": {"placement": "all", "tensor_parallel_size": 2}}
    with pytest.raises(PlacementConfigError, match="engine section"):
        cls(job(placement, **ROLLOUT_TP2))


def test_same_meaning_is_accepted():
    # actor.model.tensor_model_parallel_size counts Megatron ranks (one GPU each) per TP group: the
    # entry's meaning, so a declarative actor TP group beside an actor section is not ambiguous
    placement = ComponentPlacement(job({"actor": {"placement": "0-7", "tensor_parallel_size": 4}}, actor={"model": {"tensor_model_parallel_size": 4}}))
    assert placement.spec.components["actor"].constraints.tensor_parallel_size == 4


def test_without_an_engine_section_the_entry_is_clear():
    # no rollout section (the README quickstart): the entry's meaning is the only one
    placement = ComponentPlacement(job({"rollout": {"processes": 4, "hardware_per_process": 2, "tensor_parallel_size": 2}}))
    assert placement.get_world_size("rollout") == 4


def test_model_parallel_refuses_sizes_on_components_it_lays_out():
    # the actor's size comes from actor.model.tensor_model_parallel_size; an entry value would be dropped
    placement = {"actor": {"placement": "0-7", "tensor_parallel_size": 4}, "rollout,reward": "0-7"}
    with pytest.raises(PlacementConfigError) as info:
        ModelParallelComponentPlacement(job(placement, actor={"model": {"tensor_model_parallel_size": 4}}))
    message = str(info.value)
    for fragment in ("'actor'", "sets tensor_parallel_size: 4", "lays actor out", "would be ignored", "'actor:' section"):
        assert fragment in message, message
