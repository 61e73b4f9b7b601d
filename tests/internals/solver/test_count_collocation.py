"""The count model on collocated components of every shape (``counts/followers.py``): chains,
trees and cycles of ``collocate_with``, followers of other process sizes, strides, tensor-parallel
sizes and node groups than their targets; and specs of rank strings alone
(``counts/rank_strings.py``). Where the count model answers, its layout passes the verifier, its
objective is the exact flat model's optimum on the same spec (an independent formulation: one
boolean per process and GPU), and ``solve`` answers by counts; where it finds no answer, the flat
model proves there is none; where it declines, it says one of the reasons it may."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from flat_model import PRIMARY, counted_case, counts_kept_out, flat_optimum, flat_solution
from helpers import declined_first, example_tiers
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from solver_placement import Cluster, InfeasiblePlacementError, PlacementSpec, Solution, solve, verify
from solver_placement._solver.answer import Answer, Declined
from solver_placement._solver.counts import count_path
from solver_placement._solver.counts.model import NO_COUNT_ANSWER
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.options import SolverOptions

#: The terms the count model proves (``contiguity`` only orders its ties).
#: What the count model may still decline a collocated class for: a strided member whose blocks do
#: not tile the class's groups (the count layout would ask more than the rule), or followers its
#: layout cannot nest in their targets' groups (the flat model decides both).
MAY_DECLINE = re.compile(r"a stride whose blocks of \d+ GPUs do not tile the groups|processes that the count layout cannot nest in")
#: What the count model may decline a class of a holey root (``strided.holey``) for: no member's
#: processes tiled by every other's, and the class counted in whole blocks or common progressions
#: has no answer or misses the bound of the class counted without them.
MAY_DECLINE_HOLEY = re.compile(r"no member's processes are tiled by every other's|processes that the count layout cannot nest in")


@st.composite
def collocated_specs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """1-3 nodes of 4 or 8 GPUs, the first in a node group ``first``; a root component (TP 1, 2
    or 4, one or two GPUs a process) and 1-3 components each collocated with an earlier one (a
    chain, a tree, sometimes a cycle back to the root), each holding as many GPUs in processes of
    1, 2 or 4 (stride 1 or 2), of TP 1, 2 or 4, some confined to ``first``; sometimes a component
    exclusive with one of them."""
    gpus = draw(st.lists(st.sampled_from([4, 8]), min_size=1, max_size=3))
    total = sum(gpus)
    tp, amount = draw(st.sampled_from([1, 2, 4])), draw(st.sampled_from([1, 1, 2]))
    held = tp * amount * draw(st.integers(1, max(1, total // (2 * tp * amount))))
    spec: dict[str, Any] = {"c0": {"processes": held // amount, "tensor_parallel_size": tp} | ({"hardware_per_process": amount} if amount > 1 else {})}
    for i in range(1, draw(st.integers(2, 4))):
        each = draw(st.sampled_from([a for a in (1, 2, 4) if held % a == 0]))
        processes = held // each
        body: dict[str, Any] = {"processes": processes, "tensor_parallel_size": draw(st.sampled_from([t for t in (1, 2, 4) if processes % t == 0]))}
        body["collocate_with"] = f"c{draw(st.integers(0, i - 1))}"
        if each > 1:
            body["hardware_per_process"] = each
            if draw(st.integers(0, 3)) == 0:
                body["stride"] = 2
        if draw(st.integers(0, 4)) == 0:
            body["node_group"] = "first"
        spec[f"c{i}"] = body
    if len(spec) > 2 and draw(st.integers(0, 4)) == 0:
        spec["c0"]["collocate_with"] = f"c{len(spec) - 1}"  # a cycle
    if draw(st.integers(0, 2)) == 0:
        spec["other"] = {"processes": draw(st.integers(1, max(1, total // 2))), "exclusive_with": [draw(st.sampled_from(sorted(spec)))]}
    return Cluster(len(gpus), gpus, node_groups=[{"label": "first", "node_ranks": "0"}]), spec


def counted(spec: PlacementSpec) -> Answer | str:
    """The count path's answer on the terms it proves, or the reason it declines."""
    answer = count_path(spec, spec.requests, PRIMARY, SolverOptions(10.0, 1, 0), SolverOptions(10.0).start())
    return answer if isinstance(answer, Answer) else answer.reason


