"""Environment variables of node groups' ``env_configs`` that no OS can set are refused while the
config is read, naming the node group, the entry (index and node ranks) and the variable; before,
they passed and the launch failed only at its timeout, when Ray could not start the workers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from solver_placement import Cluster, PlacementConfigError, YamlText, solve
from solver_placement._cli import main

#: Where every message below starts: the group, then the entry by index and node ranks.
ENTRY = "node group 'gpu': env_configs[1] (node_ranks 2-3): "


def cluster_with(env_vars: Any) -> Cluster:
    """A 4-node cluster whose group ``gpu`` gives ``env_vars`` to its second env_configs entry."""
    return Cluster(4, 2, node_groups=[{"label": "gpu", "node_ranks": "0-3", "env_configs": [
        {"node_ranks": "0-1", "env_vars": [{"NCCL_DEBUG": "INFO"}]},
        {"node_ranks": "2-3", "env_vars": env_vars},
    ]}])  # fmt: skip


def job_yaml(env_vars: str) -> str:
    """A job config whose one env_configs entry sets ``env_vars`` (YAML flow text) on node 1."""
    return (
        "cluster:\n  num_nodes: 2\n  num_gpus_per_node: 2\n  node_groups:\n    - label: gpu\n      node_ranks: 0-1\n"
        f"      env_configs:\n        - node_ranks: 1\n          env_vars: {env_vars}\n"
        "  component_placement:\n    actor: 0-3\n"
    )


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("MASTER_ADDR=10.0.0.1", "env var name 'MASTER_ADDR=10.0.0.1' contains '='"),
        ("", "env var name '' is empty"),
        ("NCCL\0DEBUG", r"env var name 'NCCL\x00DEBUG' contains a NUL byte"),
    ],
    ids=["equals-sign", "empty", "nul-byte"],
)
@pytest.mark.parametrize("form", ["rlinf-list", "mapping"])
def test_a_name_no_os_accepts_is_refused_naming_group_entry_and_name(name: str, problem: str, form: str) -> None:
    env_vars = [{"OK": "1"}, {name: "x"}] if form == "rlinf-list" else {"OK": "1", name: "x"}
    with pytest.raises(PlacementConfigError) as info:
        cluster_with(env_vars)
    assert str(info.value) == f"{ENTRY}{problem}; no OS accepts such a name (it must be non-empty, without '=' or NUL)"


def test_a_nul_byte_in_a_value_is_refused_without_printing_the_value() -> None:
    with pytest.raises(PlacementConfigError) as info:
        cluster_with([{"WANDB_API_KEY": "secret\0token"}])
    message = str(info.value)
    assert message == (
        f"{ENTRY}env var 'WANDB_API_KEY': its value contains a NUL byte (character 6 of 12), which no OS accepts in an environment variable"
    )
    assert "secret" not in message


def test_names_and_values_the_os_accepts_are_kept() -> None:
    """Only '=', NUL and the empty name are refused: lower case, dots, a leading digit and '=' or
    unicode in a value are all things ``execve`` takes."""
    env = cluster_with([{"xla.flags": "--a=b"}, {"1ST": "é"}, {"X": 1}]).node_group("gpu").env_configs[1]
    assert env.node_ranks == (2, 3) and env.env_vars == {"xla.flags": "--a=b", "1ST": "é", "X": "1"}


def test_the_same_name_in_two_entries_of_a_group_is_accepted_per_node() -> None:
    """RLinf's docs ask a name to be unique per node (RLinf 0.3.0 refuses it group-wide): each
    entry's nodes get their own value."""
    envs = cluster_with([{"NCCL_DEBUG": "WARN"}]).node_group("gpu").env_configs
    assert [(env.node_ranks, env.env_vars) for env in envs] == [((0, 1), {"NCCL_DEBUG": "INFO"}), ((2, 3), {"NCCL_DEBUG": "WARN"})]


@pytest.mark.parametrize(
    ("env_vars", "problem"),
    [
        ('[{"GLOO_SOCKET_IFNAME=eth0": x}]', "env var name 'GLOO_SOCKET_IFNAME=eth0' contains '='"),
        ('{"": x}', "env var name '' is empty"),
        ('{"A\\0B": x}', r"env var name 'A\x00B' contains a NUL byte"),
        ('{X: "a\\0b"}', "env var 'X': its value contains a NUL byte (character 1 of 3)"),
    ],
    ids=["equals-sign", "empty", "nul-byte", "nul-in-value"],
)
def test_a_yaml_config_is_refused_when_read(env_vars: str, problem: str) -> None:
    with pytest.raises(PlacementConfigError) as info:
        solve(YamlText(job_yaml(env_vars)))
    assert str(info.value).startswith(f"node group 'gpu': env_configs[0] (node_ranks 1): {problem}")


def test_the_command_line_refuses_it_before_anything_runs(tmp_path: Path) -> None:
    model = tmp_path / "job.yaml"
    model.write_text(job_yaml('[{"GLOO_SOCKET_IFNAME=eth0": x}]'))
    result = CliRunner().invoke(main, ["launch", str(model), "--dry-run"])
    assert result.exit_code == 2, result.output
    assert "error: node group 'gpu': env_configs[0] (node_ranks 1): env var name 'GLOO_SOCKET_IFNAME=eth0' contains '='" in result.output
