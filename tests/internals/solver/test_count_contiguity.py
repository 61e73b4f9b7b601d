"""Weighed ``contiguity`` in the count model (issue 34): the sum of the ranks taken is a term of the
count model's objective, not a tie-break, and where the count model proves its answer optimal
that optimum is the flat model's (``flat_model.py``: one boolean per process and GPU, every
pair weighed by its rank).

* The count answer's objective is the spec's own objective of its layout (``evaluate.py``).
* Its bound is at most the flat optimum, its objective at least it; proven, both are equal.
* On the regular cases below (whole-node groups, consecutive processes, exclusive components,
  a rank string to avoid) the count model proves its answer.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from flat_model import flat_solution
from helpers import declined_first, example_tiers
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from test_count_model import small_specs

from solver_placement import Cluster, InfeasiblePlacementError, PlacementSpec, Solution, solve, verify
from solver_placement._solver.counts import patterns, ranked_search, weighed
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver_settings import DEFAULT_WEIGHTS

#: Weights that make ranks trade against nodes and balance (a few GPUs' ranks outweigh a node).
WEIGHTS = st.fixed_dictionaries({
    "contiguity": st.sampled_from([1, 3, 40]),
    "nodes": st.sampled_from([0, 1, 10, 10_000]),
    "balance": st.sampled_from([0, 0, 2]),
})  # fmt: skip


def check_against_flat(spec: PlacementSpec, weights: dict[str, int]) -> Solution:
    """The answer, held against the flat optimum when the count model gave it."""
    ours = solve(spec, time_limit_s=10, objective=weights)
    verify(ours.spec, ours.placements_by_component())
    if ours.method != "counts":
        return ours
    full = {**DEFAULT_WEIGHTS, **weights}
    assert ours.objective == objective_value(spec, spec.requests, ours.assignments, full, {})
    flat = flat_solution(spec, weights)
    if flat.status != "OPTIMAL":  # the flat model proved no optimum in time
        assert ours.bound is not None and ours.bound <= flat.objective
        return ours
    assert ours.bound is not None and ours.bound <= flat.objective <= ours.objective
    if ours.status == "OPTIMAL":
        assert ours.objective == flat.objective
    return ours


@example_tiers(40, 80)
def test_a_weighed_contiguity_is_counted_at_the_flat_optimum(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(small_specs(), WEIGHTS)(check_random))()


def check_random(case: tuple[Cluster, dict[str, Any]], weights: dict[str, int]) -> None:
    cluster, placement = case
    note(f"{cluster.gpus_per_node.tolist()} {placement} {weights}")
    try:
        spec = PlacementSpec.build(cluster, placement)
        ours = check_against_flat(spec, weights)
        event(f"{ours.method} {ours.status}")
    except InfeasiblePlacementError:
        event("infeasible")


#: Specs the count model proves with contiguity weighed, on 3 x 8 GPUs: exclusive components of
#: whole TP groups, processes of consecutive GPUs beside a rank string they avoid, a collocated
#: strided rollout, four components in a cycle of exclusions (GPU stacks, ``covers.py``), and a
#: declarative component on a rank string's GPUs (placed first, its ranks in the value).
PROVEN = [
    {"actor": {"processes": 4, "tensor_parallel_size": 2}, "reward": {"processes": 6, "exclusive_with": ["actor"]},
     "critic": {"processes": 2, "tensor_parallel_size": 2, "exclusive_with": ["reward"]}},
    {"fixed": "1-2", "a": {"processes": 5, "hardware_per_process": 2, "exclusive_with": ["fixed"]}},
    {"actor": {"processes": 8, "tensor_parallel_size": 2},
     "rollout": {"processes": 4, "hardware_per_process": 2, "stride": "auto", "collocate_with": "actor"},
     "reward": {"processes": 3, "exclusive_with": ["actor"]}},
    {"a": {"processes": 3, "exclusive_with": ["b"]}, "b": {"processes": 3, "exclusive_with": ["c"]},
     "c": {"processes": 3, "exclusive_with": ["d"]}, "d": {"processes": 3, "exclusive_with": ["a"]}},
    {"a": "4-7", "b": {"processes": 4, "collocate_with": "a"}, "c": {"processes": 6, "exclusive_with": ["b"]}},
]  # fmt: skip


#: Weights from ranks alone to ranks against nodes and balance (a component placed first is
#: declined beside ``balance``, with or without contiguity: ``preset.py``).
PROVEN_WEIGHTS = ({"contiguity": 1}, {"contiguity": 5, "nodes": 1}, {"contiguity": 1_000, "nodes": 1, "balance": 3})


@pytest.mark.parametrize(("placement", "weights"), [
    (placement, weights) for placement in PROVEN for weights in PROVEN_WEIGHTS
    if not ("balance" in weights and any(isinstance(body, str) for body in placement.values()))
])  # fmt: skip
def test_regular_specs_are_proven_with_contiguity_weighed(placement: dict[str, Any], weights: dict[str, int]) -> None:
    spec = PlacementSpec.build(Cluster(3, 8), placement)
    ours = check_against_flat(spec, weights)
    assert (ours.method, ours.status, declined_first(ours)) == ("counts", "OPTIMAL", ())


def test_ranks_can_outweigh_a_node() -> None:
    """Two exclusive components of 4 and 2 GPUs on 2 x 8 with a rank string on GPUs 4-11: with
    nodes weighed 1 and each rank 1, the best layout uses node 1's free GPUs for neither... the
    flat model decides; the count model must agree exactly, whichever way the trade goes."""
    placement = {"fixed": "4-11", "a": {"processes": 4, "exclusive_with": ["fixed", "b"]}, "b": {"processes": 2, "exclusive_with": ["fixed"]}}
    spec = PlacementSpec.build(Cluster(2, 8), placement)
    for weights in ({"contiguity": 1, "nodes": 1}, {"contiguity": 1, "nodes": 100}):
        ours = check_against_flat(spec, weights)
        assert (ours.method, ours.status) == ("counts", "OPTIMAL")


@example_tiers(30, 60)
def test_patterns_the_relaxation_leaves_out_hold_no_better_answer(examples: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every spec's patterns chosen by the linear relaxation (``reduced_costs.py``), which the
    count model otherwise does only past 4,000 whole-node patterns: a proven answer is still the
    flat optimum, so no pattern left out could have done better."""
    monkeypatch.setattr(weighed, "RELAXED_PAST", 0)
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(small_specs(), WEIGHTS)(check_random))()


