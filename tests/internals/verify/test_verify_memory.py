"""The verifier's GPU memory check, on its own and against the solver's verdicts.

The solver refuses a spec whose rank strings overflow a GPU, so overflowing records are built
by solving the same layout on bigger GPUs and verifying them against the smaller ones.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from helpers import config, solved
from hypothesis import given, note, settings
from hypothesis import strategies as st

from solver_placement import Cluster, InfeasiblePlacementError, PlacementSpec, VerificationError, solve, verify

ACTOR_MEMORY = {"weights": 20, "optimizer": 40, "grads": 20, "activations": 10}  # 90 GB running
OFFLOAD_ALL = {"offload_weight": True, "offload_optimizer": True, "offload_grad": True}


def spec_on(num_nodes: int, gpus: int, placement: dict[str, Any], gpu_memory_gb: Any) -> PlacementSpec:
    """The same components on a cluster with other GPU memory."""
    return PlacementSpec.build(Cluster.from_config(config(num_nodes, gpus, placement, gpu_memory_gb=gpu_memory_gb)), placement)


def violations(spec: PlacementSpec, records: dict) -> tuple[str, ...]:
    with pytest.raises(VerificationError) as caught:
        verify(spec, records)
    return caught.value.violations


def collocated(offload: bool) -> dict[str, Any]:
    actor = {"placement": "0-3", "memory_gb": ACTOR_MEMORY, **(OFFLOAD_ALL if offload else {})}
    return {"actor": actor, "rollout": {"processes": 4, "collocate_with": "actor", "memory_gb": 30}}


def test_every_overflowing_mix_is_named() -> None:
    roomy = solved(1, 4, collocated(offload=False), cluster={"gpu_memory_gb": 128})
    assert violations(spec_on(1, 4, collocated(offload=False), 80), roomy.placements_by_component()) == (
        "actor: while it runs, node 0 GPUs 0-3 would need 120 GB (actor 1 x 90 GB running, rollout 1 x 30 GB idle), "
        "more than the GPU's 80 GB (memory_gb)",
        "rollout: while it runs, node 0 GPUs 0-3 would need 110 GB (actor 1 x 80 GB idle, rollout 1 x 30 GB running), "
        "more than the GPU's 80 GB (memory_gb)",
    )


def test_offloaded_parts_are_not_kept_while_idle() -> None:
    roomy = solved(1, 4, collocated(offload=True), cluster={"gpu_memory_gb": 128})
    # actor idle keeps nothing (activations leave with the process, the rest is offloaded)
    assert violations(spec_on(1, 4, collocated(offload=True), 100), roomy.placements_by_component()) == (
        "actor: while it runs, node 0 GPUs 0-3 would need 120 GB (actor 1 x 90 GB running, rollout 1 x 30 GB idle), "
        "more than the GPU's 100 GB (memory_gb)",
    )


def test_a_declarative_process_moved_to_a_small_gpu_is_caught() -> None:
    placement = {"big": {"processes": 2, "memory_gb": 100}}
    good = solved(2, 4, placement, cluster={"gpu_memory_gb": [80, 141]})
    moved = [replace(p, cluster_node_rank=0) for p in good.placements("big")]
    assert violations(good.spec, {"big": moved}) == (
        "big: while it runs, node 0 GPUs 0-1 would need 100 GB (big 1 x 100 GB running), more than the GPU's 80 GB (memory_gb)",
    )


def test_processes_sharing_a_gpu_each_count() -> None:
    placement = {"a": {"placement": "0-1:0-3", "memory_gb": 30}}
    with pytest.raises(InfeasiblePlacementError):
        solve(config(1, 2, placement, gpu_memory_gb=50))
    roomy = solved(1, 2, placement, cluster={"gpu_memory_gb": 64})
    assert violations(spec_on(1, 2, placement, 50), roomy.placements_by_component()) == (
        "a: while it runs, node 0 GPUs 0-1 would need 60 GB (a 2 x 30 GB running), more than the GPU's 50 GB (memory_gb)",
    )


def test_components_on_one_key_each_count() -> None:
    placement = {"a,b": {"placement": "0-1", "memory_gb": 50}}
    with pytest.raises(InfeasiblePlacementError):
        solve(config(1, 2, placement, gpu_memory_gb=80))
    roomy = solved(1, 2, placement, cluster={"gpu_memory_gb": 100})
    mix = "would need 100 GB (a 1 x 50 GB {}, b 1 x 50 GB {}), more than the GPU's 80 GB (memory_gb)"
    assert violations(spec_on(1, 2, placement, 80), roomy.placements_by_component()) == (
        f"a: while it runs, node 0 GPUs 0-1 {mix.format('running', 'idle')}",
        f"b: while it runs, node 0 GPUs 0-1 {mix.format('idle', 'running')}",
    )


def test_unknown_gpu_memory_and_components_without_memory_count_nothing() -> None:
    placement = {"big": {"placement": "0-1", "memory_gb": 500}, "plain": "0-3", "small": {"placement": "2-3", "memory_gb": 80}}
    solution = solved(2, 2, placement, cluster={"gpu_memory_gb": [None, 80]})
    verify(solution.spec, solution.placements_by_component())


def test_overflows_are_grouped_per_node() -> None:
    placement = {"a": {"placement": "0-3", "memory_gb": 60}}
    roomy = solved(2, 2, placement, cluster={"gpu_memory_gb": 64})
    assert violations(spec_on(2, 2, placement, 40), roomy.placements_by_component()) == (
        "a: while it runs, node 0 GPUs 0-1, node 1 GPUs 0-1 would need 60 GB (a 1 x 60 GB running), more than the GPU's 40 GB (memory_gb)",
    )


@st.composite
def memory_jobs(draw: st.DrawFn) -> dict[str, Any]:
    """Rank-string components (their layout is fixed, so only memory decides feasibility) with
    whole-GB memory, some per part with offload flags, some without memory, some on one key."""
    placement: dict[str, Any] = {}
    for index in range(draw(st.integers(1, 3))):
        text = draw(st.sampled_from(["0-3", "0-1", "2-3", "0-1:0-3", "0-3:0-1", "1-2"]))
        body: dict[str, Any] = {"placement": text}
        kind = draw(st.sampled_from(["none", "total", "parts"]))
        if kind == "total":
            body["memory_gb"] = draw(st.integers(0, 60))
        elif kind == "parts":
            body["memory_gb"] = {part: draw(st.integers(0, 20)) for part in ("weights", "optimizer", "grads", "activations")}
            body |= {flag: draw(st.booleans()) for flag in OFFLOAD_ALL}
        key = f"c{index}" if not draw(st.booleans()) else f"c{index},d{index}"
        placement[key] = body
    return placement


@settings(max_examples=40, deadline=None)
@given(job=memory_jobs(), gpu_memory_gb=st.lists(st.integers(20, 120), min_size=2, max_size=2))
def test_verifier_and_solver_agree_on_memory(job: dict[str, Any], gpu_memory_gb: list[int]) -> None:
    """The solver finds the fixed layout iff it fits; the verifier accepts it iff the solver did."""
    note(f"{job} on {gpu_memory_gb} GB")
    layout = solve(config(2, 2, job)).placements_by_component()  # no GPU memory known: always placed
    try:
        solution = solve(config(2, 2, job, gpu_memory_gb=gpu_memory_gb))
    except InfeasiblePlacementError:
        with pytest.raises(VerificationError, match=r"\(memory_gb\)"):
            verify(spec_on(2, 2, job, gpu_memory_gb), layout)
    else:
        assert solution.placements_by_component() == layout
        verify(solution.spec, layout)
