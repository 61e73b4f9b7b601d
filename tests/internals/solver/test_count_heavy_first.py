"""A part with no clique tree and ``nodes`` alone weighed takes the relaxed path at any size,
started from the heavy-first answer (``heavy_first.py``, ``weighed.py``).

* The heavy-first answer, when it has one, fills every shape's nodes and places every group.
* With the relaxation keeping only a few patterns for the first solve (``RELAXED_PAST`` 3, the
  tight case: most graphs with a hole are relaxed, and some answers need a pattern it left
  out), every such spec is still proven by the count model at the flat model's optimum.
* Stated by the maximal patterns instead (``weighed._maximal``, ``maximal.MIN_PATTERNS`` 0 so
  small specs take it), every such spec is proven at the flat model's optimum too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import declined_first
from hypothesis import HealthCheck, event, given, note, settings
from test_count_holes import counted, flat_optimum, random_graphs

from solver_placement import Cluster, InfeasiblePlacementError, PlacementSpec, solve
from solver_placement._solver.counts import maximal, patterns, weighed
from solver_placement._solver.counts.graphs import apart_graph
from solver_placement._solver.counts.heavy_first import heavy_first
from solver_placement._solver.counts.problem import CountProblem, count_problem
from solver_placement._solver.counts.reduced_costs import relax


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs())
def test_the_heavy_first_answer_fills_every_node_and_group(case: tuple[Cluster, dict[str, Any]]) -> None:
    cluster, placement = case
    note(f"{cluster.gpus_per_node.tolist()} {placement}")
    try:
        spec = PlacementSpec.build(cluster, placement)
    except InfeasiblePlacementError:
        return
    problem = count_problem(spec, spec.requests)
    if not isinstance(problem, CountProblem):
        return
    found = [run.ranked(np.ones(run.patterns.shape[0], dtype=bool)).shape for run in _walked(problem, spec)]
    start = heavy_first(problem, found)
    event("an answer" if start is not None else "groups left over")
    if start is None:
        return
    placed = np.zeros(len(problem.classes), dtype=np.int64)
    for s, shape in enumerate(found):
        assert sum(nodes for (shape_index, _, _), nodes in start.items() if shape_index == s) == shape.nodes.size
        for (shape_index, _, p), nodes in start.items():
            if shape_index == s:
                for k, groups in zip(shape.tables[0].columns, shape.tables[0].patterns[p]):
                    placed[shape.part[k]] += nodes * groups
    assert placed.tolist() == [c.groups for c in problem.classes]


def proven_holes(calls: list[int], path: str) -> tuple[int, int]:
    """Random graphs drawn (40): each with a hole (no chord) must be proven at the flat optimum;
    how many were, and how many of those went through ``path`` (one more entry in ``calls``)."""
    proven: list[bool] = []

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(random_graphs())
    def check(case: tuple[Cluster, dict[str, Any]]) -> None:
        cluster, placement = case
        note(f"{cluster.gpus_per_node.tolist()} {placement}")
        try:
            spec = PlacementSpec.build(cluster, placement)
            before = len(calls)
            solution = solve(spec, time_limit_s=10)
        except InfeasiblePlacementError:
            event("infeasible")
            return
        if not _has_hole(placement):
            event("chordal: counted clique by clique")
            return
        event(f"a hole: {path}" if len(calls) > before else "a hole")
        assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
        assert counted(solution) == flat_optimum(spec)
        proven.append(len(calls) > before)

    check()
    return len(proven), sum(proven)


def test_the_relaxed_path_proves_holes_at_the_flat_optimum(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(patterns, "MAX_PATTERNS", 2)  # every graph with a hole past the patterns listed
    monkeypatch.setattr(weighed, "RELAXED_PAST", 3)  # and relaxed
    relaxed: list[int] = []

    def counted_relax(*args: Any, **kwargs: Any) -> Any:
        relaxed.append(1)
        return relax(*args, **kwargs)

    monkeypatch.setattr(weighed, "relax", counted_relax)
    proven, through = proven_holes(relaxed, "relaxed")
    assert proven >= 5 and through >= 5


def test_the_maximal_patterns_prove_holes_at_the_flat_optimum(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(patterns, "MAX_PATTERNS", 2)  # every graph with a hole past the patterns listed
    monkeypatch.setattr(maximal, "MIN_PATTERNS", 0)  # and stated by its maximal patterns, however few
    stated: list[int] = []

    def counted_maximal(*args: Any, **kwargs: Any) -> Any:
        stated.append(1)
        return maximal.solve_maximal(*args, **kwargs)

    monkeypatch.setattr(weighed, "solve_maximal", counted_maximal)
    proven, through = proven_holes(stated, "its maximal patterns")
    assert proven >= 5 and through == proven


def _walked(problem: CountProblem, spec: PlacementSpec) -> list[Any]:
    """The walked runs of every part, as ``weighed.counted_with_ranks`` lists them (nothing priced)."""
    bases = np.zeros((len(problem.classes), spec.cluster.num_nodes), dtype=np.int64)
    runs = []
    for part in patterns.parts(problem, False):
        runs += weighed.walked_runs(problem, part, spec.cluster, bases, spec.requests, lambda _: None, priced=False)
    return runs


def _has_hole(placement: dict[str, Any]) -> bool:
    """Whether the exclusivity graph of ``placement`` is not chordal."""
    names = list(placement)
    pairs = {tuple(sorted((a, names.index(o)))) for a, body in enumerate(placement.values()) for o in body["exclusive_with"]}
    return not apart_graph(len(names), pairs).chordal
