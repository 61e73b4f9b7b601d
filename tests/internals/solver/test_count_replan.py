"""Re-planning on the count path (issue 34): with previous placements, ``changes`` is a term of
the count model (``counts/kept.py``: nodes that held something are shapes of their own, each
pattern keeps a bounded number of previous sets, laid out to keep them); its answer, proven by
the model's own bound, is the flat model's optimum.

* The answer's objective is the spec's own, ``changes`` counted against the previous placement.
* Its bound is at most the flat optimum and its objective at least it; proven, both are equal.
* Losing a node of a packed job, nothing that survived moves and the answer is proven.
* A node lost or a demand changed, at the default weights or with moves traded against nodes
  and ``balance``: wherever the count model states the spec, it answers, proven, at the flat
  optimum, declining nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from flat_model import PRIMARY, flat_solution
from helpers import declined_first, example_tiers
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from test_count_model import small_specs

from solver_placement import Cluster, InfeasiblePlacementError, PlacementConfigError, PlacementSpec, Solution, solve, verify
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.previous import previous_hardware

#: The terms both answers are compared on: the count model leaves the contiguity tie-break out.


def replanned(before: Solution, spec: PlacementSpec) -> Solution:
    """``spec`` solved with ``before`` as the previous placement, held against the flat model."""
    ours = solve(spec, time_limit_s=10, previous=before)
    verify(ours.spec, ours.placements_by_component())
    if ours.method != "counts":
        return ours
    held = previous_hardware(spec, before)
    assert ours.objective == objective_value(spec, spec.requests, ours.assignments, PRIMARY, held)
    flat = flat_solution(spec, previous=held)
    best = objective_value(spec, spec.requests, flat.assignments, PRIMARY, held)
    assert ours.bound is not None and ours.bound <= ours.objective
    if flat.status == "OPTIMAL":  # the contiguity tie-break is worth less than one node here
        assert ours.bound <= best <= ours.objective
        if ours.status == "OPTIMAL":
            assert ours.objective == best
    return ours


@example_tiers(30, 60)
def test_a_replan_is_counted_at_the_flat_optimum(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(small_specs(), st.data())(check_random))()


def check_random(case: tuple[Cluster, dict[str, Any]], data: st.DataObject) -> None:
    cluster, placement = case
    lost = data.draw(st.sets(st.integers(0, cluster.num_nodes - 1), max_size=1), label="lost")
    note(f"{cluster.gpus_per_node.tolist()} {placement} lost {sorted(lost)}")
    try:
        before = solve(PlacementSpec.build(cluster, placement), time_limit_s=10)
        after = PlacementSpec.build(cluster.without_nodes(lost), placement)
    except (InfeasiblePlacementError, PlacementConfigError):  # a window or rank string past the GPUs left
        event("infeasible before or after")
        return
    try:
        ours = replanned(before, after)
    except InfeasiblePlacementError:
        event("infeasible after")
        return
    event(f"{ours.method} {ours.status}")


#: Packed jobs on 4 x 8 GPUs whose node 1 is lost: two exclusive components, and TP groups with
#: a strided rollout nested in them beside an exclusive reward.
PACKED = [
    {"actor": {"processes": 16}, "reward": {"processes": 8, "exclusive_with": ["actor"]}},
    {"actor": {"processes": 8, "tensor_parallel_size": 2},
     "rollout": {"processes": 4, "hardware_per_process": 2, "stride": "auto", "collocate_with": "actor"},
     "reward": {"processes": 12, "exclusive_with": ["actor"]}},
]  # fmt: skip


@pytest.mark.parametrize("placement", PACKED)
def test_losing_a_node_moves_only_its_processes_and_is_proven(placement: dict[str, Any]) -> None:
    cluster = Cluster(5, 8)
    before = solve(PlacementSpec.build(cluster, placement))
    after = replanned(before, PlacementSpec.build(cluster.without_nodes({1}), placement))
    assert (after.method, after.status, declined_first(after)) == ("counts", "OPTIMAL", ())
    held = previous_hardware(after.spec, before)
    assert objective_value(after.spec, after.spec.requests, after.assignments, {"changes": 1, "topology": 0, "nodes": 0, "contiguity": 0}, held) == 0
    kept = {name: {p.cluster_node_rank for p in records} - {1} for name, records in before.placements_by_component().items()}
    now = {name: {p.cluster_node_rank for p in records} for name, records in after.placements_by_component().items()}
    assert all(kept[name] <= now[name] for name in kept)  # every surviving node keeps its processes


#: Objectives a re-plan is weighed by: the defaults (moves first), and moves traded against nodes
#: and the fullest node's GPUs at comparable weights.
WEIGHTS = ({}, {"changes": 1, "nodes": 1}, {"changes": 3, "nodes": 2, "balance": 5}, {"changes": 10_000, "nodes": 10_000, "balance": 1})
#: Components whose demand a re-plan may change: the drawn ones with their own process count.
DRAWN = ("actor", "critic", "reward")


def changed_demand(placement: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    """``placement`` with one drawn component one unit (a tensor-parallel group, or a pipeline of
    them) larger or smaller, its collocated rollout resized with it."""
    name = data.draw(st.sampled_from([n for n in DRAWN if n in placement]), label="changed")
    body = dict(placement[name])
    unit = body.get("tensor_parallel_size", 1) * body.get("pipeline_parallel_size", 1)
    body["processes"] = max(unit, body["processes"] + data.draw(st.sampled_from([-unit, unit]), label="by"))
    changed = {**placement, name: body}
    rollout = placement.get("rollout")
    if rollout is not None and rollout["collocate_with"] == name:
        changed["rollout"] = {**rollout, "processes": body["processes"] * body.get("hardware_per_process", 1) // 2}
    return changed


@example_tiers(40, 80)
def test_the_count_model_weighs_changes_at_the_flat_optimum(examples: int) -> None:
    """A previous answer re-planned on a cluster with a node removed, or with one component's
    demand changed: wherever the count model states the spec, it states the ``changes`` term too
    (``counts/kept.py``) and answers with the flat model's optimum, proven, declining nothing."""
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(small_specs(), st.data())(check_stated))()