@example_tiers(40, 80)
def test_collocated_classes_are_counted_exactly(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(collocated_specs())(check_collocated))()


def check_collocated(case: tuple[Cluster, dict[str, Any]]) -> None:
    answer = counted_or_declined(case, MAY_DECLINE)
    if answer is None:
        return
    spec, counted_answer = answer
    assert objective_value(spec, spec.requests, counted_answer.assignments, PRIMARY, {}) == counted_answer.objective
    solution = solve(spec, time_limit_s=10)
    assert (solution.method, solution.status, solution.objective, declined_first(solution)) == ("counts", "OPTIMAL", counted_answer.objective, ())
    event("counted")


def counted_or_declined(case: tuple[Cluster, dict[str, Any]], may_decline: re.Pattern[str]) -> tuple[PlacementSpec, Answer] | None:
    """The drawn case's spec and count answer, verified and at the flat optimum; None where the
    case is refused, has no placement (the flat model agrees) or is declined for a reason
    ``may_decline`` names."""
    drawn = counted_case(*case)
    if drawn is None:
        return None
    spec, answer = drawn
    if isinstance(answer, Declined):
        if answer.reason == NO_COUNT_ANSWER:
            assert flat_optimum(spec, dict(spec.requests)) is None, "the count model found no answer for a spec that has a placement"
            event("no placement")
            return None
        declined = may_decline.search(answer.reason)
        assert declined, answer.reason
        event("declined: " + declined.group(0)[:30])
        return None
    assert answer.assignments is not None and answer.status == "OPTIMAL"
    verify(spec, Solution(spec, spec.requests, dict(answer.assignments), "FEASIBLE", None).placements_by_component())
    assert answer.objective == flat_optimum(spec, dict(spec.requests))
    return spec, answer


#: One of each shape the count model once declined, on 2 x 8 GPUs (the last on a node group of
#: node 0 for the follower): a chain, a cycle, a follower whose TP groups hold two of its
#: target's, one whose processes span two of its target's groups, a strided follower whose
#: target's groups must be taken in its processes' order (alone, and beside a follower of a longer
#: block of consecutive GPUs), and a follower on a narrower node group.
SHAPES: list[tuple[str, dict[str, Any]]] = [
    ("chain", {"actor": {"processes": 8, "tensor_parallel_size": 2}, "rollout": {"processes": 4, "hardware_per_process": 2, "collocate_with": "actor"},
               "ref": {"processes": 8, "collocate_with": "rollout"}, "critic": {"processes": 6, "exclusive_with": ["ref"]}}),
    ("cycle", {"a": {"processes": 4, "tensor_parallel_size": 2, "collocate_with": "b"}, "b": {"processes": 4, "collocate_with": "a"}}),
    ("wider TP", {"actor": {"processes": 6, "tensor_parallel_size": 2}, "rollout": {"processes": 6, "tensor_parallel_size": 3, "collocate_with": "actor"}}),
    ("process over groups", {"actor": {"processes": 8, "tensor_parallel_size": 2}, "rollout": {"processes": 2, "hardware_per_process": 4, "collocate_with": "actor"}}),
    ("strided in a group's order", {"actor": {"processes": 8, "tensor_parallel_size": 2},
                                    "rollout": {"processes": 4, "hardware_per_process": 2, "stride": 2, "tensor_parallel_size": 2, "collocate_with": "actor"}}),
    ("strided beside a wider block", {"actor": {"processes": 4, "tensor_parallel_size": 2}, "rollout": {"processes": 1, "hardware_per_process": 4, "collocate_with": "actor"},
                                      "ref": {"processes": 2, "hardware_per_process": 2, "stride": 2, "tensor_parallel_size": 2, "collocate_with": "actor"}}),
    ("narrower node group", {"actor": {"processes": 4}, "rollout": {"processes": 4, "node_group": "first", "collocate_with": "actor"},
                             "other": {"processes": 8, "exclusive_with": ["actor"]}}),
]


