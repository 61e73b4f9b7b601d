"""Hydra's override grammar after FILE, run through the real command: each form does what it does
in Hydra (checked against hydra-core 1.3's compose), or is refused with its reason; none is ignored.

Hydra 1.3, on a config with ``cluster.num_nodes`` and without ``cluster.bogus``:
``cluster.bogus=4`` fails ("Could not override ... use +cluster.bogus=4"), ``+cluster.num_nodes=4``
fails ("An item is already at ... add a second +"), ``++`` adds or replaces, ``~cluster.num_nodes``
deletes, ``~cluster.num_nodes=3`` fails when the value is 2, ``~cluster.bogus`` fails ("does not
exist"), ``key=`` sets the empty string, and a mapping value is merged into a mapping.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from helpers import cli_runner

from solver_placement._cli import main

#: Two 4-GPU nodes; ``accelerator_model`` is null, so ``+`` may fill it as Hydra lets it.
MODEL = """
cluster:
  num_nodes: 2
  num_gpus_per_node: 4
  accelerator_model: null
  node_groups:
    - {label: gpu, node_ranks: 0-1}
  component_placement:
    actor: {node_group: gpu, placement: 0-7}
    reward: {node_group: gpu, placement: 0-1}
    env: 0-1
"""


def run(*args: str, model: str = MODEL) -> Result:
    return cli_runner().invoke(main, ["solve", "-", *args, "--format", "json"], input=model)


def solved(*args: str, model: str = MODEL) -> dict[str, Any]:
    result = run(*args, model=model)
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    assert data["overrides"] == list(args)  # as typed, in order
    return data


def refused(*args: str, model: str = MODEL) -> str:
    """The one error line of a refused command (exit 2, nothing on stdout)."""
    result = run(*args, model=model)
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    return result.stderr


def test_key_value_replaces_a_value_the_file_has() -> None:
    assert len(solved("cluster.num_nodes=4", "cluster.node_groups.0.node_ranks=0-3")["components"]["env"]) == 2
    actor = solved("cluster.num_gpus_per_node=8")["components"]["actor"]
    assert {p["cluster_node_rank"] for p in actor} == {0}


def test_key_value_for_a_key_the_file_lacks_is_refused_and_names_the_plus_form() -> None:
    """Hydra: "Could not override 'cluster.bogus'. To append to your config use +cluster.bogus=4"."""
    assert "override 'cluster.bogus=4': <stdin> has no cluster.bogus to replace; to add it, write +cluster.bogus=4" in refused("cluster.bogus=4")
    assert "(did you mean 'num_gpus_per_node'?)" in refused("cluster.num_gpu_per_node=4")
    assert "has no cluster.solver.time_limit_s to replace" in refused("cluster.solver.time_limit_s=5")


def test_plus_adds_a_key_and_refuses_one_the_file_has() -> None:
    assert "unknown key 'bogus'" in refused("+cluster.bogus=4")  # added, so the schema sees it: never ignored
    added = solved("+cluster.solver.time_limit_s=30", "+cluster.component_placement.rollout=2-3")
    assert [p["local_hardware_ranks"] for p in added["components"]["rollout"]] == [[2], [3]]
    assert solved("+cluster.accelerator_model=A800")["components"]["actor"][0]["accelerator_model"] == "A800"  # null: nothing there
    message = refused("+cluster.num_gpus_per_node=8")
    assert "<stdin> already has cluster.num_gpus_per_node (4); +KEY=VALUE only adds a new key" in message
    assert "write cluster.num_gpus_per_node=8 to replace it, or ++cluster.num_gpus_per_node=8 to add or replace it" in message
    assert "already has cluster.component_placement.env" in refused("+cluster.component_placement.env={placement: 0}")


def test_plus_plus_adds_or_replaces() -> None:
    replaced = solved("++cluster.num_gpus_per_node=8")["components"]["actor"]
    assert {p["cluster_node_rank"] for p in replaced} == {0}
    added = solved("++cluster.component_placement.rollout=2-3")["components"]["rollout"]
    assert [p["local_hardware_ranks"] for p in added] == [[2], [3]]
    assert "node_ranks" in refused("cluster.node_groups.0.node_ranks=0-2")  # 2 nodes: node 2 does not exist
    solved("++cluster.num_nodes=3", "++cluster.node_groups.0.node_ranks=0-2")


def test_tilde_deletes_a_key_only_when_it_is_there_and_holds_the_value_given() -> None:
    assert "env" not in solved("~cluster.component_placement.env")["components"]
    assert "reward" not in solved("~cluster.component_placement.reward={node_group: gpu, placement: 0-1}")["components"]
    assert "env" not in solved("~cluster.component_placement.env=0-1")["components"]
    assert "env" not in solved("~cluster.component_placement.env=")["components"]  # no value: whatever it holds, as in Hydra
    assert "cluster.component_placement.env is '0-1', not '0-2', so it is kept" in refused("~cluster.component_placement.env=0-2")
    assert "<stdin> has no cluster.component_placement.critic to delete" in refused("~cluster.component_placement.critic")
    assert "missing required key 'num_nodes'" in refused("~cluster.num_nodes")  # deleted: the schema asks for it


def test_a_mapping_merges_into_a_mapping_and_anything_else_replaces() -> None:
    reward = solved("cluster.component_placement.reward={placement: 2-3}")["components"]["reward"]  # node_group kept
    assert [(p["node_group_label"], p["local_hardware_ranks"]) for p in reward] == [("gpu", [2]), ("gpu", [3])]
    replaced = solved("cluster.component_placement.reward=2-3")["components"]["reward"]  # a mapping replaced by a rank string
    assert [(p["node_group_label"], p["local_hardware_ranks"]) for p in replaced] == [("cluster", [2]), ("cluster", [3])]


def test_overrides_apply_in_order_before_interpolations_resolve() -> None:
    model = MODEL + "nodes: 1\n"
    assert "node_ranks" in refused("cluster.num_nodes=${nodes}", model=model)  # one node: group 'gpu' names node 1
    data = solved("cluster.num_nodes=${nodes}", "nodes=2", model=model)
    assert max(p["cluster_node_rank"] for p in data["components"]["actor"]) == 1
    assert "has no cluster.bogus to replace" in refused("++cluster.bogus=1", "~cluster.bogus", "cluster.bogus=2")


def test_an_empty_value_is_the_empty_string_as_in_hydra() -> None:
    assert "cluster.num_nodes must be an integer, not ''" in refused("cluster.num_nodes=")


@pytest.mark.parametrize(
    ("argument", "reason"),
    [
        ("cluster.num_nodes", "override 'cluster.num_nodes' is not KEY=VALUE; write it as KEY=VALUE (KEY=VALUE replaces a value, +KEY=VALUE adds a key, ++KEY=VALUE adds or replaces, ~KEY deletes)"),
        ("+cluster.num_nodes", "override '+cluster.num_nodes' is not KEY=VALUE"),
        ("=4", "override '=4' has no KEY before '='"),
        ("~", "override '~' has no KEY before '='"),
        ("env/maniskill=x", "selects a Hydra config group (a '/' or '@' in the key), which only Hydra's defaults list composes"),
        ("+model@actor.model=x", "selects a Hydra config group"),
        ("hydra.run.dir=.", "override 'hydra.run.dir=.' sets Hydra's own settings (run directory, logging, launcher)"),
        ("cluster.num_nodes=choice(1,2)", "choice(...) is a Hydra sweep or cast function, which only Hydra evaluates"),
        ("cluster.num_nodes=int(2.0)", "int(...) is a Hydra sweep or cast function"),
        ("cluster..num_nodes=1", "'cluster..num_nodes' is not a dotted key"),
        ("cluster.node_groups[0].label=x", "is not a dotted key"),
        ("+++cluster.x=1", "'+cluster.x' is not a dotted key"),
        ("cluster.node_groups.3.label=x", "cluster.node_groups is a list of 1 item, so '3' is not one of its indices"),
        ("+cluster.num_nodes.x=1", "cluster.num_nodes holds 2, not a mapping or a list, so it has no cluster.num_nodes.x"),
    ],
)  # fmt: skip
def test_a_form_that_is_not_supported_is_refused_with_its_reason(argument: str, reason: str) -> None:
    assert reason in refused(argument)


def test_a_value_hydras_grammar_cannot_read_is_refused_with_the_form_to_write() -> None:
    """Values are read by Hydra's override grammar, not as YAML (``_override_values``)."""
    assert refused("cluster.num_nodes=[1") == (
        "error: override 'cluster.num_nodes=[1': Hydra's override grammar cannot read the value (the value ends early "
        "(an unclosed bracket or brace, or a missing value)); quote it (\"cluster.num_nodes='[1'\" in a shell) or escape "
        "the character with a backslash\n"
    )


