"""Re-planning on the count path where node matching used to decline (issue 34).

With a weighed ``contiguity``: moves and ranks in one count model (``counts/kept_weighed.py``;
``test_count_replan_trade.py`` holds the trades the two bounds of ``counts/kept_ranks.py`` could
not prove), or, where that model leaves the spec (robots and whole nodes), the count
layout best in ranks or the one best in moves, proven against the larger of two bounds. On robots and whole nodes (``counts/kept_kinds.py``): ``kept.py`` on each kind's view.
Progressions of a stride that leaves holes: the node model lays them out (``kept_node.py``).

* A job re-planned unchanged with ``contiguity`` weighed: the count layout best in ranks moves
  processes that the layout best in moves keeps, and the latter is proven at the flat optimum.
* Random small jobs the count model proves when placed afresh, a node lost or not, moves weighed
  far above ranks or near them: wherever the count path answers the re-plan, its answer is
  proven and is the flat model's optimum.
* An unchanged job on GPUs and robots re-planned with ``balance`` weighed, and random jobs over
  robots, GPUs and whole nodes, a node lost or not: the count path answers every draw it proves
  placed afresh, at the flat optimum, declining nothing.
* Progressions kept where a node was lost, and random strided jobs: the same.
* A strided window placed first, shrunk: stated by ``kept.py`` (its known processes keep the most
  any order keeps), at the flat optimum.
* Strided processes placed around GPUs taken then (progressions, not blocks), re-planned with
  those GPUs free: where runs of blocks keep fewer of them than the node's relaxation, the node
  is laid out as the relaxation places them (``kept_node.spread_shape``), at the flat optimum.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from flat_model import flat_solution
from helpers import declined_first, example_tiers
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from test_count_kinds import mixed_specs, robot_cluster
from test_count_model import small_specs
from test_count_strides import strided_specs

from solver_placement import Cluster, InfeasiblePlacementError, PlacementConfigError, PlacementSpec, Solution, solve
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.previous import previous_hardware
from solver_placement._solver_settings import DEFAULT_WEIGHTS

#: Objectives weighing ``contiguity``: moves first (the defaults), moves above nodes above ranks
#: at small weights, and moves and ranks near each other (a trade the count path may decline).
WEIGHTS = ({"contiguity": 1}, {"contiguity": 1, "changes": 1_000, "nodes": 100}, {"contiguity": 5, "changes": 3, "nodes": 2})


def held_against_flat(spec: PlacementSpec, before: Solution, objective: dict[str, int]) -> Solution:
    """``spec`` re-planned from ``before`` with ``objective``; where the count path answers, its
    objective (the spec's own, ranks and moves counted) is the flat model's optimum."""
    ours = solve(spec, time_limit_s=10, previous=before, objective=objective)
    if ours.method != "counts":
        return ours
    held = previous_hardware(spec, before)
    weights = {**DEFAULT_WEIGHTS, "contiguity": 0, **objective}  # unweighed, contiguity is the answer's tie-break only
    assert ours.status == "OPTIMAL" and declined_first(ours) == (), ours.notes
    assert ours.objective == ours.bound == objective_value(spec, spec.requests, ours.assignments, weights, held)
    flat = flat_solution(spec, {"contiguity": 0, **objective}, previous=held)
    best = objective_value(spec, spec.requests, flat.assignments, weights, held)
    assert ours.objective <= best
    if flat.status == "OPTIMAL":
        assert ours.objective == best
    return ours


def test_an_unchanged_job_weighing_ranks_keeps_its_placement_proven() -> None:
    """Placed at the default weights (ranks only a tie-break), then re-planned unchanged with
    ``contiguity`` weighed: the count layout best in ranks puts the actor's pipeline elsewhere
    (four moves the old proof could not excuse); keeping everything is proven by the count model
    that prices moves and ranks together (``kept_weighed.py``)."""
    placement = {
        "actor": {"processes": 2, "pipeline_parallel_size": 2, "topology": {"pipeline_parallel": {"rack": "prefer"}}, "memory_gb": 30},
        "reward": {"processes": 1, "hardware_per_process": 2, "exclusive_with": ["actor"], "memory_gb": 30},
        "critic": {"processes": 1, "hardware_per_process": 2, "memory_gb": 20, "max_processes_per_hardware": 3},
    }
    spec = PlacementSpec.build(Cluster(1, 8, node_labels=[{"rack": "0"}]), placement)
    before = solve(spec)
    ours = held_against_flat(spec, before, {"contiguity": 1})
    assert (ours.method, ours.status, declined_first(ours)) == ("counts", "OPTIMAL", ())
    held = previous_hardware(spec, before)
    assert objective_value(spec, spec.requests, ours.assignments, {"changes": 1, "topology": 0, "nodes": 0, "contiguity": 0}, held) == 0


@example_tiers(25, 50)
def test_a_replan_weighing_ranks_is_the_flat_optimum_where_counted(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(small_specs(), st.data())(check_weighed))()


def check_weighed(case: tuple[Cluster, dict[str, Any]], data: st.DataObject) -> None:
    cluster, placement = case
    lost = data.draw(st.sets(st.integers(0, cluster.num_nodes - 1), max_size=1 if cluster.num_nodes > 1 else 0), label="lost")
    objective = data.draw(st.sampled_from(WEIGHTS), label="objective")
    note(f"{cluster.gpus_per_node.tolist()} {placement} lost {sorted(lost)}, {objective}")
    try:
        before = solve(PlacementSpec.build(cluster, placement), time_limit_s=10)
        after = PlacementSpec.build(cluster.without_nodes(lost), placement)
        fresh = solve(after, time_limit_s=10, objective=objective)
    except (InfeasiblePlacementError, PlacementConfigError):
        event("infeasible before or after")
        return
    if (fresh.method, fresh.status) != ("counts", "OPTIMAL"):
        event("the count model does not prove the spec placed afresh")  # its ranks are a bound only (``contiguity.py``)
        return
    ours = held_against_flat(after, before, objective)
    event(f"{ours.method} {ours.status}" + (" (the count path declined)" if any("declined" in n for n in ours.notes) else ""))


def test_robots_re_planned_with_balance_keep_their_placement_proven() -> None:
    """Placed at the default weights, then re-planned unchanged with ``balance`` weighed: the
    fullest node holds as many items either way, so nothing need move. Node matching gave up
    four previous placements (its count layout, best in balance, put the robots' processes
    elsewhere); ``kept.py`` on the robots' view and the GPUs' keeps every one, proven."""
    spec = PlacementSpec.build(robot_cluster([4, 4, 4], [1, 1, 0]), {
        "actor": {"processes": 4, "tensor_parallel_size": 2},
        "env": {"node_group": "robots", "processes": 2},
        "camera": {"node_group": "robots", "processes": 2},
    })  # fmt: skip
    before = solve(spec)
    ours = held_against_flat(spec, before, {"balance": 10})
    assert (ours.method, ours.status, declined_first(ours)) == ("counts", "OPTIMAL", ())
    held = previous_hardware(spec, before)
    assert objective_value(spec, spec.requests, ours.assignments, {"changes": 1, "topology": 0, "nodes": 0, "contiguity": 0}, held) == 0


def test_robots_re_planned_weighing_ranks_and_balance_keep_their_placement_proven() -> None:
    """The same with ``contiguity`` weighed beside ``balance``: the layout best in ranks, matched
    node by node, gave up two previous placements; moves, ranks and balance stated in one model
    on the view of every kind (``kept_weighed.py`` through ``kept_kinds.py``) keep them, proven."""
    spec = PlacementSpec.build(robot_cluster([4, 4], [3, 3]), {
        "actor": {"processes": 1}, "env": {"node_group": "robots", "processes": 2}, "camera": {"node_group": "robots", "processes": 1},
    })  # fmt: skip
    ours = held_against_flat(spec, solve(spec), {"contiguity": 3, "balance": 10})
    assert (ours.method, ours.status, declined_first(ours)) == ("counts", "OPTIMAL", ())


@example_tiers(25, 50)
def test_a_replan_over_several_kinds_is_the_flat_optimum(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(mixed_specs(), st.data())(check_kinds))()


def check_kinds(case: tuple[Cluster, dict[str, Any], dict[str, int]], data: st.DataObject) -> None:
    check_replanned(*case, data)


def test_progressions_re_planned_keep_their_placement_proven() -> None:
    """Two groups of two processes, each holding GPUs ``h, h + 4`` (progressions with holes
    between, ``strided.py``), and a critic kept off them, on the first of three nodes; the third,
    empty, is lost. Node matching gave up three previous placements; the node model of
    progressions (``kept_node.py``) keeps every one, proven."""
    placement = {
        "actor": {"processes": 2, "hardware_per_process": 2, "stride": 4, "tensor_parallel_size": 2},
        "ref": {"processes": 2, "hardware_per_process": 2, "stride": 4, "collocate_with": "actor"},
        "critic": {"processes": 3, "exclusive_with": ["actor"]},
    }
    cluster = Cluster(3, [7, 7, 3])
    before = solve(PlacementSpec.build(cluster, placement))
    spec = PlacementSpec.build(cluster.without_nodes({2}), placement)
    ours = held_against_flat(spec, before, {})
    assert (ours.method, ours.status, declined_first(ours)) == ("counts", "OPTIMAL", ())
    held = previous_hardware(spec, before)
    assert objective_value(spec, spec.requests, ours.assignments, {"changes": 1, "topology": 0, "nodes": 0, "contiguity": 0}, held) == 0


@example_tiers(25, 50)
def test_a_replan_of_strides_is_the_flat_optimum(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(strided_specs(), st.data())(check_strides))()


def check_strides(case: tuple[Cluster, dict[str, Any]], data: st.DataObject) -> None:
    check_replanned(*case, data.draw(st.sampled_from([{}, {"changes": 1, "nodes": 1}]), label="objective"), data)


def check_replanned(cluster: Cluster, placement: dict[str, Any], objective: dict[str, int], data: st.DataObject) -> None:
    """A drawn job placed, a node lost or not, re-planned: where the count model proves the job
    placed afresh, the count path answers the re-plan too, at the flat optimum."""
    lost = data.draw(st.sets(st.integers(0, cluster.num_nodes - 1), max_size=1 if cluster.num_nodes > 1 else 0), label="lost")
    note(f"{cluster.gpus_per_node.tolist()} {placement} lost {sorted(lost)}, {objective}")
    ours = replanned_where_counted(lambda: solve(PlacementSpec.build(cluster, placement), time_limit_s=10), cluster.without_nodes(lost), placement, objective)
    if ours is None:
        return
    event(f"{ours.method} {ours.status}")
    assert (ours.method, declined_first(ours)) == ("counts", ()), ours.notes  # a weighed contiguity too (``kept_weighed.py``)


def replanned_where_counted(before_of: Callable[[], Solution], cluster: Cluster, placement: dict[str, Any], objective: dict[str, int]) -> Solution | None:
    """The re-plan of ``before_of()`` onto ``cluster``, held against the flat optimum; None
    (with the event saying why) where either layout has no placement or the count model does
    not prove the job placed afresh, so the re-plan is not the count model's to answer."""
    try:
        before = before_of()
        after = PlacementSpec.build(cluster, placement)
        fresh = solve(after, time_limit_s=10, objective=objective)
    except (InfeasiblePlacementError, PlacementConfigError):
        event("infeasible before or after")
        return None
    if (fresh.method, fresh.status) != ("counts", "OPTIMAL"):
        event("the count model does not prove the spec placed afresh")
        return None
    return held_against_flat(after, before, objective)


def window_job(window: str, processes: int) -> dict[str, Any]:
    """A strided component filling a window (placed first, ``preset.py``), an actor kept off it
    and a strided critic."""
    return {
        "window": {"resources": window, "processes": processes, "hardware_per_process": 2, "stride": 2},
        "actor": {"processes": 6, "exclusive_with": ["window"]},
        "critic": {"processes": 4, "hardware_per_process": 2, "stride": 2},
    }


@pytest.mark.parametrize("window", ["0-3", "2-5", "4-7"])
def test_a_strided_window_placed_first_is_re_planned_at_the_flat_optimum(window: str) -> None:
    """A strided window of eight GPUs shrunk to four: its processes on the new window are known,
    and they keep every previous set the window still holds whole (the most any order of its
    processes keeps), so ``kept.py`` states the re-plan instead of matching nodes."""
    cluster = Cluster(2, 8)
    before = solve(PlacementSpec.build(cluster, window_job("0-7", 4)))
    ours = held_against_flat(PlacementSpec.build(cluster, window_job(window, 2)), before, {})
    assert (ours.method, ours.status, declined_first(ours)) == ("counts", "OPTIMAL", ())


def blocked_before(cluster: Cluster, placement: dict[str, Any], blocked: list[int]) -> Solution:
    """``placement`` solved with its strided actor kept off the ``blocked`` GPUs (a rank string it
    is exclusive with): its processes there are progressions around them, not whole blocks."""
    actor = placement["actor"] | {"exclusive_with": [*placement["actor"].get("exclusive_with", ()), "blocker"]}
    return solve(PlacementSpec.build(cluster, placement | {"actor": actor, "blocker": ",".join(map(str, blocked))}), time_limit_s=10)


def test_progressions_placed_around_taken_gpus_are_kept_where_blocks_would_move_them() -> None:
    """Two processes of 2 GPUs 2 apart (TP 2) placed around GPUs 2, 5 and 8 kept off them, on
    two nodes of 8, a critic kept off the actor; re-planned with those GPUs free. Runs of blocks
    of 4 kept 4 of the 6 previous sets the node's relaxation keeps, and the count path declined;
    the node is now laid out as its relaxation places the processes, proven, nothing moved."""
    cluster = Cluster(2, 8)
    placement = {"actor": {"processes": 2, "hardware_per_process": 2, "stride": 2, "tensor_parallel_size": 2}, "critic": {"processes": 4, "exclusive_with": ["actor"]}}
    before = blocked_before(cluster, placement, [2, 5, 8])
    ours = held_against_flat(PlacementSpec.build(cluster, placement), before, {})
    assert (ours.method, ours.status, declined_first(ours)) == ("counts", "OPTIMAL", ())
    held = previous_hardware(PlacementSpec.build(cluster, placement), before)
    assert objective_value(ours.spec, ours.spec.requests, ours.assignments, {"changes": 1, "topology": 0, "nodes": 0, "contiguity": 0}, held) == 0


@st.composite
def blocked_strides(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """1-2 nodes of 8 or 12 GPUs; an actor of 2 or 3 GPUs a process, stride 2 or 3, TP the
    stride or twice it (its blocks tile its groups: laid out in runs of blocks; a group on one
    node), sometimes followed by a component of one GPU a process (TP 1, the actor's amount or
    its group), sometimes beside a critic kept off it."""
    nodes = draw(st.integers(1, 2))
    gpus, amount, stride, tp = draw(st.sampled_from([(g, a, s, t) for g in (8, 12) for a in (2, 3) for s in (2, 3) for t in (s, 2 * s) if a * max(s, t) <= g]))
    groups = draw(st.integers(1, max(1, nodes * gpus // (2 * amount * tp))))
    placement: dict[str, Any] = {"actor": {"processes": groups * tp, "hardware_per_process": amount, "stride": stride, "tensor_parallel_size": tp}}
    if draw(st.booleans()):
        placement["ref"] = {"processes": groups * tp * amount, "collocate_with": "actor", "tensor_parallel_size": draw(st.sampled_from([1, amount, amount * tp]))}
    if draw(st.booleans()):
        placement["critic"] = {"processes": draw(st.integers(1, 4)), "exclusive_with": ["actor"]}
    return Cluster(nodes, gpus), placement


@example_tiers(15, 40)
def test_a_replan_of_progressions_placed_around_taken_gpus_is_the_flat_optimum(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(blocked_strides(), st.data())(check_blocked))()


def check_blocked(case: tuple[Cluster, dict[str, Any]], data: st.DataObject) -> None:
    """A drawn strided job placed with its actor kept off 1-2 GPUs, re-planned with them free:
    where the count model proves the job placed afresh, the count path answers the re-plan,
    declining nothing, at the flat optimum."""
    replanned_around_blocked(case, data, [{}, {"changes": 1, "nodes": 1}])


def replanned_around_blocked(case: tuple[Cluster, dict[str, Any]], data: st.DataObject, objectives: Sequence[dict[str, int]]) -> None:
    """:func:`check_blocked` under one of ``objectives`` (drawn)."""
    cluster, placement = case
    blocked = sorted(data.draw(st.sets(st.integers(0, cluster.num_hardware - 1), min_size=1, max_size=2), label="blocked"))
    objective = data.draw(st.sampled_from(objectives), label="objective")
    note(f"{cluster.gpus_per_node.tolist()} {placement} blocked {blocked}, {objective}")
    ours = replanned_where_counted(lambda: blocked_before(cluster, placement, blocked), cluster, placement, objective)
    if ours is None:
        return
    assert (ours.method, declined_first(ours)) == ("counts", ()), ours.notes
    event(f"{ours.method} {ours.status}")