def is_first_run(kwargs: dict[str, Any]) -> bool:
    """Whether a ``solve_counts`` call is ``rows_first``'s first run (its work bounded), not the
    run after it (``ranked_search.LAZY_SEARCH``)."""
    return "max_deterministic_time" in (kwargs.get("tuning") or {})


@example_tiers(20, 40)
def test_a_first_run_that_proves_nothing_is_followed_from_its_answer(examples: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first run with every row in CP-SAT's relaxation (``ranked_search.rows_first``) given
    almost no work, so that it proves only what its root decides: where it proves nothing, the
    second run (rows added lazily, started from its answer) follows and the answer is still the
    flat optimum; where it proves its answer, no second run. A first run that found no answer, or
    one far from its bound (``ranked_search.FAR_GAP``), may be retried first from the heavy-first
    answer (tuned as it was, the one tuned run given a start), and what follows that retry is
    the second run only where it proved nothing too. The second run searches only between the
    first's bound and one below its answer."""
    monkeypatch.setattr(ranked_search, "ROWS_FIRST_WORK", 1e-6)
    runs: list[tuple[bool, bool, str | None]] = []  # (whether it is a first run: rows-first, its work bounded; whether it had a start; its status)
    followed: list[bool] = []
    solve_counts = ranked_search.solve_counts

    def recorded(*args: Any, **kwargs: Any) -> Any:
        found = solve_counts(*args, **kwargs)
        between = kwargs.get("between")
        if between is not None:  # a second run, from an unproven first answer: below it, above that run's bound
            assert kwargs.get("tuning") == ranked_search.LAZY_SEARCH and kwargs.get("hint") is not None and between[0] <= between[1]
            assert found is None or found.status == "INFEASIBLE" or between[0] <= found.bound <= found.value <= between[1]
        runs.append((is_first_run(kwargs), kwargs.get("hint") is not None, None if found is None else found.status))
        return found

    monkeypatch.setattr(ranked_search, "solve_counts", recorded)

    def check(case: tuple[Cluster, dict[str, Any]], weights: dict[str, int]) -> None:
        runs.clear()
        check_random(case, weights)
        for (tuned, started, status), (then_tuned, then_started, _) in zip(runs, runs[1:]):
            if tuned:  # what follows a first run is a second run (or the retry) only where it proved nothing
                retried = then_tuned and then_started and not started
                assert (not then_tuned or retried) == (status != "OPTIMAL")
                followed.append(not then_tuned or retried)
        if runs and runs[-1][0]:
            assert runs[-1][2] == "OPTIMAL"

    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(small_specs(), WEIGHTS)(check))()
    assert any(followed), "no draw's first run stopped unproven: the second run was never held"