def test_an_override_below_an_interpolation_is_refused() -> None:
    model = MODEL + "extra: {a: 1}\nalias: ${extra}\n"
    assert "alias is an interpolation ('${extra}'); override what it refers to instead" in refused("alias.a=2", model=model)


def test_a_value_is_held_to_the_input_limits_like_file() -> None:
    message = refused(f"++cluster.junk=[{', '.join(['x'] * 25_000)}]")
    assert message.startswith("error: override '++cluster.junk=[x, x,") and "above the limit max_values=" in message


def test_keys_with_commas_are_addressed_as_rlinf_writes_them() -> None:
    model = MODEL.replace("    env: 0-1\n", "    env,rollout: 0-1\n")
    data = solved("cluster.component_placement.env,rollout=2-3", model=model)
    assert [p["local_hardware_ranks"] for p in data["components"]["rollout"]] == [[2], [3]]


def test_a_file_with_a_hydra_defaults_list_is_refused_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without Hydra installed (the core install); with it the file is composed (tests/internals/test_compose.py)."""
    monkeypatch.setitem(sys.modules, "hydra", None)
    composed = tmp_path / "job.yaml"
    composed.write_text("defaults:\n  - model/mlp_policy@actor.model\n  - override hydra/job_logging: stdout\n" + MODEL)
    result = cli_runner().invoke(main, ["solve", str(composed)])
    assert result.exit_code == 2, result.output
    assert "has a Hydra defaults: list, which composes other files into it ('model/mlp_policy@actor.model')" in result.stderr
    assert "pip install 'solver_placement[hydra]'" in result.stderr and "--cfg job" in result.stderr
    only_hydra = tmp_path / "hydra_only.yaml"
    only_hydra.write_text("defaults:\n  - override hydra/job_logging: stdout\n  - _self_\n" + MODEL)
    assert cli_runner().invoke(main, ["solve", str(only_hydra)]).exit_code == 0