@pytest.mark.parametrize(("what", "placement"), SHAPES, ids=[what for what, _ in SHAPES])
def test_each_shape_of_collocation_is_proven_by_the_count_model(what: str, placement: dict[str, Any]) -> None:
    spec = PlacementSpec.build(Cluster(2, 8, node_groups=[{"label": "first", "node_ranks": "0"}]), placement)
    solution = solve(spec, time_limit_s=10)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    flat = flat_solution(spec, {"contiguity": 0})
    assert (flat.method, flat.status) == ("search", "OPTIMAL")
    assert solution.objective == objective_value(spec, spec.requests, flat.assignments, PRIMARY, {})


def test_a_target_may_take_its_strided_followers_processes_as_its_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    """8 processes of TP 2 on one 8-GPU node with a follower of 2 GPUs at stride 2: each group
    must hold one follower process, ``{h, h + 2}``. The flat model ordered every process of the
    target by its ranks, which forms groups ``{0, 1}``, ``{2, 3}`` ... only, and refused the
    spec as infeasible; it now orders them within a group, and groups by their first."""
    placement = {"actor": {"processes": 8, "tensor_parallel_size": 2}, "rollout": {"processes": 4, "hardware_per_process": 2, "stride": 2, "collocate_with": "actor"}}
    spec = PlacementSpec.build(Cluster(1, 8), placement)
    counts_kept_out(monkeypatch)
    flat = solve(spec, time_limit_s=10)
    assert (flat.method, flat.status) == ("search", "OPTIMAL")
    groups = [sorted(p.hardware_ranks[0] for p in flat.placements("actor")[g : g + 2]) for g in range(0, 8, 2)]
    assert sorted(sorted(p.hardware_ranks) for p in flat.placements("rollout")) == sorted(groups)


def test_components_exclusive_but_collocated_through_a_third_are_refused_by_name() -> None:
    """Two followers of one target hold its GPUs, so they cannot be exclusive with each other; the
    counting bounds see only a pair collocated directly. The count model used to place both on
    the same GPUs (a VerificationError); it declines, and the exact model names the statements."""
    placement = {"r": {"processes": 4}, "a": {"processes": 4, "collocate_with": "r", "exclusive_with": ["c"]}, "c": {"processes": 4, "collocate_with": "r"}}
    spec = PlacementSpec.build(Cluster(2, 4), placement)
    assert counted(spec) == "a and c: exclusive, but collocated through collocate_with (the same GPUs): no layout has that"
    with pytest.raises(InfeasiblePlacementError, match="a is exclusive with c") as refused:
        solve(spec, time_limit_s=10)
    assert "a collocates with r" in str(refused.value) and "c collocates with r" in str(refused.value)


def test_strided_blocks_that_do_not_tile_a_class_are_counted_whole_and_proven_without_them() -> None:
    """A follower of 2 GPUs at stride 2 (blocks of 4) in a target's TP groups of 2: counted in
    groups of 4 (whole blocks, a layout), proven by the count model in groups of 2 (no blocks, a
    relaxation): the critic beside it leaves no room for a better layout."""
    placement = {"actor": {"processes": 8, "tensor_parallel_size": 2}, "rollout": {"processes": 4, "hardware_per_process": 2, "stride": 2, "collocate_with": "actor"},
                 "critic": {"processes": 6, "exclusive_with": ["actor"]}}
    spec = PlacementSpec.build(Cluster(2, 8), placement)
    solution = solve(spec, time_limit_s=10)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    flat = flat_solution(spec, {"contiguity": 0})
    assert solution.objective == objective_value(spec, spec.requests, flat.assignments, PRIMARY, {})


