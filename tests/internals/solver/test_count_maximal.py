"""The count model over maximal patterns and each shape's give-backs (``counts/maximal.py``)
proves the full count model's optima: on every drawn spec (``MIN_PATTERNS`` lowered to 0, so
small specs take it) the count path answers at the flat model's optimum, both of its runs reach
the full model's values (the ``nodes`` term equal, the low ranks never above), and what a shape
gives back lands on patterns of its own table, with the classes each node held."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
from flat_model import solved_or_refused
from helpers import example_tiers
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from test_count_kind_memory import memory_over_kinds
from test_count_kinds import check_spanning, counted, flat_optimum
from test_count_model import small_specs

import solver_placement._solver.counts as count_path
from solver_placement import Cluster
from solver_placement._solver.counts import maximal
from solver_placement._solver.counts.maximal import MaximalTable, given_back, solve_maximal
from solver_placement._solver.counts.model import Counts, solve_counts
from solver_placement._solver.counts.patterns import Shape, TooManyPatterns
from solver_placement._solver.counts.problem import CountProblem


def _low_ranks(counts: Counts, problem: CountProblem, shapes: list[Shape], node_start: np.ndarray) -> int:
    """The second run's objective of ``counts``: each node's GPUs times its shape's first rank
    (each class's GPUs counted in its home table, where a shape has tables per clique)."""
    total = 0
    for (s, t, p), nodes in counts.uses.items():
        shape = shapes[s]
        table = shape.tables[t]
        held = [(g, shape.part[k]) for g, k in zip(table.patterns[p], table.columns) if shape.home(k) == t]
        gpus = sum(g * problem.classes[c].width * len(problem.classes[c].members) for g, c in held)
        total += nodes * gpus * int(node_start[shape.nodes[0]])
    return total


@pytest.fixture
def compared(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Counts, Counts | None]]:
    """Every spec takes the maximal model (``MIN_PATTERNS`` 0); each of its answers is checked
    against the full model's on the same problem, and recorded (maximal, full)."""
    seen: list[tuple[Counts, Counts | None]] = []
    monkeypatch.setattr(maximal, "MIN_PATTERNS", 0)

    def both(problem: CountProblem, shapes: list[Shape], tables: list[tuple[MaximalTable, ...]], weights: Mapping[str, int], node_start: np.ndarray, options: Any, budget: Any) -> Counts | None:
        mine = solve_maximal(problem, shapes, tables, weights, node_start, options, budget)
        full = solve_counts(problem, list(shapes), weights, node_start, options, budget)
        if mine is not None and full is not None and (mine.status, full.status) == ("OPTIMAL", "OPTIMAL"):
            assert mine.value == full.value
            if not weights.get("balance"):  # the full model's run keeps nodes and balance summed, this one each term
                assert _low_ranks(mine, problem, shapes, node_start) <= _low_ranks(full, problem, shapes, node_start)
            for s, shape in enumerate(shapes):  # every node of every shape holds a pattern of each of its tables
                for t in range(len(shape.tables)):
                    assert sum(n for (used, at, _), n in mine.uses.items() if (used, at) == (s, t)) == shape.nodes.size
        seen.append((mine, full) if mine is not None else (Counts({}, "NONE", 0, 0), full))
        return mine

    monkeypatch.setattr(count_path, "solve_maximal", both)
    return seen


def check_at_flat_optimum(case: tuple[Cluster, dict[str, Any]], counts_only: bool) -> None:
    """A drawn spec placed (or refused) by ``solve``: its answer at the flat optimum, every answer
    or (``counts_only``) where the count path answered."""
    cluster, placement = case
    note(f"{cluster!r} {placement}")
    solved = solved_or_refused(cluster, placement, {})
    if solved is None:
        return
    spec, solution = solved
    event(f"{solution.method} {solution.status}")
    if solution.method == "counts" or not counts_only:
        assert counted(solution, {}) == flat_optimum(spec, {})


