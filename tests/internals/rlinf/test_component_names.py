"""Issue 31 item 6: a component name that reads as another typed wrong (``rolout`` beside
``rollout``). RLinf places any name (``ComponentPlacement.__init__`` keeps every key of
``component_placement``), so where the job still has every component its class needs the name is
placed and warned about (the library's warning, stderr and ``explain`` on the command line); where
the name it stands for is required and missing, the refusal names it."""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from helpers import cli_runner

from solver_placement import (
    ComponentPlacement,
    MisspeltComponentWarning,
    ModelParallelComponentPlacement,
    ModelParallelEvalComponentPlacement,
    PlacementConfigError,
)
from solver_placement._cli import main
from solver_placement._frontends.rlinf.component_names import MAX_COMPARED, near_misses

MODELS = Path(__file__).parents[3] / "models"


def job(placement: dict[str, Any], task: str | None = "reasoning") -> dict[str, Any]:
    config: dict[str, Any] = {"cluster": {"num_nodes": 2, "num_gpus_per_node": 8, "component_placement": placement}}
    if task is not None:
        config["runner"] = {"task_type": task}
    return config


def test_a_misspelt_extra_component_is_placed_as_rlinf_does_and_warned_about():
    with pytest.warns(MisspeltComponentWarning, match="component 'rolout' .* did you mean 'rollout'\\?"):
        cp = ModelParallelComponentPlacement(job({"actor,rollout": "all", "reward": "all", "rolout": "0-15"}))
    assert cp.components == ["actor", "rollout", "reward", "rolout"]  # placed, as RLinf places it


@pytest.mark.parametrize(("cls", "placement"), [
    (ModelParallelComponentPlacement, {"actor": "all", "rolout": "all", "reward": "all"}),
    (ModelParallelEvalComponentPlacement, {"rolout": "all", "reward": "all"}),
])  # fmt: skip
def test_a_misspelt_required_component_is_refused_naming_the_name_meant(cls: type, placement: dict[str, str]):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MisspeltComponentWarning)
        with pytest.raises(PlacementConfigError, match="no 'rollout' component.*'rolout' is placed; did you mean 'rollout'\\?"):
            cls(job(placement, "reasoning_eval" if cls is ModelParallelEvalComponentPlacement else "reasoning"))


@pytest.mark.parametrize("names", [
    ["actor", "rollout", "reward", "inference", "critic", "critic_inference"],  # RLinf's own names
    ["actor", "rollout", "reward", "rollout_judge", "rollout_planner"],  # multi-agent engines
    ["actor", "rollout", "reward_0", "reward_1", "reward_2", "reward1", "reward2"],  # numbered replicas
    ["actor", "actor_inference", "env", "reward_server"],
    ["env_a", "env_b", "agent", "gpu-x1", "gpu-x2"],  # short variants of one name
])  # fmt: skip
def test_names_of_related_components_are_not_typos(names: list[str]):
    assert near_misses(names) == []


@pytest.mark.parametrize(("names", "expected"), [
    (["actor", "rollout", "reward", "rolout"], ("rolout", "rollout")),
    (["rolout", "rollout"], ("rolout", "rollout")),  # a role is never the typo, wherever it stands
    (["actor", "rollout", "inferance"], ("inferance", "inference")),
    (["actor", "envs"], ("envs", "env")),
    (["agent", "agnet"], ("agnet", "agent")),  # close to another component placed before it
])  # fmt: skip
def test_near_misses_name_the_name_meant(names: list[str], expected: tuple[str, str]):
    assert [(miss.name, miss.meant) for miss in near_misses(names)] == [expected]


def test_no_placement_class_warns_on_the_names_in_the_repositorys_models():
    """No model config of this repository (many restate RLinf's examples) has a name read as a typo.
    (RLinf's own 435 example configs with a component_placement were checked the same way once, at
    RLinf a3816b5: none either.)"""
    from solver_placement._frontends.rlinf.component_names import placed_names
    from solver_placement._job import load_job

    checked = 0
    for path in sorted(MODELS.rglob("*.yaml")):
        try:
            section = load_job(path).section
        except PlacementConfigError:
            continue  # models/invalid: refused before any name is read
        names = placed_names(section.get("component_placement"))
        checked += bool(names)
        assert near_misses(names) == [], path
    assert checked > 20


def test_many_components_are_checked_in_bounded_time():
    """At the component limit (10,000) each name is compared with RLinf's roles only; pairwise
    comparison stops past MAX_COMPARED components (a typo there is not caught, by design)."""
    names = [f"worker{index:05d}x" for index in range(10_000)]
    started = time.perf_counter()
    assert near_misses(names) == []
    assert time.perf_counter() - started < 10  # 0.6-1.3 s on a loaded 2-core machine; the pairwise scan took 135 s
    assert near_misses([f"w{index}" for index in range(MAX_COMPARED)] + ["agent", "agnet"]) == []
    assert [miss.name for miss in near_misses([f"w{index}" for index in range(MAX_COMPARED)] + ["rolout"])] == ["rolout"]


def test_the_base_class_warns_too():
    with pytest.warns(MisspeltComponentWarning, match="did you mean 'actor'"):
        ComponentPlacement(job({"actor": "0-7", "actr": "8-15"}, task=None))


def test_the_command_line_says_it_on_stderr_and_in_explains_answer():
    model = (MODELS / "modelparallel_collocated_doc_2x8.yaml").read_text()
    runner = cli_runner()
    explained = runner.invoke(main, ["explain", "-", "+cluster.component_placement.rolout=0-15"], input=model)
    assert explained.exit_code == 0, explained.output
    assert "warning: component 'rolout' is not a name RLinf asks for" in explained.stdout
    assert "did you mean 'rollout'?" in explained.stderr
    as_json = runner.invoke(main, ["explain", "-", "+cluster.component_placement.rolout=0-15", "--format", "json"], input=model)
    assert any("did you mean 'rollout'?" in sentence for sentence in json.loads(as_json.stdout)["warnings"])
    plain = runner.invoke(main, ["explain", "-", "--format", "json"], input=model)
    assert "warnings" not in json.loads(plain.stdout) and "warning" not in plain.stderr


def test_names_numbered_alike_are_generated_not_misspelt():
    """``c001abc`` beside ``c002abc`` differ by one character, as a typo does, but by a number: a
    generated set of components, never warned about (and cheap: no string matcher runs)."""
    assert near_misses([f"c{index:03d}abcdefghij" for index in range(MAX_COMPARED)]) == []
    assert near_misses([f"rollout_{index}x" for index in range(MAX_COMPARED)]) == []
