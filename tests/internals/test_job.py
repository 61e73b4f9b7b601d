"""The loaded job: one value from every accepted input, its front end, task type and solver options
decided once, and the stages taking it without loading the config again."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from helpers import MODELS, config
from omegaconf import OmegaConf

import solver_placement._job as job_module
from solver_placement import Cluster, ComponentPlacement, Job, PlacementConfigError, YamlText, diagnose, load_job, placement_for_config, solve

QUICKSTART = MODELS / "quickstart.yaml"
SMALL = config(2, 8, {"actor": "0-7", "rollout": {"processes": 4, "hardware_per_process": 2, "exclusive_with": ["actor"]}})


def _placed(job_or_source: Any) -> dict[str, list[tuple[int, list[int]]]]:
    solution = solve(job_or_source)
    return {name: [(p.cluster_node_rank, p.local_hardware_ranks) for p in solution.placements(name)] for name in solution.components}


@pytest.mark.parametrize(
    "source",
    [
        QUICKSTART,
        str(QUICKSTART),
        YamlText(QUICKSTART.read_text()),
        yaml.safe_load(QUICKSTART.read_text()),
        OmegaConf.create(yaml.safe_load(QUICKSTART.read_text())),
    ],
    ids=["path", "str path", "yaml text", "dict", "DictConfig"],
)
def test_every_input_form_loads_the_same_job(source: Any) -> None:
    job = load_job(source)
    assert job.frontend.name == "component_placement" and not job.frontend.places_pools and not job.is_bare_section
    assert job.config == load_job(QUICKSTART).config
    assert job.section == job.config["cluster"]
    assert job.cluster is not None and job.cluster.num_nodes == 3
    assert _placed(job) == _placed(QUICKSTART)


def test_a_job_is_taken_as_it_is_and_the_config_is_loaded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    job = load_job(SMALL)
    loads: list[Any] = []
    monkeypatch.setattr(job_module, "load_config", lambda source: loads.append(source))
    assert load_job(job) is job
    solve(job)
    diagnose(job)
    placement_for_config(job)
    assert loads == []


def test_the_config_is_a_copy_read_once() -> None:
    source = copy.deepcopy(SMALL)
    job = load_job(source)
    source["cluster"]["num_nodes"] = 1
    source["cluster"]["component_placement"]["actor"] = "0-15"
    assert job.config == SMALL
    assert job.stated_cluster.num_nodes == 2


def test_a_bare_cluster_section_is_its_own_section() -> None:
    bare = load_job(SMALL["cluster"])
    assert bare.is_bare_section and bare.section is bare.config
    assert bare.key("num_gpus_per_node") == "num_gpus_per_node"
    assert load_job(SMALL).key("num_gpus_per_node") == "cluster.num_gpus_per_node"
    assert _placed(bare) == _placed(SMALL)


def test_the_front_end_is_decided_once() -> None:
    pools = load_job(MODELS / "verl_pools_2x8.yaml")
    assert pools.frontend.name == "resource_pools" and pools.frontend.places_pools and not pools.frontend.whole_config
    verl = load_job(MODELS / "verl_ppo_trainer_2x8.yaml")
    assert verl.frontend.name == "verl_trainer" and verl.frontend.places_pools and verl.frontend.whole_config


def test_verl_trainer_config_without_a_cluster_section_states_no_cluster() -> None:
    verl = load_job(MODELS / "verl_ppo_trainer_2x8.yaml")
    assert "cluster" not in verl.config and verl.section == {} and verl.cluster is None
    with pytest.raises(PlacementConfigError, match="states no cluster: section"):
        _ = verl.stated_cluster
    assert len(solve(verl).placements_by_component()) > 0  # verl's trainer keys give the nodes


def test_the_cluster_is_built_only_when_asked_for() -> None:
    auto = load_job(MODELS / "auto_reference_16x8.yaml")  # an auto-placement config: no component_placement
    assert auto.task_type is None
    given = Cluster(num_nodes=1, num_gpus_per_node=8)
    assert load_job({"cluster": {"num_nodes": "not a count", "num_gpus_per_node": 8}}, given).cluster is given
    with pytest.raises(PlacementConfigError, match="cluster.num_nodes must be an integer"):
        _ = load_job({"cluster": {"num_nodes": "not a count", "num_gpus_per_node": 8}}).cluster


def test_task_type_is_read_once_and_must_be_text() -> None:
    assert load_job({**SMALL, "runner": {"task_type": "embodied"}}).task_type == "embodied"
    with pytest.raises(PlacementConfigError, match="runner.task_type must be a string, not 3"):
        load_job({**SMALL, "runner": {"task_type": 3}})


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ({"cluster": [1, 2]}, "cluster must be a mapping, not list"),
        ({"cluster": {"num_nodes": 1, "num_gpus_per_node": 8}}, "cluster.component_placement is missing: nothing to place"),
        ({"cluster": {"num_nodes": 1, "num_gpus_per_node": 8, "solver": 30}}, "cluster.solver must be a mapping, not int"),
        ({"cluster": {"component_placement": {"a": "0"}}}, "cluster: missing required key.*'num_nodes'"),
        ({"cluster": {"num_nodes": 1, "num_gpu_per_node": 8}}, "cluster: unknown key 'num_gpu_per_node'; did you mean 'num_gpus_per_node'"),
        (42, "a config must be a YAML path, YamlText, a DictConfig or a mapping, not int"),
    ],
)
def test_errors_name_the_key(source: Any, message: str) -> None:
    with pytest.raises(PlacementConfigError, match=message):
        job = load_job(source)
        _ = job.stated_cluster, job.solver_options, job.component_placement


def test_solver_options_go_over_the_config_and_leave_it_as_written() -> None:
    job = load_job(config(2, 8, SMALL["cluster"]["component_placement"], solver={"seed": 3, "time_limit_s": 5}))
    limited = job.with_solver_options({"time_limit_s": 30})
    assert limited.solver_options.stated_options() == {"seed": 3, "time_limit_s": 30}
    assert job.solver_options.stated_options() == {"seed": 3, "time_limit_s": 5}
    assert limited.config["cluster"]["solver"] == {"seed": 3, "time_limit_s": 5}
    assert job.with_solver_options({}) is job


def test_rlinf_classes_take_solver_options_without_writing_them_into_the_config() -> None:
    rlinf_style = OmegaConf.create(copy.deepcopy(SMALL))  # as RLinf passes its config
    placement = ComponentPlacement(rlinf_style, solver_options={"time_limit_s": 7})
    assert placement.spec.solver_options.time_limit_s == 7
    assert "solver" not in rlinf_style.cluster
    mp = placement_for_config(MODELS / "modelparallel_collocated_tp4_tp2_1x8.yaml", solver_options={"time_limit_s": 9})
    assert mp.spec.solver_options.time_limit_s == 9


def test_a_job_on_another_cluster() -> None:
    job = load_job(SMALL)
    bigger = Cluster(num_nodes=3, num_gpus_per_node=8)
    moved = job.with_cluster(bigger)
    assert moved.cluster is bigger and moved.config is job.config
    assert isinstance(moved, Job) and job.stated_cluster.num_nodes == 2
