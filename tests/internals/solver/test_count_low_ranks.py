"""``solve_counts``' second run (GPUs to low ranks at the proven value) is made only where it can
order something: with every node shape starting at one rank, an answer's low-ranks sum is that
rank times the GPUs asked, the same for every answer, so the run is skipped.

* On one node shape: one CP-SAT run, and the value is the flat model's optimum.
* On two shapes of different first ranks: the second run is made, at the same value.
"""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

import numpy as np
from flat_model import flat_solution
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from solver_placement import Cluster, InfeasiblePlacementError, PlacementSpec
from solver_placement._solver.counts import model
from solver_placement._solver.counts.model import Counts, solve_counts
from solver_placement._solver.counts.patterns import parts, shapes
from solver_placement._solver.counts.problem import CountProblem, count_problem
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.options import SolverOptions
from solver_placement._solver_settings import DEFAULT_WEIGHTS

NAMES = ("actor", "rollout", "critic")


@st.composite
def uniform_specs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """1-3 nodes of one GPU count (2, 4 or 8): one node shape unless a component is kept off
    some; 1-3 components in TP groups of 1-4, some exclusive with the ones before."""
    gpus = draw(st.sampled_from([2, 4, 8]))
    nodes = draw(st.integers(1, 3))
    spec: dict[str, Any] = {}
    for name in NAMES[: draw(st.integers(1, 3))]:
        tp = draw(st.sampled_from([w for w in (1, 2, 4) if w <= gpus]))
        body: dict[str, Any] = {"processes": tp * draw(st.integers(1, max(1, nodes * gpus // tp // 2))), "tensor_parallel_size": tp}
        others = [other for other in spec if draw(st.booleans())]
        if others:
            body["exclusive_with"] = others
        spec[name] = body
    return Cluster(nodes, [gpus] * nodes), spec


def _counted(spec: PlacementSpec) -> tuple[Counts | None, int, int]:
    """The count model's answer over ``spec``'s node shapes, its CP-SAT runs and how many
    distinct first ranks its shapes have."""
    problem = count_problem(spec, spec.requests)
    assert isinstance(problem, CountProblem)
    cluster = spec.cluster
    found = [shape for part in parts(problem, joint=False) for shape in shapes(problem, cluster.gpus_per_node, part, lambda _: None)]
    node_start = np.concatenate(([0], np.cumsum(cluster.gpus_per_node)[:-1]))
    # the real solver, counted; without presolve, whose first answer may already sit on the least
    # ranks (then no second run is needed: ``PRESOLVED_MOST``), so the runs are the mechanism's
    with patch.object(model, "solve_model", wraps=model.solve_model) as runs, patch.object(model, "PRESOLVED_MOST", 0):
        counts = solve_counts(problem, found, DEFAULT_WEIGHTS, node_start, SolverOptions(), SolverOptions().start())
    return counts, runs.call_count, len({int(node_start[shape.nodes[0]]) for shape in found})


def _counted_spec(case: tuple[Cluster, dict[str, Any]]) -> PlacementSpec | None:
    """A drawn case's spec, noted, or None where building it refuses it or the count model does
    not state it."""
    cluster, placement = case
    note(f"{cluster.gpus_per_node.tolist()} {placement}")
    try:
        spec = PlacementSpec.build(cluster, placement)
    except InfeasiblePlacementError:
        return None
    return spec if isinstance(count_problem(spec, spec.requests), CountProblem) else None


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(uniform_specs())
def test_one_first_rank_is_one_run_at_the_flat_optimum(case: tuple[Cluster, dict[str, Any]]) -> None:
    spec = _counted_spec(case)
    if spec is None:
        return
    counts, runs, starts = _counted(spec)
    event(f"{starts} first rank(s), {runs} run(s)")
    if counts is None or counts.status != "OPTIMAL":
        return
    assert runs == (1 if starts == 1 else 2)
    primary = {**DEFAULT_WEIGHTS, "contiguity": 0}
    flat = flat_solution(spec)
    assert counts.value == objective_value(spec, spec.requests, flat.assignments, primary, {})


def test_two_first_ranks_are_ordered_by_a_second_run() -> None:
    """A 4-GPU node and an 8-GPU node are two shapes (ranks 0 and 4): the low-ranks run is made,
    and it keeps the proven value."""
    spec = PlacementSpec.build(Cluster(2, [4, 8]), {"actor": {"processes": 4, "tensor_parallel_size": 2}})
    counts, runs, starts = _counted(spec)
    assert starts == 2
    assert counts is not None and counts.status == "OPTIMAL"
    assert runs == 2
    assert counts.value == objective_value(spec, spec.requests, flat_solution(spec).assignments, {**DEFAULT_WEIGHTS, "contiguity": 0}, {})


@st.composite
def mixed_specs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """2-4 nodes of 2, 4 or 8 GPUs each (node shapes of several first ranks, so the low-ranks
    run matters); 1-3 components as :func:`uniform_specs` draws them."""
    sizes = draw(st.lists(st.sampled_from([2, 4, 8]), min_size=2, max_size=4))
    spec: dict[str, Any] = {}
    for name in NAMES[: draw(st.integers(1, 3))]:
        tp = draw(st.sampled_from([w for w in (1, 2, 4) if w <= min(sizes)]))
        body: dict[str, Any] = {"processes": tp * draw(st.integers(1, max(1, sum(sizes) // tp // 2))), "tensor_parallel_size": tp}
        others = [other for other in spec if draw(st.booleans())]
        if others:
            body["exclusive_with"] = others
        spec[name] = body
    return Cluster(len(sizes), sizes), spec


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed_specs())
def test_an_answer_at_the_least_ranks_is_what_the_run_would_return(case: tuple[Cluster, dict[str, Any]]) -> None:
    """Where the first answer's GPUs already sit as low as ``least_ranks`` allows, the run is
    skipped; made anyway (the bound switched off), it finds nothing lower: the bound is never
    above the least the run can reach. The value is the flat model's optimum either way."""
    spec = _counted_spec(case)
    if spec is None:
        return
    skipped, runs, starts = _counted(spec)
    with patch.object(model, "least_ranks", return_value=-1):  # no answer meets it: the run is always made
        made, made_runs, _ = _counted(spec)
    if skipped is None or made is None or skipped.status != "OPTIMAL":
        return
    event(f"{starts} first rank(s), {runs} run(s) with the bound, {made_runs} without")
    assert skipped.uses == made.uses
    assert skipped.value == made.value == objective_value(spec, spec.requests, flat_solution(spec).assignments, {**DEFAULT_WEIGHTS, "contiguity": 0}, {})