@example_tiers(30, 60)
def test_drawn_specs_are_counted_at_the_flat_optimum_over_maximal_patterns(examples: int, compared: list) -> None:
    """Rank strings, collocation, windows, memory, process limits, strides: where the count
    path answers, at the flat optimum."""

    def check(case: tuple[Cluster, dict[str, Any]]) -> None:
        check_at_flat_optimum(case, counts_only=True)

    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])(given(small_specs())(check))()
    assert compared, "no drawn spec took the maximal model"


@example_tiers(30, 60)
def test_memory_over_gpus_and_robots_is_counted_at_the_flat_optimum_over_maximal_patterns(examples: int, compared: list) -> None:
    """The ``kinds memory`` benchmark's rules, small, with ``balance`` or without: every feasible
    draw answered by counts."""

    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])(given(memory_over_kinds())(check_spanning))()
    assert compared, "no drawn spec took the maximal model"


@example_tiers(40, 80)
def test_the_relaxation_bounds_every_peak_level_from_below(examples: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``MaximalModel.least_rest``, the bound that rules peak levels out with no CP-SAT run, is
    never above the full model's optimum of the ``nodes`` term at that level (a level with no
    answer may have any bound); drawn over the ``kinds memory`` rules with ``balance``, every
    load a node may carry."""
    monkeypatch.setattr(maximal, "MIN_PATTERNS", 0)
    levels_checked: list[int] = []

    def bounded(problem: CountProblem, shapes: list[Shape], tables: list[tuple[MaximalTable, ...]], weights: Mapping[str, int], node_start: np.ndarray, options: Any, budget: Any) -> Counts | None:
        model = maximal.MaximalModel(problem, shapes, tables, weights, node_start, options, budget)
        rest = {**weights, "balance": 0}
        for level in sorted({int(load) for per_shape in tables for load in per_shape[0].loads.tolist()}):
            full = solve_counts(problem, list(shapes), rest, node_start, options, budget, peak_at_most=level)
            bound = model.least_rest(level)
            if full is not None and full.status == "OPTIMAL" and bound is not None:
                assert bound <= full.value, f"level {level}: bound {bound} above the optimum {full.value}"
                levels_checked.append(level)
        return solve_maximal(problem, shapes, tables, weights, node_start, options, budget)

    monkeypatch.setattr(count_path, "solve_maximal", bounded)

    def check(case: tuple[Cluster, dict[str, Any], dict[str, int]]) -> None:
        cluster, placement, objective = case
        check_spanning((cluster, placement, {**objective, "balance": 10}))

    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])(given(memory_over_kinds())(check))()
    assert levels_checked, "no drawn spec had a level the relaxation bounds"


@st.composite
def strided_chains(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """The ``wide strides`` benchmark's rules, small: 1-3 nodes of 4 or 8 GPUs; 2-4 components,
    some of several GPUs a process stride 1 or 2 apart, each maybe exclusive with one or two
    before it (chains, paths, triangles: cliques that share columns); sizes up to the cluster's
    GPUs (some specs are infeasible)."""
    nodes = draw(st.integers(1, 3))
    gpus = draw(st.sampled_from([4, 8]))
    placement: dict[str, Any] = {}
    for name in ("actor", "ref", "reward", "critic")[: draw(st.integers(2, 4))]:
        amount = draw(st.sampled_from([1, 1, 2, 3]))
        body: dict[str, Any] = {"processes": draw(st.integers(1, max(1, nodes * gpus // amount)))}
        if amount > 1:
            body |= {"hardware_per_process": amount, "stride": draw(st.sampled_from([1, 2]))}
        before = sorted(placement)
        if before and draw(st.integers(0, 4)):
            body["exclusive_with"] = draw(st.lists(st.sampled_from(before), min_size=1, max_size=2, unique=True))
        placement[name] = body
    return Cluster(num_nodes=nodes, num_gpus_per_node=gpus), placement


@example_tiers(30, 60)
def test_tables_per_clique_are_counted_at_the_flat_optimum_over_maximal_patterns(examples: int, compared: list, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every shape's patterns listed per clique (as past ``patterns.MAX_PATTERNS`` whole-node
    ones: ``wide strides``), each table reduced to its maximal patterns in the columns it alone
    counts (``maximal.free_columns``): the count path answers at the flat model's optimum, and
    the full model over every clique's patterns reaches the same value (the fixture)."""
    listed = count_path.shapes
    by_clique: list[int] = []

    def per_clique(problem: CountProblem, gpus_per_node: np.ndarray, part: tuple[int, ...], check: Any, by_clique_: bool = False, whole: bool = True) -> list[Shape]:
        if not by_clique_:
            raise TooManyPatterns
        found = listed(problem, gpus_per_node, part, check, by_clique=True, whole=whole)
        by_clique.extend(len(shape.tables) for shape in found)
        return found

    monkeypatch.setattr(count_path, "shapes", lambda problem, gpus, part, check, by_clique=False, whole=True: per_clique(problem, gpus, part, check, by_clique, whole))

    def check(case: tuple[Cluster, dict[str, Any]]) -> None:
        check_at_flat_optimum(case, counts_only=False)

    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])(given(strided_chains())(check))()
    assert any(tables > 1 for tables in by_clique), "no drawn spec had a shape of several tables"
    assert any(t for mine, _ in compared for (_, t, _) in mine.uses), "no answer of the maximal model used a second table"


