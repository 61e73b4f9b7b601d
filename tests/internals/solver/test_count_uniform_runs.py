"""A node of alike GPUs where one class takes runs (issue 34, the step limit of the walk GPU by
GPU): two counts decide it (``counts/uniform_runs.py``) exactly as the walk does, and past the
walk's step limit the count model still answers, at the flat model's optimum."""

from __future__ import annotations

import itertools
import random

import pytest
from flat_model import flat_solution

from solver_placement import Cluster, PlacementSpec, solve
from solver_placement._solver.counts import patterns, runs
from solver_placement._solver.counts.patterns import parts, shapes
from solver_placement._solver.counts.problem import CountProblem, count_problem
from solver_placement._solver.counts.runs import RunsCovers
from solver_placement._solver.counts.uniform_runs import most_runs, uniform_runs
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver_settings import DEFAULT_WEIGHTS


def random_node(rng: random.Random) -> tuple[tuple[tuple[int, ...], ...], int, tuple[int, ...], tuple[int, ...]]:
    """Two to four classes, some pairs kept apart (the stacks: every set with no such pair; now
    and then the sets of three left out, as memory that fits in pairs only does), 3-8 alike
    GPUs, class 0 in runs of 2 or 3 ids 1-3 apart, the others one GPU at a time."""
    classes, capacity = rng.randint(2, 4), rng.randint(3, 8)
    pairs = {(a, b) for a in range(classes) for b in range(a + 1, classes) if rng.random() < 0.5}
    most = 2 if rng.random() < 0.2 else classes
    stacks = tuple(stack for size in range(min(classes, most), 0, -1) for stack in itertools.combinations(range(classes), size)
                   if not any((a, b) in pairs for a, b in itertools.combinations(stack, 2)))  # fmt: skip
    runs_ = (rng.choice((2, 3)), *([1] * (classes - 1)))
    steps = (rng.choice((1, 2, 3)), *([1] * (classes - 1)))
    return stacks, capacity, runs_, steps


def _most_in(ids: list[int], run: int, step: int) -> int:
    """GPUs of ``ids`` in the most whole progressions they hold."""
    total = 0
    for residue in range(step):
        chain = [g for g in sorted(ids) if g % step == residue]
        length = 0
        for i, gpu in enumerate(chain):
            length = length + 1 if i and gpu == chain[i - 1] + step else 1
            if length == run:
                total, length = total + run, 0
    return total


@pytest.mark.parametrize("seed", range(4))
def test_two_counts_decide_what_the_walk_decides(seed: int) -> None:
    """On random small nodes (chordal graphs, holes, sets that fit in pairs only),
    ``UniformRuns.holds`` agrees with the walk for every demand, and its cover gives each class
    its demand on stacks the node admits, the ranged class in whole runs."""
    rng = random.Random(seed)
    for _ in range(20):
        stacks, capacity, runs_, steps = random_node(rng)
        keep_off = [()] * len(runs_)
        walk = RunsCovers(stacks, keep_off, capacity, runs_, (), None, steps)
        counted = uniform_runs(stacks, keep_off, capacity, runs_, (), steps)
        assert counted is not None
        for demand in itertools.product(*(range(0, capacity + 1, run) for run in runs_)):
            expected = walk._searched(demand)
            assert counted.holds(demand) == expected, (stacks, capacity, runs_, steps, demand)
            held = counted.cover(demand)
            assert (held is not None) == expected
            if held is None:
                continue
            per_gpu = [tuple(c for c in range(len(runs_)) if gpu in held[c]) for gpu in range(capacity)]
            assert all(any(set(here) <= set(stack) for stack in stacks) for here in per_gpu if here)
            assert _most_in(held[0], runs_[0], steps[0]) >= demand[0]
            assert all(len(held[c]) >= demand[c] for c in range(1, len(runs_)))


def test_most_runs_counts_each_residues_chain() -> None:
    """72 ids, progressions of 5 ids 3 apart: each residue's chain of 24 ids holds 4."""
    assert most_runs(72, 5, 3) == 12
    assert most_runs(7, 3, 2) == 2  # chains 0, 2, 4, 6 and 1, 3, 5: one each
    assert most_runs(8, 2, 1) == 4


def test_nodes_not_alike_are_left_to_the_walk() -> None:
    """A class kept off some GPUs, or two classes in runs: no counts (None)."""
    stacks = ((0, 1),)
    assert uniform_runs(stacks, [(0,), ()], 4, (2, 1), (), (1, 1)) is None
    assert uniform_runs(stacks, [(), ()], 4, (2, 2), (), (1, 1)) is None


CASES = [
    {"actor": {"processes": 4, "hardware_per_process": 3, "stride": 2}, "ref": {"processes": 6, "exclusive_with": ["actor"]}, "reward": {"processes": 8}},
    {"actor": {"processes": 2, "hardware_per_process": 2, "stride": 3}, "ref": {"processes": 5, "exclusive_with": ["actor"]},
     "reward": {"processes": 4, "exclusive_with": ["ref"]}},
]  # fmt: skip