def check_stated(case: tuple[Cluster, dict[str, Any]], data: st.DataObject) -> None:
    cluster, placement = case
    if data.draw(st.booleans(), label="lose a node") and cluster.num_nodes > 1:
        lost = {data.draw(st.integers(0, cluster.num_nodes - 1), label="lost")}
        after_cluster, after_placement = cluster.without_nodes(lost), placement
    else:
        after_cluster, after_placement = cluster, changed_demand(placement, data)
    objective = data.draw(st.sampled_from(WEIGHTS), label="objective")
    note(f"{cluster.gpus_per_node.tolist()} {placement} -> {after_cluster.gpus_per_node.tolist()} {after_placement}, {objective}")
    try:
        before = solve(PlacementSpec.build(cluster, placement), time_limit_s=10)
        after = PlacementSpec.build(after_cluster, after_placement)
        fresh = solve(after, time_limit_s=10, objective=objective)
    except (InfeasiblePlacementError, PlacementConfigError):
        event("infeasible before or after")
        return
    if fresh.method != "counts" or fresh.status != "OPTIMAL":
        event("the count model does not state the spec")
        return
    ours = solve(after, time_limit_s=10, previous=before, objective=objective)
    held = previous_hardware(after, before)
    flat = flat_solution(after, {**objective, "contiguity": 0}, previous=held)
    best = objective_value(after, after.requests, flat.assignments, {**PRIMARY, **objective}, held)
    event(f"{ours.method} {ours.status}; flat {flat.status}")
    assert (ours.method, ours.status, declined_first(ours)) == ("counts", "OPTIMAL", ()), ours.notes
    assert ours.objective == objective_value(after, after.requests, ours.assignments, {**PRIMARY, **objective}, held)
    assert ours.bound == ours.objective
    if flat.status == "OPTIMAL":
        assert ours.objective == best
    else:
        assert ours.objective <= best


@pytest.mark.parametrize(("objective", "moved"), [({}, 0), ({"changes": 1, "nodes": 10}, 2)])
def test_moves_are_traded_against_nodes_at_their_weights(objective: dict[str, int], moved: int) -> None:
    """An actor kept off two rank strings on two nodes, re-planned alone: kept in place it uses
    both nodes; moving two processes saves one. Moves weigh the most by default; at one per
    move against ten per node, the count model moves them, and either way proves it."""
    cluster = Cluster(2, 4)
    before = solve(
        PlacementSpec.build(cluster, {"x": {"placement": "0-1"}, "y": {"placement": "4-5"}, "actor": {"processes": 4, "exclusive_with": ["x", "y"]}})
    )
    after = PlacementSpec.build(cluster, {"actor": {"processes": 4}})
    ours = solve(after, previous=before, objective=objective)
    held = previous_hardware(after, before)
    assert (ours.method, ours.status, declined_first(ours)) == ("counts", "OPTIMAL", ())
    assert objective_value(after, after.requests, ours.assignments, {"changes": 1, "topology": 0, "nodes": 0, "contiguity": 0}, held) == moved
    flat = flat_solution(after, {**objective, "contiguity": 0}, previous=held)
    assert ours.objective == objective_value(after, after.requests, flat.assignments, {**PRIMARY, **objective}, held)


def test_collocated_strides_keep_what_the_flat_model_keeps() -> None:
    """A strided rollout on an actor's GPUs (blocks of four), the first GPU now taken by a
    component exclusive with the actor: the actor's set {2, 3} and the rollout's {1, 3} cannot
    both be kept by processes of the flat model's shape, so the node's bound (processes placed
    as the flat model places them) is the one set a run of blocks keeps, and the answer is proven."""
    placement = {
        "fixed": {"placement": "0-0"},
        "actor": {"processes": 2, "tensor_parallel_size": 2, "hardware_per_process": 2},
        "shadow": {"processes": 1, "collocate_with": "fixed", "exclusive_with": ["actor"]},
        "rollout": {"processes": 2, "hardware_per_process": 2, "stride": "auto", "collocate_with": "actor"},
    }
    cluster = Cluster(2, [4, 8], node_labels=[{"rack": "0"}, {"rack": "0"}])
    before = solve(PlacementSpec.build(cluster, placement))
    after = PlacementSpec.build(cluster.without_nodes({0}), placement)
    objective = {"changes": 3, "nodes": 2, "balance": 5}
    ours = solve(after, previous=before, objective=objective)
    held = previous_hardware(after, before)
    assert (ours.method, ours.status, declined_first(ours)) == ("counts", "OPTIMAL", ())
    flat = flat_solution(after, {**objective, "contiguity": 0}, previous=held)
    assert flat.status == "OPTIMAL"
    assert ours.objective == objective_value(after, after.requests, flat.assignments, {**PRIMARY, **objective}, held)
