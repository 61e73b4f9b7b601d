"""Counting bounds are sound (never call a feasible spec infeasible) and say why in user terms.

Soundness is checked two ways: every generated *valid* spec passes the bounds, and on small
random specs that may well be impossible, every spec the bounds reject is also infeasible for
the exact model, solved without the bounds.
"""

from __future__ import annotations

from typing import Any

import pytest
from generators import SpecCase, valid_specs
from helpers import config
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from ortools.sat.python import cp_model

from solver_placement import PlacementError, PlacementSpec, solve
from solver_placement._solver.build import build_model
from solver_placement._solver.counting import counting_conflicts
from solver_placement._solver.exact import run_exact
from solver_placement._solver.options import SolverOptions
from solver_placement._specification.candidates import expand_all

OPTIONS = SolverOptions(time_limit_s=20, num_workers=1)


def _bounds(spec: PlacementSpec) -> list[str]:
    return [statement.text for statement in counting_conflicts(spec, OPTIONS.start())]


def _exact_status(spec: PlacementSpec) -> int:
    """The exact model's verdict, without the bounds (INFEASIBLE for certain conflicts)."""
    ctx = build_model(spec, expand_all(spec.requests))
    if ctx.conflicts:
        return cp_model.INFEASIBLE
    return run_exact(ctx, OPTIONS, OPTIONS.start())[1]


def _check_valid(case: SpecCase) -> None:
    note(repr(case.config()))
    assert _bounds(PlacementSpec.from_config(case.config())) == []


@pytest.mark.superseded  # by the 700 below, drawn on up to 6 nodes
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_specs(max_nodes=4))
def test_valid_specs_pass_the_bounds(case: SpecCase) -> None:
    _check_valid(case)


@pytest.mark.slow
@settings(max_examples=700, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_specs(max_nodes=6))
def test_many_valid_specs_pass_the_bounds(case: SpecCase) -> None:
    _check_valid(case)


@st.composite
def random_specs(draw: st.DrawFn) -> dict[str, Any]:
    """1-3 nodes, 2-3 declarative components (and maybe a rank string) with TP, exclusivity,
    collocation, memory and capacity drawn freely: many are impossible, some by counting."""
    nodes = draw(st.integers(1, 3))
    gpus = draw(st.lists(st.sampled_from([2, 4, 6, 8]), min_size=nodes, max_size=nodes))
    names = ["actor", "rollout", "reward"][: draw(st.integers(2, 3))]
    placement: dict[str, Any] = {}
    for position, name in enumerate(names):
        body: dict[str, Any] = {"processes": draw(st.integers(1, 12)), "hardware_per_process": draw(st.sampled_from([1, 1, 2, 3]))}
        tp = draw(st.sampled_from([1, 1, 2, 4]))
        if tp > 1:
            body["tensor_parallel_size"] = tp
            body["processes"] = tp * draw(st.integers(1, 3))
        earlier = names[:position]
        if earlier and draw(st.booleans()):
            body["exclusive_with"] = [draw(st.sampled_from(earlier))]
        elif earlier and draw(st.integers(0, 3)) == 0:
            body["collocate_with"] = draw(st.sampled_from(earlier))
        if draw(st.integers(0, 3)) == 0:
            body["memory_gb"] = draw(st.sampled_from([20, 50, 90]))
        if draw(st.integers(0, 4)) == 0:
            body["max_processes_per_hardware"] = draw(st.integers(1, 2))
        placement[name] = body
    if draw(st.booleans()):
        placement["ref"] = draw(st.sampled_from(["0-1", "0", "0-3:0-1", "1-2"]))
    cfg = config(nodes, gpus, placement, gpu_memory_gb=80)
    return cfg


@pytest.mark.superseded  # by the 700 below
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_specs())
def test_bounds_never_reject_a_feasible_spec(cfg: dict[str, Any]) -> None:
    _check_random(cfg)


@pytest.mark.slow
@settings(max_examples=700, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_specs())
def test_many_random_specs_are_rejected_only_when_infeasible(cfg: dict[str, Any]) -> None:
    _check_random(cfg)


def _check_random(cfg: dict[str, Any]) -> None:
    """Rejected by the bounds implies infeasible for the exact model (solved without them)."""
    note(repr(cfg))
    try:
        spec = PlacementSpec.from_config(cfg)
    except PlacementError:
        return
    conflicts = _bounds(spec)
    note(repr(conflicts))
    if conflicts:
        assert _exact_status(spec) == cp_model.INFEASIBLE, conflicts


CASES = [
    (  # the example: 129 GPUs on 128
        {"actor": {"processes": 120, "tensor_parallel_size": 8}, "reward": {"processes": 9, "exclusive_with": ["actor"]}},
        16, 8, {},
        ["actor needs 120 processes x 1 GPU in tensor-parallel groups of 8 (15 groups of 8 GPUs, each on one node)",
         "reward needs 9 processes x 1 GPU", "reward is exclusive with actor (no shared hardware)",
         "counting: the cluster has 16 nodes x 8 GPUs = 128 GPUs; together they need 129"],
    ),
    (  # a rank string counts as the items it uses
        {"actor": "0-3", "rollout": {"processes": 6, "exclusive_with": ["actor"]}}, 2, 4, {},
        ['actor: placement "0-3" uses 4 GPUs', "rollout needs 6 processes x 1 GPU",
         "rollout is exclusive with actor (no shared hardware)", "counting: the cluster has 2 nodes x 4 GPUs = 8 GPUs; together they need 10"],
    ),
    (  # one GPU too small for one process
        {"big": {"processes": 2, "memory_gb": 100}}, 2, 4, {"gpu_memory_gb": 80},
        ["big needs 2 processes x 1 GPU", "GPU memory: big running (100 GB per process) must fit 80 GB per GPU",
         "counting: the cluster has 2 nodes x 4 GPUs = 8 GPUs; big may use 0 GPUs of them"],
    ),
    (  # rank strings already fill every GPU to the limit
        {"reward": "0-3:0-7", "inference": {"processes": 2, "max_processes_per_hardware": 2}}, 1, 4, {},
        ['reward: placement "0-3:0-7" uses 4 GPUs', "inference needs 2 processes x 1 GPU",
         "inference: at most 2 processes per item (max_processes_per_hardware)",
         "counting: the cluster has 1 node x 4 GPUs; inference may use 0 GPUs of them"],
    ),
]


@pytest.mark.parametrize(("placement", "nodes", "gpus", "extra", "want"), CASES)
def test_counting_names_exactly_the_statements(placement: dict, nodes: int, gpus: int, extra: dict, want: list[str]) -> None:
    assert _bounds(PlacementSpec.from_config(config(nodes, gpus, placement, **extra))) == want


def test_a_feasible_spec_at_the_limit_passes() -> None:
    placement = {"actor": {"processes": 120, "tensor_parallel_size": 8}, "reward": {"processes": 8, "exclusive_with": ["actor"]}}
    spec = PlacementSpec.from_config(config(16, 8, placement))
    assert _bounds(spec) == []
    assert len(solve(spec).placements("reward")) == 8


def test_counting_does_not_blame_what_it_cannot_prove() -> None:
    """Nesting of collocated processes is beyond counting: the exact model decides."""
    placement = {"actor": {"processes": 4, "tensor_parallel_size": 2}, "rollout": {"processes": 2, "hardware_per_process": 2, "stride": 3, "collocate_with": "actor"}}
    assert _bounds(PlacementSpec.from_config(config(1, 8, placement))) == []