@pytest.mark.parametrize("placement", CASES, ids=["stride 2", "stride 3 beside a chain"])
def test_past_the_walks_step_limit_the_count_model_still_answers(monkeypatch: pytest.MonkeyPatch, placement: dict) -> None:
    """With the walk's step limit cut to a few steps (as a 72-GPU node meets the real one), every
    walk GPU by GPU passes it, the counts decide the nodes and lay them out, and the count path
    answers at the flat model's optimum."""
    spec = PlacementSpec.build(Cluster(2, 12), placement)
    weights = {**DEFAULT_WEIGHTS, "contiguity": 0}
    flat = flat_solution(spec, weights, time_limit_s=20)
    assert (flat.method, flat.status) == ("search", "OPTIMAL")
    monkeypatch.setattr(runs, "RUNS_STEPS", 3)
    solution = solve(spec, time_limit_s=10)
    assert (solution.method, solution.status, solution.notes) == ("counts", "OPTIMAL", ())
    value = objective_value(spec, spec.requests, solution.assignments, weights, {})
    assert value == objective_value(spec, spec.requests, flat.assignments, weights, {})


@pytest.mark.parametrize("seed", range(1))
def test_past_the_step_limit_a_node_of_alike_gpus_is_decided_by_counts(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """``RunsCovers.holds`` and ``cover`` past ``RUNS_STEPS`` answer by the counts on alike GPUs
    (before: ``OverflowError``, the node undecided), and what they answer is the walk's."""
    rng = random.Random(seed)
    for _ in range(10):
        stacks, capacity, runs_, steps = random_node(rng)
        keep_off = [()] * len(runs_)
        demands = list(itertools.product(*(range(0, capacity + 1, run) for run in runs_)))
        expected = [RunsCovers(stacks, keep_off, capacity, runs_, (), None, steps)._searched(demand) for demand in demands]
        with monkeypatch.context() as patched:
            patched.setattr(runs, "RUNS_STEPS", 0)
            walk = RunsCovers(stacks, keep_off, capacity, runs_, (), None, steps)
            assert [walk.holds(demand) for demand in demands] == expected
            assert [walk.cover(demand) is not None for demand in demands] == expected


ALIKE = [
    (12, {"actor": {"processes": 2, "hardware_per_process": 3, "stride": 2}, "ref": {"processes": 4, "exclusive_with": ["actor"]},
          "reward": {"processes": 6, "exclusive_with": ["ref"]}}),
    (10, {"actor": {"processes": 2, "hardware_per_process": 3, "stride": 3}, "ref": {"processes": 3, "exclusive_with": ["actor"]}, "reward": {"processes": 3}}),
    (16, {"actor": {"processes": 3, "hardware_per_process": 5, "stride": 2}, "ref": {"processes": 2, "exclusive_with": ["actor"]},
          "critic": {"processes": 3, "exclusive_with": ["ref"]}, "reward": {"processes": 2, "exclusive_with": ["critic", "actor"]}}),
]  # fmt: skip


@pytest.mark.parametrize(("gpus", "placement"), ALIKE, ids=["stride 2", "stride 3, chains of uneven runs", "a ring of four"])
def test_alike_nodes_list_by_cliques_what_the_walk_lists(monkeypatch: pytest.MonkeyPatch, gpus: int, placement: dict) -> None:
    """A node of alike GPUs where one class takes progressions, listed by its cliques' sums
    (``uniform_runs.sums_state_runs``) or, where the runs could bind, GPU by GPU: the same
    whole-node patterns as the walk over every GPU."""
    spec = PlacementSpec.build(Cluster(2, gpus), placement)
    problem = count_problem(spec, spec.requests)
    assert isinstance(problem, CountProblem)

    def listed() -> list[set[tuple[int, ...]]]:
        found = []
        for part in parts(problem, False):
            for shape in shapes(problem, spec.cluster.gpus_per_node, part, lambda _: None):
                assert len(shape.tables) == 1
                found.append(set(shape.tables[0].patterns))
        return found

    by_counts = listed()
    monkeypatch.setattr(patterns, "sums_state_runs", lambda *args: False)
    assert by_counts == listed()


@pytest.mark.parametrize(("gpus", "placement"), ALIKE, ids=["stride 2", "stride 3, chains of uneven runs", "a ring of four"])
def test_alike_nodes_are_counted_at_the_flat_optimum(gpus: int, placement: dict) -> None:
    """The count path answers such specs at the flat model's optimum."""
    spec = PlacementSpec.build(Cluster(2, gpus), placement)
    weights = {**DEFAULT_WEIGHTS, "contiguity": 0}
    flat = flat_solution(spec, weights, time_limit_s=20)
    assert (flat.method, flat.status) == ("search", "OPTIMAL")
    solution = solve(spec, time_limit_s=10)
    assert (solution.method, solution.status, solution.notes) == ("counts", "OPTIMAL", ())
    value = objective_value(spec, spec.requests, solution.assignments, weights, {})
    assert value == objective_value(spec, spec.requests, flat.assignments, weights, {})
