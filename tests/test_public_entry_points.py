"""The public entry points take their input one way: ``solve``, ``explain``, ``diagnose`` and
``auto_place`` accept anything ``load_job`` reads (plus a spec or a problem where that is their
own value) with the same keyword-only options, and ``apply_overrides`` gives any of them a
config with Hydra's overrides applied, leaving the caller's config as it was."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
from omegaconf import OmegaConf

from solver_placement import (
    Cluster,
    PlacementConfigError,
    PlacementSpec,
    YamlText,
    apply_overrides,
    auto_place,
    diagnose,
    explain,
    load_job,
    solve,
)

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "models" / "quickstart.yaml"
SHARED_OPTIONS = ("cluster", "time_limit_s", "num_workers", "seed")


@pytest.mark.parametrize("entry", [solve, explain, diagnose, auto_place], ids=lambda f: f.__name__)
def test_every_entry_point_takes_the_source_then_the_same_keyword_options(entry: Any) -> None:
    parameters = inspect.signature(entry).parameters
    first, *rest = parameters.values()
    assert first.name == "source" and first.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    keyword_only = {p.name for p in rest if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert set(SHARED_OPTIONS) <= keyword_only, f"{entry.__name__} lacks {set(SHARED_OPTIONS) - keyword_only}"
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in rest)


TWO_ON_ONE_GPU = {
    "cluster": {
        "num_nodes": 1,
        "num_gpus_per_node": 1,
        "component_placement": {"actor": {"processes": 1}, "rollout": {"processes": 1, "exclusive_with": "actor"}},
    }
}


@pytest.mark.parametrize("form", ["path", "text", "mapping", "dictconfig", "job", "spec"])
def test_explain_takes_every_form_solve_takes(form: str, tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(OmegaConf.to_yaml(TWO_ON_ONE_GPU))
    sources = {
        "path": path,
        "text": YamlText(path.read_text()),
        "mapping": TWO_ON_ONE_GPU,
        "dictconfig": OmegaConf.create(TWO_ON_ONE_GPU),
        "job": load_job(path),
        "spec": PlacementSpec.from_config(path),
    }
    statements = explain(sources[form], time_limit_s=10)
    assert {statement.component for statement in statements} >= {"rollout"}, statements
    assert not diagnose(sources[form], time_limit_s=10).feasible


def test_a_given_cluster_is_taken_by_every_entry_point() -> None:
    bigger = Cluster(num_nodes=1, num_gpus_per_node=2)
    assert explain(TWO_ON_ONE_GPU, cluster=bigger) == []
    assert diagnose(TWO_ON_ONE_GPU, cluster=bigger).feasible
    assert solve(TWO_ON_ONE_GPU, cluster=bigger).cluster is bigger


def test_auto_place_is_sized_by_a_given_cluster() -> None:
    stated = auto_place(ROOT / "models" / "auto_reference_16x8.yaml")
    halved = auto_place(ROOT / "models" / "auto_reference_16x8.yaml", cluster=Cluster(num_nodes=8, num_gpus_per_node=8))
    assert stated.problem.num_gpus == 128 and halved.problem.num_gpus == 64
    assert max(end for _, end in halved.ranges.values()) <= 64
    with pytest.raises(PlacementConfigError, match="one GPU count on every node"):
        auto_place(ROOT / "models" / "auto_reference_16x8.yaml", cluster=Cluster(num_nodes=2, num_gpus_per_node=[8, 4]))


def test_placement_spec_from_config_reads_every_front_end() -> None:
    """A verl trainer config is a job like any other: its spec is the worker groups verl starts."""
    spec = PlacementSpec.from_config(ROOT / "models" / "verl_ppo_trainer_2x8.yaml")
    assert "actor_rollout_ref" in spec.components


@pytest.mark.parametrize("form", ["path", "text", "mapping", "dictconfig"])
def test_apply_overrides_gives_a_new_config_in_hydras_terms(form: str) -> None:
    text = QUICKSTART.read_text()
    sources = {"path": QUICKSTART, "text": YamlText(text), "mapping": OmegaConf.to_container(OmegaConf.create(text)), "dictconfig": OmegaConf.create(text)}
    source = sources[form]
    before = OmegaConf.to_yaml(OmegaConf.create(source)) if form in ("mapping", "dictconfig") else None
    changed = apply_overrides(source, ["cluster.num_nodes=4", "cluster.num_gpus_per_node=[8,8,8,0]", "cluster.accelerator_model=[A800,A800,A800,null]", "~cluster.component_placement.reward"])
    solution = solve(changed)
    assert solution.cluster.num_nodes == 4 and "reward" not in solution.components
    if before is not None:
        assert OmegaConf.to_yaml(OmegaConf.create(source)) == before, "the caller's config was changed"


def test_apply_overrides_refuses_what_hydra_would_read_otherwise() -> None:
    with pytest.raises(PlacementConfigError, match="cluster.num_nodez"):
        apply_overrides(QUICKSTART, ["cluster.num_nodez=4"])
    with pytest.raises(PlacementConfigError, match="a config must be a YAML path"):
        apply_overrides(42, ["cluster.num_nodes=4"])  # type: ignore[arg-type]