def test_a_second_run_that_finds_nothing_below_the_first_answer_proves_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first run's answer is the optimum but left unproven (its bound set 7 below, as a run
    out of work leaves it): the second run, kept between that bound and one below the answer,
    proves there is no answer there, and the first answer comes back proven, with its value."""
    spec = PlacementSpec.build(Cluster(3, 8), CYCLE_OF_FIVE)
    weights = {"contiguity": 1, "nodes": 1}
    proven = solve(spec, time_limit_s=20, objective=weights)
    seconds: list[tuple[tuple[int, int], str | None]] = []
    solve_counts = ranked_search.solve_counts

    def unproven_first(*args: Any, **kwargs: Any) -> Any:
        found = solve_counts(*args, **kwargs)
        if is_first_run(kwargs) and found is not None and found.status == "OPTIMAL":
            return replace(found, status="FEASIBLE", bound=found.value - 7)
        if kwargs.get("between") is not None:
            seconds.append((kwargs["between"], None if found is None else found.status))
        return found

    monkeypatch.setattr(ranked_search, "solve_counts", unproven_first)
    monkeypatch.setattr(weighed, "RANKED_RELAXED_PAST", weighed.RELAXED_PAST)  # every pattern in one model: no windows
    again = solve(spec, time_limit_s=20, objective=weights)
    assert (proven.method, proven.status, proven.objective) == ("counts", "OPTIMAL", 218)
    assert (again.method, again.status, again.objective, again.bound) == ("counts", "OPTIMAL", 218, 218)
    assert seconds == [((211, 217), "INFEASIBLE")]
    verify(again.spec, again.placements_by_component())


def test_a_window_answer_at_its_least_value_is_proven_without_a_second_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """A window (``objective_windows.windowed``) holds no answer below its least value (the windows before
    proved none there), so its first answer at that value is the optimum even when the run left
    its own bound lower (set 7 below here): no second run, whose domain would be empty."""
    spec = PlacementSpec.build(Cluster(3, 8), CYCLE_OF_FIVE)
    weights = {"contiguity": 1, "nodes": 1}
    domains: list[tuple[int, int]] = []
    solve_counts = ranked_search.solve_counts

    def unproven_first(*args: Any, **kwargs: Any) -> Any:
        domains.append(kwargs["between"])
        found = solve_counts(*args, **kwargs)
        if is_first_run(kwargs) and found is not None and found.status == "OPTIMAL":
            return replace(found, status="FEASIBLE", bound=found.value - 7)
        return found

    monkeypatch.setattr(ranked_search, "solve_counts", unproven_first)
    again = solve(spec, time_limit_s=20, objective=weights)
    assert (again.method, again.status, again.objective, again.bound) == ("counts", "OPTIMAL", 218, 218)
    assert domains == [(218, 218)]
    verify(again.spec, again.placements_by_component())


#: Five components in a cycle of exclusions on 3 x 8 GPUs (the benchmark's ``contiguity:3:0``):
#: 2,150 whole-node patterns, whose relaxation's bound is the optimum.
CYCLE_OF_FIVE = {
    "actor": {"processes": 6, "tensor_parallel_size": 2, "exclusive_with": ["critic"]},
    "critic": {"processes": 6, "exclusive_with": ["reward"]},
    "reward": {"processes": 6, "exclusive_with": ["ref"]},
    "ref": {"processes": 6, "tensor_parallel_size": 2, "exclusive_with": ["judge"]},
    "judge": {"processes": 6, "exclusive_with": ["actor"]},
}


def counted_patterns(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The patterns of each count model ``weighed.py`` solves, as they are solved."""
    sizes: list[int] = []
    solve_counts = ranked_search.solve_counts

    def recorded(problem: Any, shapes: Any, *args: Any, **kwargs: Any) -> Any:
        sizes.append(sum(shape.size for shape in shapes))
        return solve_counts(problem, shapes, *args, **kwargs)

    monkeypatch.setattr(ranked_search, "solve_counts", recorded)
    return sizes


