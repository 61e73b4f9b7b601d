"""How node groups' ``env_configs`` are read here and by RLinf 0.3.0's own ``ClusterConfig``, on
one hand-made case per difference (docs/rlinf.md, "Differences from RLinf"). The generated differential
run gives every entry the same variable, so these cases are shown here."""

from __future__ import annotations

from typing import Any

import pytest
import rlinf_shim
from omegaconf import DictConfig, OmegaConf

from solver_placement import Cluster, PlacementConfigError

rl = rlinf_shim.load()


def section(first: dict[str, str], second: dict[str, str]) -> DictConfig:
    """A ``cluster:`` section whose group ``gpu`` has two env_configs entries on disjoint nodes."""
    return OmegaConf.create({"num_nodes": 4, "num_gpus_per_node": 2, "component_placement": {"actor": "0-7"}, "node_groups": [
        {"label": "gpu", "node_ranks": "0-3", "env_configs": [{"node_ranks": "0-1", "env_vars": [first]}, {"node_ranks": "2-3", "env_vars": [second]}]},
    ]})  # fmt: skip


def rlinf_env_vars(config: DictConfig) -> list[Any]:
    """The env_vars of each env_configs entry of group ``gpu`` as RLinf's ``ClusterConfig`` keeps them."""
    return [entry.env_vars for entry in rl.ClusterConfig.from_dict_cfg(config).node_groups[0].env_configs]


def test_a_variable_repeated_in_two_entries_on_disjoint_nodes_rlinf_refuses_we_accept() -> None:
    config = section({"NCCL_DEBUG": "INFO"}, {"NCCL_DEBUG": "WARN"})
    with pytest.raises(AssertionError, match="Environment variable 'NCCL_DEBUG' in env_config is duplicated in node group 'gpu'"):
        rl.ClusterConfig.from_dict_cfg(config)
    envs = Cluster.from_config(config).node_group("gpu").env_configs
    assert [(env.node_ranks, dict(env.env_vars)) for env in envs] == [((0, 1), {"NCCL_DEBUG": "INFO"}), ((2, 3), {"NCCL_DEBUG": "WARN"})]


@pytest.mark.parametrize("name", ["GLOO_SOCKET_IFNAME=eth0", ""], ids=["equals-sign", "empty"])
def test_a_name_no_os_accepts_rlinf_keeps_we_refuse_when_read(name: str) -> None:
    config = section({"NCCL_DEBUG": "INFO"}, {name: "x"})
    assert rlinf_env_vars(config) == [[{"NCCL_DEBUG": "INFO"}], [{name: "x"}]]
    with pytest.raises(PlacementConfigError, match=r"node group 'gpu': env_configs\[1\] \(node_ranks 2-3\): env var name"):
        Cluster.from_config(config)
