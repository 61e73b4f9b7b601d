"""GPU memory with offloading, and topology domains (NVLink domain, rack)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import config, layout
from hypothesis import given, settings
from hypothesis import strategies as st

from solver_placement import Cluster, InfeasiblePlacementError, PlacementConfigError, PlacementSpec, solve, verify
from solver_placement._solver.context import ModelContext
from solver_placement._solver.rules import memory as memory_rule
from solver_placement._solver.rules.rule import RuleOutput

ACTOR_MEMORY = {"weights": 20, "optimizer": 40, "grads": 20, "activations": 10}  # 90 GB running


def run(cfg: dict):
    solution = solve(cfg)
    verify(solution.spec, solution.placements_by_component())
    return solution


def collocated(offload: bool, gpu_gb: int = 80) -> dict:
    actor = {"placement": "0-3", "memory_gb": ACTOR_MEMORY}
    if offload:
        actor |= {"offload_weight": True, "offload_optimizer": True, "offload_grad": True}
    return config(1, 4, {"actor": actor, "rollout": {"processes": 4, "collocate_with": "actor", "memory_gb": 30}}, gpu_memory_gb=gpu_gb)


def test_collocation_that_overflows_gpu_memory_is_infeasible_with_a_reason() -> None:
    # actor running needs 90 GB alone: more than an 80 GB GPU
    with pytest.raises(InfeasiblePlacementError, match=r"GPU memory: actor running \(90 GB per process\) must fit 80 GB per GPU"):
        solve(collocated(offload=False))


def test_offloading_makes_room_for_the_idle_component() -> None:
    # actor idle keeps nothing (all offloaded); rollout idle keeps 30 GB: 90 + 30 > 128? no: 120 <= 128
    assert len(run(collocated(offload=True, gpu_gb=128)).placements("rollout")) == 4
    # without offloading: actor idle keeps 80 GB, so rollout running needs 30 + 80 = 110 <= 128 still fits,
    # but on 100 GB GPUs only the offloaded layout fits
    with pytest.raises(InfeasiblePlacementError, match="must fit 100 GB"):
        solve(collocated(offload=False, gpu_gb=100))
    with pytest.raises(InfeasiblePlacementError, match="actor running"):
        solve(collocated(offload=True, gpu_gb=100))  # 90 running + 30 rollout idle = 120 > 100


def test_memory_steers_a_declarative_component_to_a_bigger_gpu() -> None:
    cfg = config(2, 4, {"big": {"processes": 2, "memory_gb": 100}}, gpu_memory_gb=[80, 141])
    assert [node for node, _ in layout(run(cfg), "big")] == [1, 1]


def test_node_group_memory_overrides_the_cluster_value() -> None:
    groups = [{"label": "h200", "node_ranks": 1, "gpu_memory_gb": 141}]
    cfg = config(2, 4, {"big": {"processes": 1, "memory_gb": 100}}, gpu_memory_gb=80, node_groups=groups)
    assert layout(run(cfg), "big") == [(1, [0])]


NVL = [{"nvlink_domain": "a"}, {"nvlink_domain": "a"}, {"nvlink_domain": "b"}, {"nvlink_domain": "b"}]


def test_required_nvlink_domain_lets_a_tp_group_span_nodes_of_one_domain() -> None:
    placement = {"blocker": "0-1", "tp": {"processes": 4, "tensor_parallel_size": 4, "exclusive_with": ["blocker"],
                 "topology": {"tensor_parallel": {"nvlink_domain": "require"}}}}
    # domain a (nodes 0-1) keeps 2 free GPUs, domain b (nodes 2-3) 4: the group spans nodes 2 and 3
    assert layout(run(config(4, 2, placement, node_labels=NVL)), "tp") == [(2, [0]), (2, [1]), (3, [0]), (3, [1])]
    # without the domain rule a TP group must sit on one 2-GPU node: impossible
    with pytest.raises(InfeasiblePlacementError):
        solve(config(4, 2, {"tp": {"processes": 4, "tensor_parallel_size": 4}}, node_labels=NVL))


def test_required_domain_is_enforced() -> None:
    placement = {"blocker": "0-2", "tp": {"processes": 4, "tensor_parallel_size": 4, "exclusive_with": ["blocker"],
                 "topology": {"tensor_parallel": {"nvlink_domain": "require"}}}}
    got = layout(run(config(4, 2, placement, node_labels=NVL)), "tp")
    assert {node for node, _ in got} == {2, 3}  # domain a has only one free GPU


def test_preferred_rack_keeps_a_pipeline_together_when_it_can() -> None:
    racks = [{"rack": "r0"}, {"rack": "r1"}, {"rack": "r1"}]
    rule = {"processes": 4, "tensor_parallel_size": 2, "pipeline_parallel_size": 2}
    # compact packing would start on node 0 (rack r0, 2 GPUs) and spill into r1
    plain = layout(run(config(3, 2, {"pp": rule}, node_labels=racks)), "pp")
    assert [node for node, _ in plain] == [0, 0, 1, 1]
    prefer = layout(run(config(3, 2, {"pp": {**rule, "topology": {"pipeline_parallel": {"rack": "prefer"}}}}, node_labels=racks)), "pp")
    assert [node for node, _ in prefer] == [1, 1, 2, 2]


@pytest.mark.parametrize(
    ("component", "words"),
    [
        ({"processes": 1, "offload_weight": True}, "offload flags need memory_gb"),
        ({"processes": 1, "memory_gb": 10, "offload_grad": True}, "need memory_gb given per part"),
        ({"processes": 1, "memory_gb": {"weight": 1}}, "did you mean 'weights'"),
        ({"processes": 1, "memory_gb": -1}, "non-negative number of GB"),
        ({"processes": 1, "topology": {"tensor_parallel": {"rack": "must"}}}, "'require' or 'prefer'"),
        ({"processes": 1, "topology": {"data_parallel": {"rack": "prefer"}}}, "unknown key 'data_parallel'"),
    ],
)
def test_bad_memory_and_topology_fields(component: dict, words: str) -> None:
    with pytest.raises(PlacementConfigError, match=words):
        solve(config(1, 4, {"a": component}))


def test_bad_cluster_memory_and_labels() -> None:
    with pytest.raises(PlacementConfigError, match="positive number of GB"):
        solve(config(1, 4, {"a": "0"}, gpu_memory_gb=0))
    with pytest.raises(PlacementConfigError, match="node_labels lists 1 value but the cluster has 2 nodes"):
        solve(config(2, 4, {"a": "0"}, node_labels=[{"rack": "r0"}]))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11), st.integers(1, 60), st.integers(0, 60)), min_size=1, max_size=3),
    st.lists(st.sampled_from([None, 40, 80]), min_size=3, max_size=3),
)
def test_rank_strings_alone_are_checked_for_memory_as_gpu_by_gpu(holders: list[tuple[int, int, int, int]], memory: list[int | None]) -> None:
    """Rank strings alone (``build.fixed_conflicts``) are checked by arrays
    (``memory._check_fixed``): the same statements, in the same order, as the rule states them
    one GPU and running component at a time (``memory._add_gpu``), on GPUs of known and unknown
    memory, with processes stacked and spread."""
    placement: dict[str, Any] = {}
    for k, (first, last, active, idle) in enumerate(holders):
        low, high = sorted((first, last))
        weights = {"weights": active} if idle == 0 else {"weights": min(idle, active), "activations": active - min(idle, active)}
        placement[f"c{k}"] = {"placement": f"{low}-{high}", "memory_gb": weights, "offload_weight": idle == 0}
    spec = PlacementSpec.build(Cluster(3, 4, gpu_memory_gb=memory), placement)
    fast = ModelContext.create(spec, spec.requests, False, {}, {})
    memory_rule.build(fast, RuleOutput())
    slow = ModelContext.create(spec, spec.requests, False, {}, {})
    rule_holders = [(c.name, slow.owner(c.name), c.constraints.memory) for c in spec.components.values()]
    for hw in sorted({hw for _, request, _ in rule_holders for hw in slow.takers(request)}):
        limit = spec.cluster.gpu_memory_gb[int(spec.cluster.hw_node[hw])]
        if limit is not None:
            memory_rule._add_gpu(slow, rule_holders, hw, limit)
    assert fast.conflicts == slow.conflicts