def test_many_patterns_with_ranks_weighed_are_first_counted_among_those_of_least_reduced_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``RANKED_RELAXED_PAST`` whole-node patterns with ``contiguity`` weighed, the one
    model solved holds only the patterns of least reduced cost (199 of 2,150 here), and proves
    its answer: CP-SAT searched all of them for 0.19 s CPU, its root bound already the optimum."""
    sizes = counted_patterns(monkeypatch)
    spec = PlacementSpec.build(Cluster(3, 8), CYCLE_OF_FIVE)
    ours = solve(spec, time_limit_s=20, objective={"contiguity": 1, "nodes": 1})
    assert (ours.method, ours.status, ours.objective) == ("counts", "OPTIMAL", 218)
    assert len(sizes) == 1 and sizes[0] < 1_000


def test_windows_above_the_relaxations_bound_prove_the_whole_models_optimum(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the relaxation's bound sits below the optimum (the benchmark's ``contiguity:4:10``:
    its 74 patterns of least reduced cost hold no answer at the bound, 1,059), the first window
    proves that, and the next, twice as wide, holds the 153 patterns an answer up to 1,061 may use
    and proves 1,060 among them: the answer of the model over all 741 patterns."""
    placement = {name: {**body, "tensor_parallel_size": 2} for name, body in CYCLE_OF_FIVE.items()}
    placement["ref"] = {"processes": 6, "exclusive_with": ["judge"]}
    spec = PlacementSpec.build(Cluster(4, 8), placement)
    weights = {"contiguity": 5, "nodes": 1}
    whole = solve(spec, time_limit_s=20, objective=weights)
    monkeypatch.setattr(weighed, "RANKED_RELAXED_PAST", 100)
    runs: list[tuple[int, tuple[int, int]]] = []
    solve_counts = ranked_search.solve_counts

    def recorded(problem: Any, shapes: Any, *args: Any, **kwargs: Any) -> Any:
        runs.append((sum(shape.size for shape in shapes), kwargs["between"]))
        return solve_counts(problem, shapes, *args, **kwargs)

    monkeypatch.setattr(ranked_search, "solve_counts", recorded)
    windowed = solve(spec, time_limit_s=20, objective=weights)
    assert (windowed.method, windowed.status, windowed.objective) == (whole.method, whole.status, whole.objective) == ("counts", "OPTIMAL", 1_060)
    assert runs == [(74, (1_059, 1_059)), (153, (1_060, 1_061))]


