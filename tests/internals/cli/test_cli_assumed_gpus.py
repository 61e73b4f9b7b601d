"""A config that states no GPU count (as every RLinf config) gets 8 GPUs per node, never silently:
the library warns with ``AssumedGpuCountWarning``, the command warns on stderr and shows the
assumed count in the header of every answer (and in its JSON envelope)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from click.testing import Result
from helpers import MODELS, cli_runner

import solver_placement
from solver_placement import AssumedGpuCountWarning, Cluster, solve
from solver_placement._cli import main
from solver_placement._config import YamlText

#: RLinf's embodied layout: a GPU node and a robot node, no GPU count (RLinf reads it from the hardware).
RLINF_ROBOT = """
cluster:
  num_nodes: 2
  component_placement:
    actor: 0-7
    env: {node_group: franka, placement: 0}
  node_groups:
    - {label: franka, node_ranks: 1, hardware: {type: Franka, configs: [{node_rank: 1}]}}
"""
HEADER = "(8 GPUs per node assumed: no num_gpus_per_node)"
WARNING = (
    "warning: {name} states no {key}, so 8 GPUs per node are assumed (RLinf reads the count from the hardware); "
    "state it, in the file or as +{key}=N, or give --ray ADDRESS to read the live cluster\n"
)


def run(*args: object, stdin: str | None = RLINF_ROBOT) -> Result:
    result = cli_runner().invoke(main, [str(arg) for arg in args], input=stdin)
    assert result.exit_code == 0, result.output
    return result


def test_the_library_warns_naming_the_key_and_the_live_cluster() -> None:
    assert solver_placement.AssumedGpuCountWarning is AssumedGpuCountWarning and issubclass(AssumedGpuCountWarning, UserWarning)
    with pytest.warns(AssumedGpuCountWarning, match=r"cluster\.num_gpus_per_node is not stated, so 8 GPUs per node are assumed") as caught:
        solution = solve(YamlText(RLINF_ROBOT))
    assert "Cluster.from_ray()" in str(caught[0].message) and "--ray ADDRESS" in str(caught[0].message)
    assert solution.placements("env")[0].visible_accelerators == [str(g) for g in range(8)]  # what the warning is about
    with pytest.warns(AssumedGpuCountWarning):
        Cluster.from_config({"num_nodes": 1})


def test_a_stated_count_warns_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", AssumedGpuCountWarning)
        solve(YamlText(RLINF_ROBOT.replace("  num_nodes: 2\n", "  num_nodes: 2\n  num_gpus_per_node: [8, 0]\n")))
        Cluster(num_nodes=1)  # a cluster built in code states its count by its signature


@pytest.mark.parametrize(
    ("args", "first_line"),
    [
        (("solve", "-"), f"<stdin> {HEADER}: 2 nodes, 8 GPUs each, custom hardware: Franka; optimal in "),
        (("explain", "-"), f"<stdin> {HEADER}: valid; 2 components, 9 processes"),
        (("launch", "-"), f"<stdin> {HEADER}: 9 bundles in one placement group, 9 processes"),
        (("plot", "-", "-o", "{tmp}/layout.svg"), f"wrote {{tmp}}/layout.svg: <stdin> {HEADER}"),
    ],
    ids=lambda value: value[0] if isinstance(value, tuple) else None,
)
def test_every_answer_says_the_count_is_assumed(args: tuple[str, ...], first_line: str, tmp_path: Path) -> None:
    result = run(*(arg.format(tmp=tmp_path) for arg in args))
    assert result.stdout.splitlines()[0].startswith(first_line.format(tmp=tmp_path)), result.stdout
    assert result.stderr == WARNING.format(name="<stdin>", key="cluster.num_gpus_per_node")  # once, not also Python's warning
    document = json.loads(run(*(arg.format(tmp=tmp_path) for arg in args), "--format", "json").stdout)
    assert list(document)[:5] == ["schema_version", "command", "file", "overrides", "assumed"]
    assert document["assumed"] == {"num_gpus_per_node": 8}


def test_auto_says_it_in_its_table_and_its_yaml_block() -> None:
    model = MODELS / "auto_reference_16x8.yaml"
    table = run("auto", model, "~cluster.num_gpus_per_node", "--top-k", "1", stdin=None)
    assert table.stdout.startswith(f"{model} {HEADER}: disaggregated, predicted 289.096 s per iteration")
    block = run("auto", model, "~cluster.num_gpus_per_node", "--format", "yaml", stdin=None).stdout
    assert block.startswith(f"# {model} {HEADER}\n# auto placement")


def test_a_bare_cluster_section_is_told_its_own_key() -> None:
    result = run("solve", "-", stdin="num_nodes: 1\ncomponent_placement:\n  actor: 0-7\n")
    assert result.stderr == WARNING.format(name="<stdin>", key="num_gpus_per_node")


def test_a_stated_count_has_no_warning_and_no_assumed_key() -> None:
    result = run("solve", "-", "+cluster.num_gpus_per_node=[8,0]", "--format", "json")
    assert result.stderr == "" and "assumed" not in json.loads(result.stdout)
    visible = json.loads(result.stdout)["components"]["env"][0]["visible_accelerators"]
    assert visible == []  # the robot node has no GPU once the count is stated
    assert run("solve", MODELS / "quickstart.yaml", stdin=None).stderr == ""


@pytest.mark.ray
def test_local_ray_shaped_like_the_model_confirms_no_count() -> None:
    """``--local`` starts a Ray with the model's (assumed) GPUs: it checks nothing, so the warning stays."""
    result = run("solve", "-", "--local", stdin="cluster:\n  num_nodes: 1\n  component_placement:\n    actor: 0-1\n")
    assert result.stderr == WARNING.format(name="<stdin>", key="cluster.num_gpus_per_node")
    assert result.stdout.startswith(f"<stdin> {HEADER}: 1 node, 8 GPUs each")
