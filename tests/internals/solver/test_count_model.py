"""The count model and first fit on random small declarative specs (issue 21).

* Whatever first fit builds passes the verifier, and whenever it builds one, ``solve`` places
  the spec too (never worse than first fit: no timeout, no refusal) and its objective (without
  the contiguity tie-break) is no larger.
* Every answer passes the independent verifier.
* Where the count model answers "optimal", its nodes term equals the optimum of the exact flat
  model (an independent formulation: one boolean per process and GPU, ``flat_model.py``).
* The objective evaluated outside CP-SAT equals CP-SAT's own value on the flat model's optimum.
* The same spec gives the same placement twice and with two CP-SAT workers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from flat_model import counts_kept_out, flat_solution
from helpers import declined_first, example_tiers
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from solver_placement import Cluster, InfeasiblePlacementError, PlacementSpec, Solution, solve, verify
from solver_placement._solver.answer import Answer, Declined, PathName
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.counts import count_path
from solver_placement._solver.counts.layout import LayoutFailed, assignments
from solver_placement._solver.counts.model import solve_counts
from solver_placement._solver.counts.patterns import parts, shapes
from solver_placement._solver.counts.problem import CountProblem, count_problem
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.first_fit import first_fit
from solver_placement._solver.options import SolverOptions
from solver_placement._solver_settings import DEFAULT_WEIGHTS

NAMES = ("actor", "reward", "critic", "judge")


@st.composite
def small_specs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """1-3 nodes of 2, 4 or 8 GPUs in racks of two, maybe of 40 or 80 GB; maybe a rank-string
    component on node 0, maybe a declarative one collocated with it; 1-3 declarative components
    in TP groups (some in pipelines required or preferred inside one rack, some with their TP
    groups required inside one, some with memory, some with a process limit), some exclusive
    (with each other or the rank string), maybe a filled window exclusive with some, maybe a
    collocated strided rollout; sizes up to the cluster's GPUs (some specs are infeasible)."""
    gpus = draw(st.lists(st.sampled_from([2, 4, 8]), min_size=1, max_size=3))
    memory = draw(st.none() | st.lists(st.sampled_from([40, 80]), min_size=len(gpus), max_size=len(gpus)))
    total = sum(gpus)
    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        first = draw(st.integers(0, gpus[0] - 1))
        spec["fixed"] = {"placement": f"{first}-{draw(st.integers(first, gpus[0] - 1))}"}
    names = NAMES[: draw(st.integers(1, 3))]
    for name in names:
        tp = draw(st.sampled_from([1, 2, 4]))
        amount = draw(st.sampled_from([1, 1, 2]))
        pp = draw(st.sampled_from([1, 1, 2]))
        groups = pp * draw(st.integers(1, max(1, total // (tp * amount * pp))))
        body: dict[str, Any] = {"processes": tp * groups, "tensor_parallel_size": tp}
        if amount > 1:
            body["hardware_per_process"] = amount
        if pp > 1:
            body |= {"pipeline_parallel_size": pp, "topology": {"pipeline_parallel": {"rack": draw(st.sampled_from(["require", "prefer"]))}}}
        elif tp > 1 and draw(st.integers(0, 3)) == 0:
            body["topology"] = {"tensor_parallel": {"rack": "require"}}
        others = [other for other in spec if draw(st.booleans())]
        if others:
            body["exclusive_with"] = others
        if memory and draw(st.booleans()):
            body["memory_gb"] = draw(st.sampled_from([20, 30, 50]))
        if draw(st.integers(0, 3)) == 0:
            body["max_processes_per_hardware"] = draw(st.sampled_from([1, 2, 3]))
        spec[name] = body
    if draw(st.integers(0, 3)) == 0:
        size = draw(st.sampled_from([w for w in (1, 2, 4) if w <= total]))
        first = draw(st.integers(0, total - size))
        spec["window"] = {"resources": f"{first}-{first + size - 1}", "exclusive_with": [n for n in names if draw(st.booleans())]}
    if "fixed" in spec and draw(st.booleans()):
        low, high = (int(end) for end in spec["fixed"]["placement"].split("-"))
        spec["shadow"] = {"processes": high - low + 1, "collocate_with": "fixed", "exclusive_with": [n for n in names if draw(st.booleans())]}
    actor = spec[names[0]]
    width = actor["tensor_parallel_size"] * actor.get("hardware_per_process", 1)
    if width % 2 == 0 and "topology" not in actor and draw(st.booleans()):
        items = actor["processes"] * actor.get("hardware_per_process", 1)
        spec["rollout"] = {"processes": items // 2, "hardware_per_process": 2, "stride": "auto", "collocate_with": names[0]}
    return Cluster(len(gpus), gpus, gpu_memory_gb=memory, node_labels=[{"rack": str(n // 2)} for n in range(len(gpus))]), spec


def nodes_term(solution: Solution) -> int:
    """Nodes used, summed over the declarative components (the ``nodes`` objective term)."""
    free = [name for name in solution.components if solution.spec.components[name].is_declarative]
    return sum(len({p.cluster_node_rank for p in solution.placements(name)}) for name in free)


@example_tiers(50, 100)
def test_never_worse_than_first_fit_and_optimal_where_claimed(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(small_specs())(check_never_worse))()


def check_never_worse(case: tuple[Cluster, dict[str, Any]]) -> None:
    """Never worse than a verified first fit; a count-model optimum is the flat model's optimum."""
    cluster, placement = case
    note(f"{cluster.gpus_per_node.tolist()} {placement}")
    try:
        spec = PlacementSpec.build(cluster, placement)
    except InfeasiblePlacementError:
        return
    built = first_fit(spec, spec.requests, SolverOptions().start())
    greedy = None
    if built is not None:  # first fit builds only what the verifier accepts (``test_first_fit.py``)
        greedy = Solution(spec, spec.requests, {c.name: built[c.rule_owner] for c in spec.components.values()}, "FEASIBLE", None)
        verify(spec, greedy.placements_by_component())
    try:
        ours = solve(spec, time_limit_s=10)
    except InfeasiblePlacementError:
        assert greedy is None, "refused a spec first fit places"
        event("infeasible")
        return
    verify(ours.spec, ours.placements_by_component())
    event(f"{ours.method} {ours.status}")
    primary = {**DEFAULT_WEIGHTS, "contiguity": 0}  # the terms both prove (contiguity only orders ties for ours)
    if greedy is not None:  # on the objective's own terms: a preferred domain may be worth a node more
        assert objective_value(spec, spec.requests, ours.assignments, primary, {}) <= objective_value(spec, spec.requests, greedy.assignments, primary, {})
    if ours.method in ("counts", "first fit") and ours.status == "OPTIMAL":  # proven by the count model or the counting bound
        flat = flat_solution(spec)
        assert flat.method == "search" and flat.status == "OPTIMAL"
        assert objective_value(spec, spec.requests, ours.assignments, primary, {}) == ours.objective
        assert ours.objective == objective_value(spec, spec.requests, flat.assignments, primary, {})


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_specs())
def test_patterns_clique_by_clique_answer_as_whole_node_patterns(case: tuple[Cluster, dict[str, Any]]) -> None:
    """The clique-tree form (used when whole-node patterns are too many) proves the same optimum
    as whole-node patterns, and its glued layout passes the verifier."""
    cluster, placement = case
    try:
        spec = PlacementSpec.build(cluster, placement)
        problem = count_problem(spec, spec.requests)
    except InfeasiblePlacementError:
        return
    if not isinstance(problem, CountProblem):
        return  # declined, or memory that fits only in pairs (counted through separations instead)
    if not all(graph.chordal for graph in problem.graphs):
        return  # a hole (classes a process limit lets share only in some mixes): whole-node patterns only
    node_start = np.concatenate(([0], np.cumsum(cluster.gpus_per_node)[:-1]))
    answers = []
    for by_clique in (False, True):
        found = [shape for part in parts(problem, joint=False) for shape in shapes(problem, cluster.gpus_per_node, part, lambda _: None, by_clique)]
        counts = solve_counts(problem, found, DEFAULT_WEIGHTS, node_start, SolverOptions(), SolverOptions().start())
        answers.append(None if counts is None else (counts.status, counts.value))
        if counts is not None and by_clique:
            try:
                placed = assignments(problem, found, counts, spec.requests, cluster)
            except LayoutFailed:  # count_path declines these (its strides cannot tile a node's free GPUs)
                return
            placed |= {n: Assignment(r.indptr, r.cand_hw, r.cand_rank, cluster.num_hardware) for n, r in spec.requests.items() if r.determined}
            solution = Solution(spec, spec.requests, {c.name: placed[c.rule_owner] for c in spec.components.values()}, "FEASIBLE", None)
            verify(spec, solution.placements_by_component())
    event(f"{len(problem.classes)} classes, {answers[0]}")
    assert answers[0] == answers[1]


def test_a_chain_of_exclusive_components_with_memory_is_proven_by_clique_tables() -> None:
    """Eleven components in a chain of exclusivity with memory on two of them, on 8- and 4-GPU
    nodes: too many whole-node patterns, so the count model lists them clique by clique and
    proves its optimum at once (before, first fit answered after 5 s, 16% above it)."""
    chain = ["actor", "critic", "reward", "ref", "judge", "teacher", "student", "scorer", "verifier", "planner"]
    sizes = {"reward": (70, "big"), "ref": (26, "small"), "scorer": (72, "big"), "planner": (26, "small")}
    placement: dict[str, Any] = {}
    for index, name in enumerate(chain):
        processes, group = sizes.get(name, (98, None))
        placement[name] = {"processes": processes, "tensor_parallel_size": 4 if name == "scorer" else 2}
        placement[name] |= ({"node_group": group} if group else {}) | ({"exclusive_with": [chain[index - 1]]} if index else {})
    placement["scorer"]["memory_gb"] = placement["actor"]["memory_gb"] = 30
    placement["scorer_rollout"] = {"processes": 36, "hardware_per_process": 2, "stride": "auto", "collocate_with": "scorer"}
    groups = [{"label": "big", "node_ranks": "0-20"}, {"label": "small", "node_ranks": "21-36"}]
    cluster = Cluster(37, [8] * 21 + [4] * 16, gpu_memory_gb=[80] * 21 + [40] * 16, node_groups=groups)
    solution = solve(PlacementSpec.build(cluster, placement), time_limit_s=5)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    verify(solution.spec, solution.placements_by_component())


@pytest.mark.parametrize("placement", [
    {"a": {"processes": 3, "exclusive_with": "all"}, "b": {"processes": 4, "tensor_parallel_size": 2}},
    {"actor": {"processes": 4, "tensor_parallel_size": 2},
     "rollout": {"processes": 2, "hardware_per_process": 2, "stride": "auto", "collocate_with": "actor"}},
])
def test_the_objective_outside_cp_sat_is_cp_sats(placement: dict[str, Any]) -> None:
    spec = PlacementSpec.build(Cluster(2, 4), placement)
    weights = {"contiguity": 1, "balance": 3}
    flat = flat_solution(spec, weights)
    assert flat.status == "OPTIMAL" and flat.method == "search"
    assert objective_value(spec, spec.requests, flat.assignments, weights, {}) == flat.objective


def test_the_count_model_is_deterministic_and_says_why_it_declines() -> None:
    placement = {"a": {"processes": 21, "exclusive_with": "all"}, "b": {"processes": 22}}
    spec = PlacementSpec.build(Cluster(8, 8), placement)
    budget = SolverOptions().start()
    weights = {**DEFAULT_WEIGHTS, "contiguity": 0}  # as solve passes them when contiguity is only the tie-break
    first, again = (count_path(spec, spec.requests, weights, SolverOptions(), budget) for _ in range(2))
    assert isinstance(first, Answer) and isinstance(again, Answer)
    assert first.status == "OPTIMAL" and first.objective == first.bound == 6 * DEFAULT_WEIGHTS["nodes"]
    assert {k: (v.hardware.tolist(), v.indptr.tolist()) for k, v in first.assignments.items()} == {
        k: (v.hardware.tolist(), v.indptr.tolist()) for k, v in again.assignments.items()}
    solved = solve(spec)  # 21 and 22 GPUs on 3 nodes each: the flat model took 60 s to not prove it
    assert (solved.status, solved.gap, nodes_term(solved)) == ("OPTIMAL", 0.0, 6)
    assert solved.placements_by_component() == solve(spec, num_workers=2).placements_by_component()
    two_preferences = {"a": {"processes": 16, "tensor_parallel_size": 8, "pipeline_parallel_size": 2,
                             "topology": {"pipeline_parallel": {"rack": "prefer", "zone": "prefer"}}}}  # fmt: skip
    declined = PlacementSpec.build(Cluster(2, 8, node_labels=[{"rack": "0"}, {"rack": "1"}]), two_preferences)
    answer = count_path(declined, declined.requests, weights, SolverOptions(), budget)  # priced as if each had its own order: a bound, met here
    assert isinstance(answer, Answer) and answer.status == "OPTIMAL"  # one pipeline over both nodes spans both racks and both zones (unlabelled nodes)
    assert answer.objective == 2 * DEFAULT_WEIGHTS["topology"] + 2 * DEFAULT_WEIGHTS["nodes"] == flat_solution(declined, {"contiguity": 0}).objective


def test_a_preferred_pipeline_domain_is_counted_as_required_and_proven() -> None:
    """Pipelines of 2 x 4 GPUs preferring one rack, racks of one 8-GPU node and of two: every
    pipeline fits a rack, so the answer with the rule required costs no topology term, and no
    placement spanning racks can beat it (the topology weight is above any nodes it could save)."""
    preferred = {"processes": 12, "tensor_parallel_size": 2, "pipeline_parallel_size": 2,
                 "hardware_per_process": 2, "topology": {"pipeline_parallel": {"rack": "prefer"}}}  # fmt: skip
    cluster = Cluster(3, 8, node_labels=[{"rack": "a"}, {"rack": "b"}, {"rack": "b"}])
    spec = PlacementSpec.build(cluster, {"a": preferred})
    solution = solve(spec)
    assert (solution.method, solution.status) == ("counts", "OPTIMAL")
    verify(spec, solution.placements_by_component())
    weights = {**DEFAULT_WEIGHTS, "contiguity": 0}
    assert objective_value(spec, spec.requests, solution.assignments, weights, {}) == solution.objective == 3 * DEFAULT_WEIGHTS["nodes"]
    wide = {"processes": 16, "tensor_parallel_size": 8, "pipeline_parallel_size": 2, "topology": {"pipeline_parallel": {"rack": "prefer"}}}
    spanning = PlacementSpec.build(Cluster(2, 8, node_labels=[{"rack": "a"}, {"rack": "b"}]), {"a": wide})
    solution = solve(spanning)  # a pipeline of two nodes in racks of one: required, it has no placement; preferred, it spans
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())  # its least spans priced (spanning.py)
    assert solution.objective == DEFAULT_WEIGHTS["topology"] + 2 * DEFAULT_WEIGHTS["nodes"]


def test_first_fit_meeting_the_counting_bound_is_the_answer_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rank string on 3 nodes with ``memory_gb`` and 22 declarative processes exclusive with it
    on 8 x 8, the count model kept out: first fit puts them on 3 other nodes, the counting bound,
    so no search runs."""
    counts_kept_out(monkeypatch)
    placement = {"a": {"placement": "0-23", "memory_gb": 10, "exclusive_with": "all"}, "b": {"processes": 22}}
    solution = solve(PlacementSpec.build(Cluster(8, 8, gpu_memory_gb=80), placement))
    assert (solution.method, solution.status, solution.bound, solution.timings["solve"]) == ("first fit", "OPTIMAL", 30_000, 0.0)
    assert solution.notes == ("the count model (declined: kept out by the test)", "first fit (its placement meets the counting bound 30,000: proven optimal)")
    verify(solution.spec, solution.placements_by_component())


#: Specs with ``max_processes_per_hardware`` the count model states (issue 34 item 2), on 2 x 4
#: GPUs: a limit that lets two classes share a GPU, one that keeps them apart, a collocated pair
#: already at the limit beside a third class, and three classes of which any two fit a limit of
#: two but not all three (counted one pair apart at a time, ``separate.py``).
LIMITED = [
    {"a": {"processes": 6, "max_processes_per_hardware": 2}, "b": {"processes": 4, "tensor_parallel_size": 2}},
    {"a": {"processes": 3, "max_processes_per_hardware": 1}, "b": {"processes": 4, "tensor_parallel_size": 2}},
    {"a": {"processes": 4, "tensor_parallel_size": 2, "max_processes_per_hardware": 2},
     "rollout": {"processes": 2, "hardware_per_process": 2, "stride": "auto", "collocate_with": "a"}, "b": {"processes": 3}},
    {name: {"processes": 5, "max_processes_per_hardware": 2} for name in ("a", "b", "c")},
]  # fmt: skip


def _assert_counted_and_proven_as_the_flat_model_proves(spec: PlacementSpec) -> None:
    """The count model answers (no decline in the notes) and proves its optimum, and that optimum
    is the flat model's (``flat_model.py``)."""
    ours = solve(spec, time_limit_s=10)
    assert (ours.method, ours.status, declined_first(ours)) == ("counts", "OPTIMAL", ())
    flat = flat_solution(spec)
    assert (flat.method, flat.status) == ("search", "OPTIMAL")
    primary = {**DEFAULT_WEIGHTS, "contiguity": 0}
    assert ours.objective == objective_value(spec, spec.requests, flat.assignments, primary, {})


@pytest.mark.parametrize("placement", LIMITED)
def test_a_process_limit_is_counted_and_proven_as_the_flat_model_proves_it(placement: dict[str, Any]) -> None:
    """The count model answers (no decline in the notes), proves its optimum, and that optimum
    is the flat model's (``flat_model.py``)."""
    spec = PlacementSpec.build(Cluster(2, 4), placement)
    _assert_counted_and_proven_as_the_flat_model_proves(spec)


def test_a_class_over_its_own_process_limit_is_declined_with_the_limit_named() -> None:
    """A rollout collocated with an actor puts two processes on each of its GPUs: a limit of one
    on the actor cannot hold, and the count model says so (the flat model explains it)."""
    placement = {"actor": {"processes": 4, "max_processes_per_hardware": 1}, "rollout": {"processes": 4, "collocate_with": "actor"}}
    spec = PlacementSpec.build(Cluster(2, 4), placement)
    reason = "actor: 2 processes per GPU with its collocated components, over max_processes_per_hardware=1"
    assert count_path(spec, spec.requests, DEFAULT_WEIGHTS, SolverOptions(), SolverOptions().start()) == Declined(PathName.COUNTS, reason)


def test_memory_that_fits_in_pairs_but_not_together_is_counted_one_pair_apart() -> None:
    """Three components of 30 GB on 80 GB GPUs: any two share a GPU, three do not. Pairs cannot
    say that, so the count model keeps one pair apart at a time (valid answers) and bounds them
    with memory stated by pairs only: here the bound is met, so the answer is proven."""
    placement = {name: {"processes": 8, "memory_gb": 30} for name in ("a", "b", "c")}
    spec = PlacementSpec.build(Cluster(2, 8, gpu_memory_gb=80), placement)
    solution = solve(spec)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    verify(spec, solution.placements_by_component())  # the verifier checks every mix on every GPU
    assert nodes_term(solution) == 3


#: Declarative components collocated with rank strings (issue 34 item 2), on 2 x 8 GPUs: alone,
#: strided beside a component exclusive with it, as the target of another rank string's
#: declarative partner, and with a declarative component collocated in turn (placed through it).
ON_RANK_STRINGS = [
    {"a": "0-3", "b": {"processes": 4, "collocate_with": "a"}},
    {"a": "0-7", "b": {"processes": 4, "hardware_per_process": 2, "stride": 2, "collocate_with": "a"},
     "c": {"processes": 6, "tensor_parallel_size": 2, "exclusive_with": ["b"]}},
    {"r": "4-11", "b": {"processes": 8, "tensor_parallel_size": 2, "collocate_with": "r"}},
    {"a": "0-3", "b": {"processes": 4, "collocate_with": "a"}, "c": {"processes": 4, "collocate_with": "b"},
     "d": {"processes": 12, "exclusive_with": ["c"]}},
]  # fmt: skip


@pytest.mark.parametrize("placement", ON_RANK_STRINGS)
def test_a_declarative_component_on_a_rank_strings_items_is_placed_first_and_counted(placement: dict[str, Any]) -> None:
    """The count model answers with no decline, proves its optimum (the placed component's
    nodes counted as a constant), and that optimum is the flat model's."""
    spec = PlacementSpec.build(Cluster(2, 8), placement)
    ours = solve(spec, time_limit_s=10)
    assert (ours.method, ours.status, declined_first(ours)) == ("counts", "OPTIMAL", ())
    primary = {**DEFAULT_WEIGHTS, "contiguity": 0}
    assert objective_value(spec, spec.requests, ours.assignments, primary, {}) == ours.objective
    flat = flat_solution(spec)
    assert (flat.method, flat.status) == ("search", "OPTIMAL")
    assert ours.objective == objective_value(spec, spec.requests, flat.assignments, primary, {})


def test_a_declarative_component_with_no_layout_on_its_targets_items_is_left_to_the_flat_model() -> None:
    """A rollout on the actor's GPUs but exclusive with a rank string on two of them: no layout,
    so the count path declines (naming it) and the flat model names the conflict."""
    placement = {"actor": "0-3", "reward": "2-3", "rollout": {"processes": 4, "collocate_with": "actor", "exclusive_with": ["reward"]}}
    spec = PlacementSpec.build(Cluster(1, 8), placement)
    answer = count_path(spec, spec.requests, DEFAULT_WEIGHTS, SolverOptions(), SolverOptions().start())
    reason = "rollout: no layout on the items of actor, which it collocates with, found by tiling or by a model of at most MAX_PRESET_PAIRS=5,000 pairs"
    assert answer == Declined(PathName.COUNTS, reason)
    with pytest.raises(InfeasiblePlacementError, match="rollout is exclusive with reward"):
        solve(spec)


RACKS = [{"rack": str(n // 2)} for n in range(4)]
#: Required tensor-parallel domains (issue 34 item 2) on 4 nodes in racks of two: groups that fit
#: a node (counted on one node, proven by the rule as it is), with a strided rollout nested in
#: them, and groups wider than a node (counted as processes, each rack holding whole groups).
IN_RACKS = [
    ({"a": {"processes": 8, "tensor_parallel_size": 4, "topology": {"tensor_parallel": {"rack": "require"}}},
      "b": {"processes": 12, "exclusive_with": ["a"]}}, 8, "counts"),
    ({"a": {"processes": 12, "tensor_parallel_size": 2, "topology": {"tensor_parallel": {"rack": "require"}}},
      "r": {"processes": 6, "hardware_per_process": 2, "stride": "auto", "collocate_with": "a"}}, 8, "counts"),
    ({"a": {"processes": 8, "tensor_parallel_size": 8, "topology": {"tensor_parallel": {"rack": "require"}}}}, 4, "counts"),
]  # fmt: skip


@pytest.mark.parametrize(("placement", "gpus", "method"), IN_RACKS)
def test_a_required_tensor_parallel_domain_is_counted_on_one_node_and_proven(placement: dict[str, Any], gpus: int, method: str) -> None:
    """The count model answers and proves it, whether groups fit a node or not; every answer is
    the flat model's optimum."""
    spec = PlacementSpec.build(Cluster(4, gpus, node_labels=RACKS), placement)
    ours = solve(spec, time_limit_s=10)
    assert (ours.method, ours.status) == (method, "OPTIMAL")
    flat = flat_solution(spec)
    assert (flat.method, flat.status) == ("search", "OPTIMAL")
    primary = {**DEFAULT_WEIGHTS, "contiguity": 0}
    assert objective_value(spec, spec.requests, ours.assignments, primary, {}) == objective_value(spec, spec.requests, flat.assignments, primary, {})


#: Filled ``resources`` windows (issue 34 item 2), on 2 x 8 GPUs: beside a component exclusive
#: with it, in TP groups over two nodes' GPUs, strided with a component collocated in it, and
#: used twice over (two processes per GPU).
FILLED = [
    {"a": {"resources": "0-3"}, "b": {"processes": 4, "exclusive_with": ["a"]}},
    {"a": {"resources": "2-9", "tensor_parallel_size": 2}, "b": {"processes": 6, "exclusive_with": ["a"]}},
    {"a": {"resources": "0-7", "hardware_per_process": 2, "stride": 2}, "b": {"processes": 8, "collocate_with": "a"},
     "c": {"processes": 4, "tensor_parallel_size": 4}},
    {"a": {"resources": "0-7", "processes": 16}, "b": {"processes": 8}},
]  # fmt: skip


@pytest.mark.parametrize("placement", FILLED)
def test_a_filled_window_is_placed_first_and_counted(placement: dict[str, Any]) -> None:
    """The count model answers with no decline and proves its optimum, the flat model's."""
    spec = PlacementSpec.build(Cluster(2, 8), placement)
    _assert_counted_and_proven_as_the_flat_model_proves(spec)