def test_a_follower_of_a_stride_that_does_not_tile_the_class_is_counted_in_its_progressions() -> None:
    """A follower of 2 GPUs at stride 2 in a target's groups of 2 (declined before: one group per
    node would need a block of 4 GPUs half used, and the class has 2 GPUs): the class is the
    follower's progressions, ``{h, h + 2}``, each the target's group (``strided.progression_shape``)."""
    placement = {"actor": {"processes": 2, "tensor_parallel_size": 2}, "rollout": {"processes": 1, "hardware_per_process": 2, "stride": 2, "collocate_with": "actor"}}
    spec = PlacementSpec.build(Cluster(2, 4), placement)
    solution = solve(spec, time_limit_s=10)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    assert [list(p.hardware_ranks) for p in solution.placements("rollout")] == [[0, 2]]
    assert sorted(p.hardware_ranks[0] for p in solution.placements("actor")) == [0, 2]
    flat = flat_solution(spec, {"contiguity": 0})
    assert solution.objective == objective_value(spec, spec.requests, flat.assignments, PRIMARY, {})


@st.composite
def holey_classes(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """1-2 nodes of 8 or 12 GPUs; a root of 2 or 3 GPUs a process, stride 2-4, TP 1-3 not a
    multiple of the stride (its progressions leave holes in its groups, ``strided.holey``), and a
    follower of 2-4 GPUs a process, stride 1, 2 or 4, on its GPUs, sometimes beside a component
    kept off them."""
    gpus = draw(st.lists(st.sampled_from([8, 12]), min_size=1, max_size=2))
    amount, stride = draw(st.sampled_from([(a, s) for a in (2, 3) for s in (2, 3, 4) if (a - 1) * s < 12]))
    tp = draw(st.sampled_from([t for t in (1, 2, 3) if t % stride]))
    held = tp * amount * draw(st.integers(1, max(1, sum(gpus) // (2 * tp * amount))))
    spec: dict[str, Any] = {"root": {"processes": held // amount, "hardware_per_process": amount, "stride": stride} | ({"tensor_parallel_size": tp} if tp > 1 else {})}
    each = draw(st.sampled_from([b for b in (2, 3, 4) if held % b == 0] or [1]))
    spec["follower"] = {"processes": held // each, "collocate_with": "root"} | ({"hardware_per_process": each, "stride": draw(st.sampled_from([1, 2, 4]))} if each > 1 else {})
    if draw(st.booleans()):
        spec["other"] = {"processes": draw(st.integers(1, max(1, sum(gpus) - held))), "exclusive_with": ["root"]}
    return Cluster(len(gpus), gpus), spec


@example_tiers(30, 100)
def test_classes_of_a_holey_root_are_counted_exactly_or_declined_by_name(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(holey_classes())(check_holey))()


def check_holey(case: tuple[Cluster, dict[str, Any]]) -> None:
    """Where the count model answers a class of a holey root (counted in a member's
    progressions, or in common progressions or whole blocks and proven against the class
    without them), its layout passes the verifier and its objective is the flat optimum."""
    if counted_or_declined(case, MAY_DECLINE_HOLEY) is not None:
        event("counted")


def test_strides_that_share_a_factor_are_counted_in_common_progressions() -> None:
    """A root of 2 GPUs 4 apart in TP groups of 2 (holes between its progressions) with a
    follower of 2 GPUs 2 apart, a component kept off them beside: neither member's processes
    tile the other's, and whole blocks of 8 cannot nest the follower in the root's groups, so the
    count path declined. Progressions of four GPUs two apart (``{h, h + 2, h + 4, h + 6}``) hold
    one group of the root and two processes of the follower each; counted in them, the answer
    meets the bound of the class counted without them, and is the flat optimum."""
    placement = {
        "a": {"processes": 4, "hardware_per_process": 2, "stride": 4, "tensor_parallel_size": 2},
        "b": {"processes": 4, "hardware_per_process": 2, "stride": 2, "collocate_with": "a"},
        "c": {"processes": 5, "exclusive_with": ["a"]},
    }
    spec = PlacementSpec.build(Cluster(2, 8), placement)
    solution = solve(spec, time_limit_s=10)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    groups = [sorted(h for p in solution.placements("a")[g : g + 2] for h in p.hardware_ranks) for g in (0, 2)]
    assert all(np.diff(group).tolist() == [2, 2, 2] for group in groups)
    flat = flat_solution(spec, {"contiguity": 0})
    assert solution.objective == objective_value(spec, spec.requests, flat.assignments, PRIMARY, {})


# ------------------------------------------------------------------------------ rank strings alone
#: Rank strings that place: apart, sharing GPUs, and robots beside GPUs.
PLACED = [
    {"a": "0-3", "b": "4-7"},
    {"a": "0-3", "b": "2-5", "c": {"placement": "6-7", "exclusive_with": ["a"]}},
    {"a": {"placement": "0-3", "memory_gb": 30}, "b": {"placement": "2-5", "memory_gb": 30, "collocate_with": "c"}, "c": "2-5"},
]


@pytest.mark.parametrize("placement", PLACED)
def test_rank_strings_alone_are_answered_by_counts(placement: dict[str, Any]) -> None:
    solution = solve(PlacementSpec.build(Cluster(2, 4, gpu_memory_gb=80), placement))
    assert (solution.method, solution.status, solution.objective, solution.bound, declined_first(solution)) == ("counts", "OPTIMAL", None, None, ())


def test_robots_alone_are_answered_by_counts() -> None:
    configs = [{"node_rank": n, "robot_ip": f"10.0.{n}.{r}"} for n in range(2) for r in range(2)]
    cluster = Cluster(2, 2, node_groups=[{"label": "robots", "node_ranks": "0-1", "hardware": {"type": "robot", "configs": configs}}])
    solution = solve(PlacementSpec.build(cluster, {"actor": "0-3", "env": {"node_group": "robots", "placement": "0-3"}}))
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())


#: Rank strings that break a rule among themselves: exclusive ones sharing GPUs, a process limit,
#: memory, a collocation on other GPUs, a TP group over two nodes.
BROKEN = [
    {"a": "0-3", "b": {"placement": "2-5", "exclusive_with": ["a"]}},
    {"a": {"placement": "0-3", "max_processes_per_hardware": 1}, "b": "2-5"},
    {"a": {"placement": "0-3", "memory_gb": 50}, "b": {"placement": "2-5", "memory_gb": 50}},
    {"a": "0-3", "b": {"placement": "2-5", "collocate_with": "a"}},
    {"a": {"placement": "2-5", "tensor_parallel_size": 4}},
]


@pytest.mark.parametrize("placement", BROKEN)
def test_rank_strings_that_break_a_rule_are_explained_as_before(placement: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """The same explanation the exact model gives with the count path kept out (or the counting
    bounds, before either): the count path declines such a spec, it never answers it."""
    spec = PlacementSpec.build(Cluster(2, 4, gpu_memory_gb=80), placement)
    assert counted(spec) == "rank strings alone that break a rule of the spec (the exact model names which)"
    with pytest.raises(InfeasiblePlacementError) as now:
        solve(spec)
    counts_kept_out(monkeypatch)
    with pytest.raises(InfeasiblePlacementError) as before:
        solve(spec)
    assert str(now.value) == str(before.value)


def test_the_flat_model_places_groups_in_a_domain_whose_nodes_are_not_consecutive(monkeypatch: pytest.MonkeyPatch) -> None:
    """Racks ``a, b, a`` and a rank string on GPUs 0 and 5: the TP groups that keep the rule are
    ``{1, 4}`` (rack a) and ``{2, 3}`` (rack b). The flat model ordered every process by its ranks,
    which forms ``{1, 2}`` and ``{3, 4}`` only, and refused the spec; it now orders a component
    with a ``topology`` rule within its groups, and the groups by their first process."""
    cluster = Cluster(3, 2, node_labels=[{"rack": "a"}, {"rack": "b"}, {"rack": "a"}])
    placement = {"z": "0,5", "x": {"processes": 4, "tensor_parallel_size": 2, "exclusive_with": ["z"], "topology": {"tensor_parallel": {"rack": "require"}}}}
    spec = PlacementSpec.build(cluster, placement)
    counts_kept_out(monkeypatch)
    flat = solve(spec, time_limit_s=10)
    groups = [sorted(p.hardware_ranks[0] for p in flat.placements("x")[g : g + 2]) for g in (0, 2)]
    assert (flat.method, flat.status, sorted(groups)) == ("search", "OPTIMAL", [[1, 4], [2, 3]])
