"""New clusters derived from one by ``Cluster`` methods: the original is never changed."""

from __future__ import annotations

import copy

import pytest

from solver_placement import Cluster, PlacementConfigError
from solver_placement._constants import ACCELERATOR

GROUPS = [
    {"label": "gpu", "node_ranks": "0-2"},
    {"label": "robots", "node_ranks": [1, 2], "hardware": {"type": "Franka", "configs": [{"node_rank": 1}, {"node_rank": 2}]}},
    {"label": "envs", "node_ranks": "0-2", "env_configs": [{"node_ranks": [1], "env_vars": {"A": "1"}}, {"node_ranks": [0, 2]}]},
]


def _cluster() -> Cluster:
    return Cluster(num_nodes=3, num_gpus_per_node=8, node_groups=copy.deepcopy(GROUPS), gpu_memory_gb=80, gpu_topology=None)


def test_without_nodes_empties_them_and_drops_them_from_every_group() -> None:
    cluster = _cluster()
    before = cluster.layout
    survived = cluster.without_nodes({1}, "survivors")
    assert survived.num_nodes == 3 and survived.gpus_per_node.tolist() == [8, 0, 8]
    assert survived.node_group("gpu").node_ranks == (0, 2) and survived.node_group("gpu").hardware_type == ACCELERATOR
    assert survived.node_group("robots").node_ranks == (2,)
    assert [survived.kind_of(hw) for hw in survived.resources(["robots"]).physical] == ["Franka"]
    assert [env.node_ranks for env in survived.node_group("envs").env_configs] == [(0, 2)]
    assert survived.node_group("survivors").node_ranks == (0, 2) and survived.node_group("survivors").hardware_type is None
    assert cluster.layout == before and cluster.gpus_per_node.tolist() == [8, 8, 8]


def test_a_group_whose_nodes_are_all_lost_is_gone() -> None:
    survived = _cluster().without_nodes({1, 2})
    assert "robots" not in survived.node_groups and "survivors" not in survived.node_groups


def test_gpus_and_memory_per_node() -> None:
    cluster = _cluster()
    assert cluster.with_gpus_per_node([8, 4, 2]).gpus_per_node.tolist() == [8, 4, 2]
    assert cluster.with_gpu_memory_gb([80, None, 141]).gpu_memory_gb == [80.0, None, 141.0]
    assert cluster.gpus_per_node.tolist() == [8, 8, 8] and cluster.gpu_memory_gb == [80.0, 80.0, 80.0]
    with pytest.raises(PlacementConfigError, match="cluster.num_gpus_per_node lists 2 values but the cluster has 3 nodes"):
        cluster.with_gpus_per_node([8, 8])


def test_under_section_puts_a_config_over_a_live_cluster() -> None:
    live = Cluster(num_nodes=2, num_gpus_per_node=[8, 4], accelerator_model=["H100", "L40"], node_groups=[{"label": "zone_a", "node_ranks": [0]}])
    section = {"gpu_memory_gb": 80, "node_groups": [{"label": "mine", "node_ranks": "1"}], "component_placement": {"actor": "0-3"}}
    filled = live.under_section(section)
    assert filled.gpus_per_node.tolist() == [8, 4] and filled.accelerator_models == ("H100", "L40")
    assert filled.gpu_memory_gb == [80.0, 80.0]
    assert filled.node_group("zone_a").node_ranks == (0,) and filled.node_group("mine").node_ranks == (1,)
    assert live.gpu_memory_gb == [None, None] and "mine" not in live.node_groups
    with pytest.raises(PlacementConfigError, match="cluster: unknown key 'gpu_memory'; did you mean 'gpu_memory_gb'"):
        live.under_section({"gpu_memory": 80})
