"""``balance`` weighed, counted peak level by level (``counts/peak_levels.py``), held against the
flat model's optimum: the count path itself answers (no decline, not first fit or search),
proven, at the flat optimum. Rings of exclusions (what may share a GPU is an independent set of
a cycle) with stacked components, so a node's load trades against the nodes used. Each form of
a level is held so: each node's GPUs by stack (few nodes, ``per_node.py``), the count model over
whole-node patterns built once (``level_model.py``), and ``solve_counts`` itself at each level
where domains are counted."""

from __future__ import annotations

from typing import Any

import pytest
from flat_model import flat_solution
from helpers import declined_first, example_tiers
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from solver_placement import Cluster, InfeasiblePlacementError, PlacementSpec, solve, verify
from solver_placement._solver import counts
from solver_placement._solver.counts import level_model, patterns, per_node
from solver_placement._solver.counts.model import Counts
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver_settings import DEFAULT_WEIGHTS

NAMES = ("actor", "critic", "reward", "ref", "judge", "teacher")

#: ``balance`` against the nodes term, from balance first to nodes first (``contiguity`` 0: out of
#: the value, as the flat model counts it when stated).
WEIGHTS = st.fixed_dictionaries({
    "balance": st.sampled_from([1, 3, 1_000]),
    "nodes": st.sampled_from([0, 1, 10, 10_000]),
    "contiguity": st.just(0),
})  # fmt: skip


