"""The stack sums (``counts/stack_sums.py``) list exactly the whole-node patterns the walk by
cliques and covers (``patterns._fitting``) lists, in the same order: the count model takes
whichever is faster, so the two must agree on every graph (chordal, with holes, with classes
that share two by two but not all together), width, room and class kept off the node. And the
count path that lists them so, past the patterns ``patterns.shapes`` keeps, answers at the flat
model's optimum."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from helpers import declined_first
from hypothesis import HealthCheck, event, given, note, settings
from test_count_holes import counted, flat_optimum, random_graphs

from solver_placement import Cluster, InfeasiblePlacementError, PlacementSpec, solve
from solver_placement._solver.counts import patterns, ranked_runs
from solver_placement._solver.counts.covers import Covers
from solver_placement._solver.counts.graphs import ApartGraph, apart_graph
from solver_placement._solver.counts.local_costs import NodeWalk, node_patterns
from solver_placement._solver.counts.patterns import MAX_PATTERNS, TooManyPatterns, _clique_sums, _covered, _fitting
from solver_placement._solver.counts.stack_sums import MAX_CELLS, graph_stacks, in_some_hole_set, stack_sums, stacks_of


def _no_budget(stage: str) -> None:
    """Budget checks of a test: never out of time."""


def random_graph(rng: random.Random, size: int) -> ApartGraph:
    """Classes kept apart at random (cycles with no chord often among them); a third of the time
    some classes crowded: any two share a GPU, three do not."""
    pairs = {(a, b) for a, b in itertools.combinations(range(size), 2) if rng.random() < 0.4}
    if size >= 3 and rng.random() < 0.33:
        crowded = tuple(sorted(rng.sample(range(size), rng.randint(3, size))))
        return apart_graph(size, pairs, crowded, lambda classes: sum(c in crowded for c in classes) <= 2)
    return apart_graph(size, pairs)


def walked(graph: ApartGraph, widths: list[int], mask: tuple[bool, ...], room: int) -> list[tuple[int, ...]]:
    """The patterns as ``patterns.shapes`` walked them class by class (one part: every class)."""
    holes = [(found.classes, Covers(found)) for found in graph.holes]
    return list(_fitting(widths, mask, list(graph.cliques), (room,) * len(widths), _no_budget, holes))


@pytest.mark.parametrize("seed", range(6))
def test_stack_sums_list_what_cliques_and_covers_list(seed: int) -> None:
    rng = random.Random(seed)
    compared = holes = 0
    for _ in range(40):
        size = rng.randint(1, 6)
        graph = random_graph(rng, size)
        widths = [rng.choice((1, 1, 2, 4)) for _ in range(size)]
        mask = tuple(rng.random() < 0.9 for _ in range(size))
        room = rng.choice((1, 2, 3, 4, 6, 8))
        summed = stack_sums(graph, tuple(range(size)), widths, mask, room)
        assert summed is not None  # at most 9 ** 6 cells
        try:
            expected = walked(graph, widths, mask, room)
        except TooManyPatterns:
            assert summed.shape[0] > MAX_PATTERNS
            continue
        assert [tuple(row) for row in summed.tolist()] == expected, (graph, widths, mask, room)
        compared += len(expected)
        holes += bool(graph.holes)
    assert compared > 500 and holes > 3


def test_a_graph_and_part_have_their_stacks_computed_once() -> None:
    """``graph_stacks`` is ``stacks_of`` under the graph's own holes, computed once per graph and
    part (the walk, the layout of each node pattern and the per-node model all ask for them):
    an equal graph built anew gets the same tuple back, another part its own."""
    rng = random.Random(7)
    graph = random_graph(rng, 6)
    again = ApartGraph(graph.pairs, graph.cliques, graph.order, graph.holes)
    part = (0, 2, 3, 5)
    assert graph_stacks(graph, part) == stacks_of(graph, part, in_some_hole_set(graph))
    assert graph_stacks(again, part) is graph_stacks(graph, part)
    assert graph_stacks(graph, (0, 1)) == stacks_of(graph, (0, 1), in_some_hole_set(graph))


def test_a_cycle_of_five_on_two_gpus_holds_one_each_of_at_most_four() -> None:
    """The tight case of a hole: five classes in a cycle of exclusions fit no two GPUs with one
    GPU each (the cliques' sums alone would allow it), but any four of them do."""
    graph = apart_graph(5, {(0, 1), (1, 2), (2, 3), (3, 4), (0, 4)})
    summed = {tuple(row) for row in stack_sums(graph, tuple(range(5)), [1] * 5, (True,) * 5, 2).tolist()}  # type: ignore[union-attr]
    assert (1, 1, 1, 1, 1) not in summed
    assert all(tuple(int(k != left) for k in range(5)) in summed for left in range(5))
    assert (1, 1, 1, 1, 1) in {tuple(row) for row in stack_sums(graph, tuple(range(5)), [1] * 5, (True,) * 5, 3).tolist()}  # type: ignore[union-attr]


def test_a_table_past_its_cells_is_left_to_the_walk() -> None:
    size = 1
    while 9**size <= MAX_CELLS:
        size += 1
    graph = apart_graph(size, set())
    assert stack_sums(graph, tuple(range(size)), [1] * size, (True,) * size, 8) is None
    assert np.array_equal(stack_sums(graph, (0,), [1], (True,), 8), np.arange(9)[:, None])


@pytest.mark.parametrize("seed", range(3))
def test_stack_sums_list_what_the_walk_over_gpus_lists(seed: int) -> None:
    """Where nothing weighs local ids (``contiguity`` at 0), ``ranked_runs`` lists a plain node's
    patterns by stack sums instead of the walk (``local_costs.py``): the same patterns, in the
    same order."""
    rng = random.Random(seed)
    compared = 0
    for _ in range(40):
        size, capacity = rng.randint(1, 5), rng.choice((2, 4, 6, 8))
        graph = random_graph(rng, size)
        part = tuple(range(size))
        walk = NodeWalk(
            capacity, (1,) * size, tuple(rng.choice((1, 2, 4)) for _ in range(size)), tuple(rng.random() < 0.9 for _ in range(size)),
            ((),) * size, (1,) * size, stacks_of(graph, part, in_some_hole_set(graph)),
        )  # fmt: skip
        summed = stack_sums(graph, part, walk.widths, walk.allowed, capacity)
        assert summed is not None
        patterns, _ = node_patterns(walk, _no_budget)
        assert np.array_equal(summed, patterns), (graph, walk)
        compared += patterns.shape[0]
    assert compared > 500


@pytest.mark.parametrize("seed", range(3))
def test_clique_sums_by_arrays_list_what_the_walk_lists(seed: int) -> None:
    """A part with no hole is listed by arrays (``patterns._clique_sums``): the patterns the walk
    by cliques lists (``patterns._covered`` with no hole), in its order, and too many exactly
    when it finds too many."""
    rng = random.Random(seed)
    compared = too_many = 0
    for _ in range(60):
        size = rng.randint(1, 9)
        cliques = [tuple(sorted(rng.sample(range(size), rng.randint(1, min(size, 3))))) for _ in range(rng.randint(0, size))]
        widths = [rng.choice((1, 2, 4)) for _ in range(size)]
        mask = tuple(rng.random() < 0.9 for _ in range(size))
        rooms = (rng.choice((2, 4, 8)),) * size
        try:
            expected = list(_covered(widths, mask, cliques, rooms, _no_budget, ()))
        except TooManyPatterns:
            with pytest.raises(TooManyPatterns):
                _clique_sums(widths, mask, cliques, rooms, _no_budget)
            too_many += 1
            continue
        assert _clique_sums(widths, mask, cliques, rooms, _no_budget) == expected, (cliques, widths, mask, rooms)
        compared += len(expected)
    assert compared > 2_000 and too_many > 3


def test_a_hole_past_the_patterns_listed_is_counted_at_the_flat_optimum(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the whole-node patterns ``patterns.shapes`` lists (4,000, here 2 so that every graph
    with a hole goes there) and with no clique tree, the walk's runs list them by stack sums
    (``ranked_runs._listed``, nothing priced): every such spec is proven by the count model, at
    the flat model's optimum."""
    monkeypatch.setattr(patterns, "MAX_PATTERNS", 2)
    listed: list[int] = []  # the patterns each walk listed by stack sums

    def summed(*args: object) -> np.ndarray | None:
        found = stack_sums(*args)  # type: ignore[arg-type]
        listed.append(-1 if found is None else found.shape[0])
        return found

    monkeypatch.setattr(ranked_runs, "stack_sums", summed)

    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(random_graphs())
    def check(case: tuple[Cluster, dict]) -> None:
        cluster, placement = case
        note(f"{cluster.gpus_per_node.tolist()} {placement}")
        try:
            spec = PlacementSpec.build(cluster, placement)
            solution = solve(spec, time_limit_s=10)
        except InfeasiblePlacementError:
            event("infeasible")
            return
        if spec.requests and not _has_hole(placement):
            event("chordal: counted clique by clique")
            return
        event("a hole: listed by stack sums")
        assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
        assert counted(solution) == flat_optimum(spec)

    check()
    assert sum(found > 0 for found in listed) >= 5


def _has_hole(placement: dict) -> bool:
    """Whether the exclusivity graph of ``placement`` is not chordal."""
    names = list(placement)
    pairs = {tuple(sorted((a, names.index(o)))) for a, body in enumerate(placement.values()) for o in body["exclusive_with"]}
    return not apart_graph(len(names), pairs).chordal