@example_tiers(10, 60)
def test_windows_of_the_objective_keep_the_flat_optimum(examples: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every spec with ``contiguity`` weighed solved first in windows of the objective above the
    relaxation's bound (``RANKED_RELAXED_PAST`` 0, ``objective_windows.windowed``): a proven answer, from
    a window or from every pattern after them, is still the flat optimum. No model is solved
    twice alike (the same patterns, tuning, start and objective domain): a first window that
    would hold every pattern is the whole model's run, made once."""
    monkeypatch.setattr(weighed, "RANKED_RELAXED_PAST", 0)
    runs: list[tuple[object, int, str, bool, object]] = []  # (problem, patterns, tuning, started, objective's domain)
    solve_counts = ranked_search.solve_counts

    def recorded(problem: Any, shapes: Any, *args: Any, **kwargs: Any) -> Any:
        runs.append((problem, sum(shape.size for shape in shapes), repr(kwargs.get("tuning")), kwargs.get("hint") is not None, kwargs.get("between")))
        return solve_counts(problem, shapes, *args, **kwargs)

    monkeypatch.setattr(ranked_search, "solve_counts", recorded)

    def check(case: tuple[Cluster, dict[str, Any]], weights: dict[str, int]) -> None:
        runs.clear()
        check_random(case, weights)
        alike = [(id(problem), *rest) for problem, *rest in runs]  # the problems held in ``runs``: no id reused
        assert len(set(alike)) == len(alike), alike

    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(small_specs(), WEIGHTS)(check))()


#: Six components in a cycle of exclusions, one GPU per process, on 8-GPU nodes: 49,347
#: whole-node patterns, past what the count model holds (4,000); 20 processes each on 16 nodes.
RING_OF_SIX = {name: {"processes": 20, "exclusive_with": [following]} for name, following in zip("abcdef", "bcdefa", strict=True)}


@pytest.mark.parametrize("weights", [
    {"balance": 1},
    pytest.param({"balance": 1_000, "nodes": 1}, marks=pytest.mark.slow),
    pytest.param({"contiguity": 5, "nodes": 100}, marks=pytest.mark.slow),
])  # fmt: skip
def test_many_whole_node_patterns_are_counted_with_balance_or_ranks(weights: dict[str, int]) -> None:
    """Past 4,000 whole-node patterns, ``balance`` or a weighed ``contiguity`` keep the count
    model: the walk lists them all, the relaxation keeps those a better answer may use (a few
    thousand), and the answer is proven (the flat model proves nothing at this size in a minute;
    the property test above holds the same pruning against its optimum on small specs)."""
    spec = PlacementSpec.build(Cluster(16, 8), RING_OF_SIX)
    ours = solve(spec, time_limit_s=20, objective=weights)
    assert (ours.method, ours.status, declined_first(ours)) == ("counts", "OPTIMAL", ())
    tie_break = {} if "contiguity" in weights else {"contiguity": 0}  # not asked: only the tie-break, out of the value
    assert ours.objective == objective_value(spec, spec.requests, ours.assignments, {**DEFAULT_WEIGHTS, **weights, **tie_break}, {})


#: ``balance`` weighed without ranks (``contiguity`` 0 stated: out of the value, as the flat model counts it).
BALANCE_WEIGHTS = st.fixed_dictionaries({
    "balance": st.sampled_from([1, 2, 30]),
    "nodes": st.sampled_from([0, 1, 10, 10_000]),
    "contiguity": st.just(0),
})  # fmt: skip


@example_tiers(30, 60)
def test_balance_past_the_patterns_listed_is_counted_at_the_flat_optimum(examples: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``balance`` needs whole-node patterns; past those ``patterns.shapes`` lists (4,000, here
    2 so that every spec goes there), the walk lists them and the relaxation keeps those a better
    answer may use: a proven answer is still the flat optimum."""
    monkeypatch.setattr(patterns, "MAX_PATTERNS", 2)
    monkeypatch.setattr(weighed, "RELAXED_PAST", 0)
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(small_specs(), BALANCE_WEIGHTS)(check_random))()
