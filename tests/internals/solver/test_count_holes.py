"""The count model on exclusivity graphs that are not chordal (issue 34): GPU stacks over
independent sets state what a node may hold, so a cycle of four or more components kept apart is
counted exactly, and its optimum is the flat model's."""

from __future__ import annotations

from typing import Any

import pytest
from flat_model import PRIMARY, flat_solution
from helpers import declined_first
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from solver_placement import Cluster, InfeasiblePlacementError, PlacementSpec, Solution, solve, verify
from solver_placement._solver.counts.covers import Covers, hole
from solver_placement._solver.counts.graphs import apart_graph
from solver_placement._solver.evaluate import objective_value


def ring(names: list[str], processes: list[int], tp: int = 1) -> dict[str, Any]:
    """Components each exclusive with the next, the last with the first: a cycle with no chord."""
    placement: dict[str, Any] = {name: {"processes": p, "tensor_parallel_size": tp} for name, p in zip(names, processes)}
    for index, name in enumerate(names):
        placement[name]["exclusive_with"] = [names[(index + 1) % len(names)]]
    return placement


def flat_optimum(spec: PlacementSpec) -> int:
    """The flat model's proven optimum on the counted terms (``flat_model.py``)."""
    flat = flat_solution(spec)
    assert (flat.method, flat.status) == ("search", "OPTIMAL")
    return objective_value(spec, spec.requests, flat.assignments, PRIMARY, {})


def counted(solution: Solution) -> int:
    """The counts' answer checked by the verifier and re-evaluated outside CP-SAT."""
    verify(solution.spec, solution.placements_by_component())
    value = objective_value(solution.spec, solution.spec.requests, solution.assignments, PRIMARY, {})
    assert value == solution.objective
    return value


def test_stacks_cover_a_five_cycle_where_cliques_say_too_little() -> None:
    """Five classes in a cycle, one GPU each: every edge fits two GPUs, but two GPUs hold at most
    two classes each (an independent set of C5 has two), so three are needed."""
    pairs = {(0, 1), (1, 2), (2, 3), (3, 4), (0, 4)}
    graph = apart_graph(5, pairs)
    assert not graph.chordal and graph.holes[0].sets == ((0, 2), (0, 3), (1, 3), (1, 4), (2, 4))
    covers = Covers(hole(range(5), pairs))
    assert covers.cover((1,) * 5, 2) is None
    assert covers.cover((1,) * 5, 3) == (0, 2, 3)  # {a, c}, {b, d}, {b, e}
    assert apart_graph(4, {(0, 1), (1, 2), (2, 3)}).chordal  # a path keeps today's clique rows


@pytest.mark.parametrize(("names", "processes", "tp", "cluster"), [
    (["actor", "reward", "critic", "ref"], [6, 4, 6, 4], 1, Cluster(3, 8)),
    (["actor", "reward", "critic", "ref"], [8, 4, 8, 4], 2, Cluster(4, 8)),
    (["a", "b", "c", "d", "e"], [4, 4, 4, 4, 4], 1, Cluster(3, 4)),
    (["a", "b", "c", "d", "e"], [8, 6, 4, 6, 2], 1, Cluster(4, 4)),
    (["a", "b", "c", "d", "e"], [8, 4, 4, 8, 4], 2, Cluster(4, 8)),
])  # fmt: skip
def test_a_cycle_of_exclusions_is_counted_and_optimal(names: list[str], processes: list[int], tp: int, cluster: Cluster) -> None:
    """The 4-cycle of issue 34 (before: declined as not chordal, then the flat model's search)
    and the 5-cycle C5 are proven by the count model, at the flat model's optimum."""
    spec = PlacementSpec.build(cluster, ring(names, processes, tp))
    solution = solve(spec, time_limit_s=10)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    assert counted(solution) == flat_optimum(spec)


@st.composite
def random_graphs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """1-3 nodes of 4 GPUs (or 2 of 8), 4-5 components of TP 1 or 2 on a cycle of exclusions
    with random chords (some graphs chordal, most not), sizes up to the cluster's GPUs."""
    cluster = draw(st.sampled_from([Cluster(1, 4), Cluster(2, 4), Cluster(3, 4), Cluster(2, 8)]))
    names = ["a", "b", "c", "d", "e"][: draw(st.integers(4, 5))]
    placement: dict[str, Any] = {}
    for name in names:
        tp = draw(st.sampled_from([1, 1, 2]))
        placement[name] = {"processes": tp * draw(st.integers(1, max(1, cluster.num_hardware // (3 * tp)))), "tensor_parallel_size": tp}
    for index, name in enumerate(names):
        others = [names[(index + 1) % len(names)]]
        others += [other for other in names[index + 2:] if other not in others and draw(st.integers(0, 3)) == 0]
        placement[name]["exclusive_with"] = others
    return cluster, placement


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs())
def test_random_graphs_are_counted_at_the_flat_optimum(case: tuple[Cluster, dict[str, Any]]) -> None:
    """Wherever the count model proves an answer on a random exclusivity graph, it is the flat
    model's optimum, and its layout passes the verifier."""
    cluster, placement = case
    note(f"{cluster.gpus_per_node.tolist()} {placement}")
    try:
        spec = PlacementSpec.build(cluster, placement)
        solution = solve(spec, time_limit_s=10)
    except InfeasiblePlacementError:
        event("infeasible")
        return
    pairs = {(min(a, b), max(a, b)) for a, body in enumerate(placement.values()) for b in (list(placement).index(o) for o in body["exclusive_with"])}
    event(f"{solution.method} {solution.status}, {'chordal' if apart_graph(len(placement), pairs).chordal else 'not chordal'}")
    if solution.method == "counts" and solution.status == "OPTIMAL":
        assert counted(solution) == flat_optimum(spec)


def test_a_cycle_beside_a_rank_string_component_and_a_strided_rollout() -> None:
    """The 4-cycle's components all exclusive with a rank-string component (their stacks keep off
    its GPUs) and a strided rollout collocated with the actor (its GPUs from the stacks make
    whole runs): counted, verified, at the flat model's optimum."""
    placement = ring(["actor", "reward", "critic", "ref"], [8, 4, 8, 4], tp=2)
    for body in placement.values():
        body["exclusive_with"].append("fixed")
    placement["fixed"] = {"placement": "0-1"}
    placement["rollout"] = {"processes": 4, "hardware_per_process": 2, "stride": "auto", "collocate_with": "actor"}
    spec = PlacementSpec.build(Cluster(4, 8), placement)
    solution = solve(spec, time_limit_s=10)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    assert counted(solution) == flat_optimum(spec)