@pytest.mark.parametrize("seed", range(200))
def test_what_a_shape_gives_back_lands_on_its_own_patterns(seed: int) -> None:
    """Random maximal counts and give-backs within what their nodes hold past one group each:
    every class's groups lowered by exactly its give-back, every node keeping the classes it
    held, on patterns of the table (every vector below a maximal one)."""
    rng = random.Random(seed)
    size, nodes = rng.randint(1, 3), rng.randint(1, 6)
    tops = [tuple(rng.randint(0, 4) for _ in range(size)) for _ in range(rng.randint(1, 3))]
    rows = sorted({tuple(v) for top in tops for v in np.ndindex(*(t + 1 for t in top))})
    patterns = np.array(rows, dtype=np.int64).reshape(len(rows), size)
    position = {row: p for p, row in enumerate(rows)}
    grows = [any(row[k] and (*row[:k], row[k] + 1, *row[k + 1 :]) in position for k in range(size)) for row in rows]
    table = MaximalTable.of(patterns, patterns.sum(axis=1))
    assert table.maximal().tolist() == np.flatnonzero(~np.array(grows)).tolist()
    peak = rng.randint(0, 4 * size)  # a balance level: the maximal ones among the rows of load at most it
    low = {row for row in rows if sum(row) <= peak}
    assert table.maximal(peak).tolist() == [p for p, row in enumerate(rows) if row in low and not any(row[k] and (*row[:k], row[k] + 1, *row[k + 1 :]) in low for k in range(size))]
    uses: dict[tuple[int, int, int], int] = {}
    for _ in range(nodes):
        p = int(rng.choice(table.maximal().tolist()))
        uses[0, 0, p] = uses.get((0, 0, p), 0) + 1
    spare = [sum(n * max(rows[p][k] - 1, 0) for (_, _, p), n in uses.items()) for k in range(size)]
    back = {(0, 0, k): rng.randint(0, spare[k]) for k in range(size)}
    lowered = given_back([[table]], uses, back)
    assert sum(lowered.values()) == nodes
    for k in range(size):
        before = sum(n * rows[p][k] for (_, _, p), n in uses.items())
        after = sum(n * rows[p][k] for (_, _, p), n in lowered.items())
        assert before - after == back[0, 0, k]
        assert sum(n for (_, _, p), n in lowered.items() if rows[p][k]) == sum(n for (_, _, p), n in uses.items() if rows[p][k])
