"""Two preferred domains of one member that no placement keeps, on labels that cross (racks not
inside zones): the count path first follows one rule's order and prices the other's term as a
bound (``counts/spanning.py``); where its layout misses that bound it states both terms together
over rack x zone cells (``counts/crossing.py``, exact). Every draw is proven at the exact flat
model's optimum (one boolean per process and GPU), the answer verified, or has no placement at
all (the count path then finds none; the flat model proves it)."""

from __future__ import annotations

from typing import Any

import pytest
from flat_model import counted_case, flat_optimum
from helpers import declined_first, example_tiers
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_count_domains import assert_proven_at_flat_optimum

from solver_placement import Cluster, PlacementSpec, solve
from solver_placement._solver.answer import Answer
from solver_placement._solver.counts.crossing import MAX_BOXES, joint_level
from solver_placement._solver.counts.domain_levels import JointLevel
from solver_placement._solver.counts.preferred import variants
from solver_placement._solver.counts.problem import CountProblem, count_problem
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver_settings import DEFAULT_WEIGHTS


@st.composite
def crossing_specs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """3-6 nodes of 1, 2 or 4 GPUs, each in one of three racks and one of three zones drawn
    apart (the labels cross); an actor of up to 10 processes in pipelines of 2-5 stages preferring both a rack and a
    zone; maybe a rollout collocated with it in pipelines of its own, preferring or requiring a
    rack or a zone."""
    nodes, gpus = draw(st.integers(3, 6)), draw(st.sampled_from([1, 2, 4]))
    labels = [{"rack": f"r{draw(st.integers(0, 2))}", "zone": f"z{draw(st.integers(0, 2))}"} for _ in range(nodes)]
    pp = draw(st.integers(2, 5))
    processes = pp * draw(st.integers(1, max(1, min(10, nodes * gpus) // pp)))  # small: the flat model proves its optimum in time
    spec: dict[str, Any] = {"actor": {"processes": processes, "pipeline_parallel_size": pp, "topology": {"pipeline_parallel": {"rack": "prefer", "zone": "prefer"}}}}
    stages = [p for p in (2, 3, 4, 6) if processes % p == 0]
    if stages and draw(st.booleans()):
        rule = {draw(st.sampled_from(["rack", "zone"])): draw(st.sampled_from(["prefer", "require"]))}
        spec["rollout"] = {"processes": processes, "collocate_with": "actor", "pipeline_parallel_size": draw(st.sampled_from(stages)), "topology": {"pipeline_parallel": rule}}
    return Cluster(nodes, gpus, node_labels=labels), spec


@example_tiers(20, 40)
def test_two_preferred_domains_on_crossing_labels_are_proven_at_the_flat_optimum(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(crossing_specs())(check_crossing))()


def check_crossing(case: tuple[Cluster, dict[str, Any]]) -> None:
    counted = counted_case(*case)
    if counted is None:
        return
    spec, answer = counted
    requests = dict(spec.requests)
    if isinstance(answer, Answer):
        assert_proven_at_flat_optimum(spec, requests, answer)
        return
    assert flat_optimum(spec, requests) is None, f"declined: {answer.reason}"
    event("no placement")


@st.composite
def several_label_specs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """As :func:`crossing_specs`, an actor alone whose pipelines require a rack and prefer a zone
    (or the other way round), or prefer a rack, a zone and a row of two values (all crossing)."""
    cluster, spec = draw(crossing_specs())
    rules = draw(st.sampled_from([{"rack": "require", "zone": "prefer"}, {"rack": "prefer", "zone": "require"}, {"rack": "prefer", "zone": "prefer", "row": "prefer"}]))
    labels = [{**labels, "row": f"w{draw(st.integers(0, 1))}"} for labels in cluster.node_labels]
    actor = {**spec["actor"], "topology": {"pipeline_parallel": rules}}
    return Cluster(cluster.num_nodes, int(cluster.gpus_per_node[0]), node_labels=labels), {"actor": actor}


@example_tiers(20, 40)
def test_preferred_and_required_domains_on_several_crossing_labels_are_proven_at_the_flat_optimum(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(several_label_specs())(check_crossing))()


#: Drawn cases the flat model once got wrong or could not prove. Racks ``r2, r1, r1, r0``: its
#: symmetry rule kept the processes in rank order, pipelines ``{0, 1}, {2, 3}`` spanning four
#: racks, and called that optimal; ``{1, 2}, {0, 3}`` spans three (``rules/symmetry.py``). Six
#: racks of 4 GPUs, pipelines of 3: once the pipelines may take any ranks, the search proved no
#: bound on their pieces in 10 s until each rack's items were bounded by the pipelines holding
#: some of them (``rules/one_of.py``).
FLAT_MISSED: list[tuple[Cluster, dict[str, Any]]] = [
    (Cluster(4, 1, node_labels=[{"rack": "r2", "zone": "z0"}, {"rack": "r1", "zone": "z0"}, {"rack": "r1", "zone": "z0"}, {"rack": "r0", "zone": "z0"}]),
     {"actor": {"processes": 4, "pipeline_parallel_size": 2, "topology": {"pipeline_parallel": {"rack": "prefer", "zone": "prefer"}}}}),
    (Cluster(6, 4, node_labels=[{"rack": f"r{node}", "zone": f"z{node // 2}"} for node in range(6)]),
     {"actor": {"processes": 24, "pipeline_parallel_size": 3, "topology": {"pipeline_parallel": {"rack": "prefer"}}}}),
]  # fmt: skip


@pytest.mark.parametrize("case", FLAT_MISSED)
def test_cases_the_flat_model_got_wrong_or_left_unproven_are_proven_at_its_optimum(case: tuple[Cluster, dict[str, Any]]) -> None:
    settings(max_examples=1, deadline=None, database=None)(given(st.just(case))(check_crossing))()  # the check notes its case


#: Specs declined before ("whose layout costs ..., above the count model's bound ..."): with the
#: actor's processes in rack order the zone term misses its bound (proven since in zone order, now
#: by both terms stated together).
DECLINED_BEFORE: list[tuple[int, int, list[dict[str, str]], dict[str, Any]]] = [
    (6, 4, [{"rack": "r2", "zone": "z2"}, {"rack": "r2", "zone": "z1"}, {"rack": "r1", "zone": "z2"}, {"rack": "r1", "zone": "z0"}, {"rack": "r2", "zone": "z2"},
            {"rack": "r0", "zone": "z0"}],
     {"actor": {"processes": 10, "pipeline_parallel_size": 5, "topology": {"pipeline_parallel": {"rack": "prefer", "zone": "prefer"}}},
      "rollout": {"processes": 10, "collocate_with": "actor", "pipeline_parallel_size": 2, "topology": {"pipeline_parallel": {"rack": "prefer"}}}}),
    (8, 2, [{"rack": "r1", "zone": "z0"}, {"rack": "r0", "zone": "z0"}, {"rack": "r1", "zone": "z1"}, {"rack": "r1", "zone": "z1"}, {"rack": "r1", "zone": "z1"},
            {"rack": "r2", "zone": "z0"}, {"rack": "r1", "zone": "z2"}, {"rack": "r1", "zone": "z2"}],
     {"actor": {"processes": 12, "pipeline_parallel_size": 3, "topology": {"pipeline_parallel": {"rack": "prefer", "zone": "prefer"}}},
      "rollout": {"processes": 12, "collocate_with": "actor", "pipeline_parallel_size": 6, "topology": {"pipeline_parallel": {"rack": "require"}}}}),
]  # fmt: skip


@pytest.mark.parametrize(("nodes", "gpus", "labels", "placement"), DECLINED_BEFORE)
def test_specs_declined_before_are_proven(nodes: int, gpus: int, labels: list[dict[str, str]], placement: dict[str, Any]) -> None:
    spec = PlacementSpec.build(Cluster(nodes, gpus, node_labels=labels), placement)
    solution = solve(spec, time_limit_s=10)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    assert solution.objective == flat_optimum(spec, dict(spec.requests))


def test_a_cost_the_two_terms_reach_only_together_is_proven() -> None:
    """Four nodes of 3 GPUs, one per rack x zone cell, pipelines of 4: each rack and each zone
    holds 6 GPUs, so each label alone can close its pipelines with one span (a bound of 2), but
    every pipeline spans two cells (none holds 4 GPUs), so each spans a rack or a zone, and 3
    pipelines cost 3 at least: the count path proves 3, as the flat model does."""
    labels = [{"rack": "r0", "zone": "z0"}, {"rack": "r0", "zone": "z1"}, {"rack": "r1", "zone": "z1"}, {"rack": "r1", "zone": "z0"}]
    spec = PlacementSpec.build(Cluster(4, 3, node_labels=labels), {"actor": {"processes": 12, "pipeline_parallel_size": 4, "topology": {"pipeline_parallel": {"rack": "prefer", "zone": "prefer"}}}})
    solution = solve(spec, time_limit_s=10)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    assert solution.objective == flat_optimum(spec, dict(spec.requests))
    assert objective_value(spec, spec.requests, solution.assignments, {**dict.fromkeys(DEFAULT_WEIGHTS, 0), "topology": 1}, {}) == 3


def _joint(nodes: int, gpus: int, labels: list[dict[str, str]], stages: int) -> JointLevel | str | None:
    """The actor's rack and zone preferences stated together (``counts/crossing.py``), as the
    count path states them with the rules dropped."""
    rules = {"rack": "prefer", "zone": "prefer"}
    spec = PlacementSpec.build(Cluster(nodes, gpus, node_labels=labels), {"actor": {"processes": stages, "pipeline_parallel_size": stages, "topology": {"pipeline_parallel": rules}}})
    _, dropped = variants(spec)
    problem = count_problem(dropped, dropped.requests)
    assert isinstance(problem, CountProblem)
    return joint_level(dropped, dropped.requests, problem, 0, "actor", spec.components["actor"].constraints.topology, lambda _: None)


def test_boxes_are_every_set_of_racks_and_zones_a_pipeline_can_span_with_its_spans() -> None:
    """One node per cell of 2 racks x 2 zones, pipelines of 2 stages: the four cells alone (0),
    two cells of one rack or one zone (1 span each), and both diagonals in one box of every cell
    (a rack and a zone spanned: 2)."""
    labels = [{"rack": "r0", "zone": "z0"}, {"rack": "r0", "zone": "z1"}, {"rack": "r1", "zone": "z1"}, {"rack": "r1", "zone": "z0"}]
    level = _joint(4, 1, labels, 2)
    assert isinstance(level, JointLevel)
    spans = sorted((len(box), cost) for box, cost in zip(level.boxes, level.costs))
    assert spans == [(1, 0)] * 4 + [(2, 1)] * 4 + [(4, 2)]


def test_more_boxes_than_the_limit_are_named_and_stated_one_rule_at_a_time() -> None:
    """8 racks x 4 zones, one node per cell, pipelines of 5 stages: more boxes than the model
    lists, so the member's rules are stated one at a time (the reason names the limit)."""
    labels = [{"rack": f"r{node // 4}", "zone": f"z{node % 4}"} for node in range(32)]
    level = _joint(32, 1, labels, 5)
    assert isinstance(level, str) and f"more than {MAX_BOXES:,} sets of cells" in level