@st.composite
def rings(draw: st.DrawFn, fewest: int = 2, most: int = 4) -> tuple[Cluster, dict[str, Any]]:
    """``fewest``-``most`` nodes of 4 GPUs; 3-6 components, each exclusive with the next (a ring
    from four on: no chord), in TP groups of 1-2, together asking up to twice the cluster's GPUs
    (stacked, so most specs are feasible); maybe a rack rule required on one (domains counted)."""
    nodes = draw(st.integers(fewest, most))
    count = draw(st.integers(3, 6))
    placement: dict[str, Any] = {}
    for i, name in enumerate(NAMES[:count]):
        tp = draw(st.sampled_from([1, 1, 2]))
        groups = draw(st.integers(1, max(1, 2 * nodes * 4 // (tp * count))))
        placement[name] = {"processes": tp * groups, "tensor_parallel_size": tp, "exclusive_with": [NAMES[(i + 1) % count]]}
    racked = draw(st.sampled_from([None, *NAMES[:count]]))
    if racked is not None and placement[racked]["tensor_parallel_size"] > 1 and draw(st.booleans()):
        placement[racked]["topology"] = {"tensor_parallel": {"rack": "require"}}
    return Cluster(nodes, 4, node_labels=[{"rack": f"r{n // 2}"} for n in range(nodes)]), placement


def check_counted_at_flat_optimum(case: tuple[Cluster, dict[str, Any]], weights: dict[str, int]) -> None:
    """The count path answers, proven, at the flat model's proven optimum (a draw the flat model
    cannot prove in time is held by its bound only)."""
    cluster, placement = case
    note(f"{placement} {weights}")
    try:
        spec = PlacementSpec.build(cluster, placement)
        ours = solve(spec, time_limit_s=10, objective=weights)
    except InfeasiblePlacementError:
        event("infeasible")
        return
    verify(ours.spec, ours.placements_by_component())
    assert (ours.method, ours.status, declined_first(ours)) == ("counts", "OPTIMAL", ())
    assert ours.objective == objective_value(spec, spec.requests, ours.assignments, {**DEFAULT_WEIGHTS, **weights}, {})
    flat = flat_solution(spec, weights)
    event(f"flat {flat.status}")
    assert flat.bound is not None and flat.bound <= ours.objective <= flat.objective
    if flat.status == "OPTIMAL":
        assert ours.objective == flat.objective


@example_tiers(25, 50)
def test_balance_is_counted_at_the_flat_optimum(examples: int) -> None:
    """On 2-4 nodes each level is each node's GPUs by stack (``per_node.py``), except where a
    rack rule is counted (the count model's domains)."""
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(rings(), WEIGHTS)(check_counted_at_flat_optimum))()


@example_tiers(25, 50)
def test_balance_by_counts_of_patterns_is_at_the_flat_optimum(examples: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-node form kept out: each level is the count model over whole-node patterns, built
    once (``level_model.py``), or ``solve_counts`` itself where domains are counted."""
    monkeypatch.setattr(per_node, "MOST_NODES", 0)
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(rings(), WEIGHTS)(check_counted_at_flat_optimum))()


@example_tiers(6, 12)
def test_balance_past_the_fewest_nodes_counts_the_patterns_first(examples: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``per_node.ALONE_NODES`` (here 2, so that the flat model proves the draws in time)
    the whole-node patterns are counted first when ``patterns.shapes`` lists them all, and the
    per-node model runs only where they prove nothing; the answer is the flat optimum either way."""
    monkeypatch.setattr(per_node, "ALONE_NODES", 2)
    proven: list[bool] = []
    per_node_runs: list[bool] = []
    balanced, by_node = counts.solve_balanced, counts.counted_per_node

    def recorded_balanced(*args: Any) -> Counts | None:
        found = balanced(*args)
        proven.append(found is not None and found.status == "OPTIMAL")
        return found

    def recorded_per_node(*args: Any) -> Any:
        per_node_runs.append(True)
        return by_node(*args)

    monkeypatch.setattr(counts, "solve_balanced", recorded_balanced)
    monkeypatch.setattr(counts, "counted_per_node", recorded_per_node)

    def check(case: tuple[Cluster, dict[str, Any]], weights: dict[str, int]) -> None:
        proven.clear()
        per_node_runs.clear()
        check_counted_at_flat_optimum(case, weights)
        if proven:  # the patterns were listed, so counted before any node by stack
            assert bool(per_node_runs) == (not proven[0])
            event("patterns first" + (", then per node" if per_node_runs else ""))

    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(rings(3, 4), WEIGHTS)(check))()


@example_tiers(6, 12)
def test_balance_where_the_patterns_prove_nothing_is_counted_per_node(examples: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The patterns counted first with no answer (here forced: CP-SAT out of time on them), the
    per-node model answers, at the flat optimum."""
    monkeypatch.setattr(per_node, "ALONE_NODES", 2)
    balanced = counts.solve_balanced
    monkeypatch.setattr(counts, "solve_balanced", lambda problem, *args: None if per_node.per_node_applies(problem) else balanced(problem, *args))
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(rings(3, 4), WEIGHTS)(check_counted_at_flat_optimum))()


#: The nodes term alone (``balance`` 0): the ring's whole-node patterns in one model, no peak.
NODES_ONLY = st.fixed_dictionaries({"nodes": st.sampled_from([1, 10_000]), "balance": st.just(0), "contiguity": st.just(0)})


@example_tiers(20, 40)
def test_a_ring_past_the_patterns_listed_is_counted_at_the_flat_optimum(examples: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cycle of exclusions has no clique tree, so past the whole-node patterns
    ``patterns.shapes`` lists (4,000, here 2) the count model used to decline ("a cycle of four
    or more components kept apart, with no chord, needs whole-node patterns"); now the walk lists
    them all and the model built once counts them (``weighed._leveled``)."""
    monkeypatch.setattr(patterns, "MAX_PATTERNS", 2)
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(rings(), NODES_ONLY)(check_counted_at_flat_optimum))()


#: The benchmark's ``balance:3:6``: six components in a ring of exclusions on 3 x 8 GPUs, 9,247
#: whole-node patterns; before, the count model declined (more than 4,000 patterns a better
#: answer may use) and the flat search ended past its limit, unproven.
RING_ON_THREE_NODES = {
    "actor": {"processes": 10, "tensor_parallel_size": 2, "exclusive_with": ["critic"]},
    "critic": {"processes": 11, "exclusive_with": ["reward"]},
    "reward": {"processes": 11, "exclusive_with": ["ref"]},
    "ref": {"processes": 11, "exclusive_with": ["judge"]},
    "judge": {"processes": 11, "exclusive_with": ["teacher"]},
    "teacher": {"processes": 8, "tensor_parallel_size": 4, "exclusive_with": ["actor"]},
}


@pytest.mark.slow
def test_a_ring_of_six_on_three_nodes_is_proven_by_counts() -> None:
    """Peak 21 GPUs (the 62 GPUs spread over 3 nodes, rounded up) and the fewest nodes under
    it, 12, proven per node; the flat model takes about a minute to prove the same optimum, and
    in 10 s its answer is no better and its bound no higher."""
    spec = PlacementSpec.build(Cluster(3, 8), RING_ON_THREE_NODES)
    weights = {"balance": 1_000, "nodes": 1, "contiguity": 0}
    ours = solve(spec, time_limit_s=10, objective=weights)
    assert (ours.method, ours.status, declined_first(ours), ours.objective) == ("counts", "OPTIMAL", (), 21_012)
    flat = flat_solution(spec, weights, unproven_after_s=10)
    assert flat.bound is not None and flat.bound <= ours.objective <= flat.objective


def test_a_ring_of_six_past_the_leveled_patterns_is_proven_by_its_maximal_patterns() -> None:
    """``balance:15:178``: six components in a cycle of exclusions on 15 nodes of 8 GPUs walk
    27,289 whole-node patterns, past those the model holds level by level: each peak level is
    stated by its maximal patterns. 30 (component, node) pairs (5 nodes each, the fewest 37
    processes of a component fit) and a peak of 15 processes (221 over 15 nodes) is the least
    either term can be, alone: proven together. First fit's answer had a peak of 24."""
    placement = {name: {"processes": 37, "exclusive_with": [other]} for name, other in zip(("actor", "critic", "reward", "ref", "judge"), ("critic", "reward", "ref", "judge", "teacher"))}
    placement["teacher"] = {"processes": 36, "tensor_parallel_size": 2, "exclusive_with": ["actor"]}
    ours = solve(PlacementSpec.build(Cluster(15, 8), placement), time_limit_s=20, num_workers=1, objective={"balance": 1000, "nodes": 10000})
    assert (ours.method, ours.status, declined_first(ours), ours.objective) == ("counts", "OPTIMAL", (), 315_000)
    assert "counted over the maximal ones of 27,289 walked whole-node patterns in 1 run" in ours.notes[-1]


#: Rings of three on 2-3 nodes of 4 GPUs, each taking one shortcut of a peak level
#: (``level_relaxation.py``): the relaxation's rounding meets its bound (no CP-SAT run), its bound
#: reaches the cap (the level proven empty with no CP-SAT run), or neither: CP-SAT over the
#: patterns column generation brought in finds an answer at the bound (``_at_bound``), or, where
#: it finds none (made so here), over the patterns the bound keeps.
RING = ("actor", "critic", "reward")
SHORTCUTS = [
    pytest.param(2, (1, 1, 1), (1, 1, 1), {"balance": 1, "nodes": 0}, {"answered"}, id="rounding-meets-bound"),
    pytest.param(3, (1, 3, 2), (1, 1, 2), {"balance": 3, "nodes": 10}, {"answered", "none under the cap"}, id="bound-reaches-cap"),
    pytest.param(3, (4, 2, 3), (1, 2, 1), {"balance": 1_000, "nodes": 10_000}, {"at the bound", "none under the cap"}, id="at-the-bound"),
    pytest.param(3, (4, 2, 3), (1, 2, 1), {"balance": 1_000, "nodes": 10_000}, {"searched", "none under the cap"}, id="search-over-kept"),
]


@pytest.mark.parametrize(("nodes", "processes", "tp", "weights", "taken"), SHORTCUTS)
def test_each_level_shortcut_is_at_the_flat_optimum(
    nodes: int, processes: tuple[int, ...], tp: tuple[int, ...], weights: dict[str, int], taken: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each way a level is decided (``LevelModel.solve``) is taken, and the count path's answer
    is still the flat model's optimum (the per-node form kept out)."""
    monkeypatch.setattr(per_node, "MOST_NODES", 0)
    if "searched" in taken:  # the search over every pattern kept: the run among the generated ones finds nothing
        monkeypatch.setattr(level_model.LevelModel, "_at_bound", lambda *args: None)
    seen: set[str] = set()
    solve_level, searched = level_model.LevelModel.solve, level_model.LevelModel._searched

    runs: list[str] = []

    def recorded_solve(self: level_model.LevelModel, peak: int | None, below: int | None) -> Counts | None:
        runs.clear()
        found = solve_level(self, peak, below)
        assert found is not None
        seen.add("searched" if "CP-SAT" in runs else "at the bound" if runs else "none under the cap" if found.status == "INFEASIBLE" else "answered")
        return found

    def recorded_search(self: level_model.LevelModel, *args: Any, **kwargs: Any) -> Counts | None:
        runs.append("CP-SAT" if "work" not in kwargs else "among the patterns generated")
        return searched(self, *args, **kwargs)

    monkeypatch.setattr(level_model.LevelModel, "solve", recorded_solve)
    monkeypatch.setattr(level_model.LevelModel, "_searched", recorded_search)
    placement = {
        name: {"processes": p, "tensor_parallel_size": t, "exclusive_with": [RING[(i + 1) % len(RING)]]}
        for i, (name, p, t) in enumerate(zip(RING, processes, tp))
    }
    objective = {**weights, "contiguity": 0}
    spec = PlacementSpec.build(Cluster(nodes, 4), placement)
    ours = solve(spec, time_limit_s=10, objective=objective)
    verify(ours.spec, ours.placements_by_component())
    assert (ours.method, ours.status, declined_first(ours)) == ("counts", "OPTIMAL", ())
    assert taken <= seen
    flat = flat_solution(spec, objective)
    assert (flat.status, flat.objective) == ("OPTIMAL", ours.objective)
