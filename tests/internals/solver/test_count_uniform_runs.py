"""A node of alike GPUs where one class takes runs (issue 34, the step limit of the walk GPU by
GPU): two counts decide it (``counts/uniform_runs.py``) exactly as the walk does, and past the
walk's step limit the count model still answers, at the flat model's optimum."""

from __future__ import annotations

import itertools
import random

import pytest
from flat_model import flat_solution
from helpers import declined_first

from solver_placement import Cluster, InfeasiblePlacementError, PlacementSpec, Solution, solve
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
    flat = flat_solution(spec, weights)
    assert (flat.method, flat.status) == ("search", "OPTIMAL")
    monkeypatch.setattr(runs, "RUNS_STEPS", 3)
    solution = solve(spec, time_limit_s=10)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
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
    (``uniform_runs.runs_cap``) or, where the runs could bind, GPU by GPU: the same
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
    monkeypatch.setattr(patterns, "runs_cap", lambda *args: None)
    assert by_counts == listed()


@pytest.mark.parametrize(("gpus", "placement"), ALIKE, ids=["stride 2", "stride 3, chains of uneven runs", "a ring of four"])
def test_alike_nodes_are_counted_at_the_flat_optimum(gpus: int, placement: dict) -> None:
    """The count path answers such specs at the flat model's optimum."""
    spec = PlacementSpec.build(Cluster(2, gpus), placement)
    weights = {**DEFAULT_WEIGHTS, "contiguity": 0}
    flat = flat_solution(spec, weights)
    assert (flat.method, flat.status) == ("search", "OPTIMAL")
    solution = solve(spec, time_limit_s=10)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    value = objective_value(spec, spec.requests, solution.assignments, weights, {})
    assert value == objective_value(spec, spec.requests, flat.assignments, weights, {})


def alike_case(rng: random.Random) -> tuple[Cluster, dict]:
    """Two alike nodes of 6-14 GPUs: an ``actor`` of 2-5 GPUs 2 or 3 apart (now and then groups
    of two processes, whose progressions still leave holes) and one to three components of one
    GPU, each pair kept apart half the time (a ring of four now and then), the ref always apart
    from the actor; demands drawn up to what a node could hold."""
    gpus = rng.randint(6, 14)
    amount, stride = rng.choice([(a, s) for a, s in ((2, 2), (3, 2), (2, 3), (3, 3), (5, 2)) if (a - 1) * s < gpus])
    tp = 2 if stride == 3 and rng.random() < 0.3 else 1
    groups = rng.randint(1, max(1, 2 * most_runs(gpus, amount, stride) // tp))
    placement: dict = {"actor": {"processes": groups * tp, "hardware_per_process": amount, "stride": stride, "tensor_parallel_size": tp}}
    names = ["ref", "reward", "critic"][: rng.randint(1, 3)]
    for i, name in enumerate(names):
        apart = ["actor"] if name == "ref" else [other for other in ["actor", *names[:i]] if rng.random() < 0.5]
        placement[name] = {"processes": rng.randint(1, gpus), **({"exclusive_with": apart} if apart else {})}
    return Cluster(2, gpus), placement


def _listed(problem: CountProblem, spec: PlacementSpec, by_clique: bool = False) -> list[list[tuple[int, ...]]]:
    """Every shape's tables, part by part (the count model's own lists)."""
    found = []
    for part in parts(problem, False):
        for shape in shapes(problem, spec.cluster.gpus_per_node, part, lambda _: None, by_clique=by_clique):
            found += [sorted(table.patterns) for table in shape.tables]
    return found


@pytest.mark.parametrize("seed", range(3))
def test_capped_cliques_list_what_the_walk_lists(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """On random alike nodes, the cliques' sums (or stacks' sums in a ring) with the strided
    class's groups capped at the runs its chains hold (``uniform_runs.runs_cap``) list exactly
    the whole-node patterns the walk GPU by GPU lists; and the cap binds on some of them, so
    it is not a bound the sums alone already keep."""
    rng = random.Random(seed)
    binding = 0
    for _ in range(12):
        cluster, placement = alike_case(rng)
        spec = PlacementSpec.build(cluster, placement)
        problem = count_problem(spec, spec.requests)
        assert isinstance(problem, CountProblem), problem
        by_counts = _listed(problem, spec)
        actor, capacity = next(count_class for count_class in problem.classes if count_class.step > 1), int(cluster.gpus_per_node[0])
        binding += capacity // actor.width * actor.width > most_runs(capacity, actor.run, actor.step) * actor.run
        with monkeypatch.context() as walked:
            walked.setattr(patterns, "runs_cap", lambda *args: None)
            assert by_counts == _listed(problem, spec), placement
    assert binding


def _by_clique_answer(monkeypatch: pytest.MonkeyPatch, spec: PlacementSpec) -> Solution | None:
    """``solve``'s answer with the whole-node patterns made too many for the count model (its
    limit cut below them, above the patterns by clique), so the capped cliques are what it
    counts; None where the graph has a hole (no clique tree) or listing by clique saves nothing."""
    problem = count_problem(spec, spec.requests)
    assert isinstance(problem, CountProblem)
    try:
        cliques = sum(len(table) for table in _listed(problem, spec, by_clique=True))
    except patterns.NotChordal:
        return None
    whole = sum(len(table) for table in _listed(problem, spec))
    if cliques >= whole:
        return None
    with monkeypatch.context() as cut:
        cut.setattr(patterns, "MAX_PATTERNS", cliques)
        return solve(spec, time_limit_s=10)


@pytest.mark.parametrize("seed", range(3))
def test_capped_cliques_are_counted_at_the_flat_optimum(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Random alike nodes with a strided class, counted by the capped cliques' sums, whole-node
    or (the limit cut so) clique by clique: the count path answers, proven, at the flat model's
    optimum (``nodes`` and ``balance``; ``contiguity`` is the tie-break)."""
    rng = random.Random(seed)
    compared = 0
    while compared < 4:
        cluster, placement = alike_case(rng)
        try:
            spec = PlacementSpec.build(cluster, placement)
            ours = solve(spec, time_limit_s=10)
        except InfeasiblePlacementError:  # refused by the counting bounds or proven so by the count model
            continue
        weights = {**DEFAULT_WEIGHTS, "contiguity": 0}
        flat = flat_solution(spec, weights)
        assert (flat.method, flat.status) == ("search", "OPTIMAL")
        expected = objective_value(spec, spec.requests, flat.assignments, weights, {})
        for solution in (ours, _by_clique_answer(monkeypatch, spec)):
            if solution is None:
                continue
            assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ()), placement
            assert objective_value(spec, spec.requests, solution.assignments, weights, {}) == expected, placement
        compared += 1


def test_wide_strided_nodes_are_proven_by_counts() -> None:
    """The benchmark's ``wide strides`` shape that the count model declined (72-GPU nodes, five
    GPUs three apart: twelve such processes a node, not fourteen; a ref kept off them and a reward
    kept off the ref): its whole-node patterns pass the model's size, its patterns by clique
    (capped) do not, and the count path proves the answer where it once walked every GPU."""
    placement = {
        "actor": {"processes": 28, "hardware_per_process": 5, "stride": 3},
        "ref": {"processes": 100, "exclusive_with": ["actor"]},
        "reward": {"processes": 95, "exclusive_with": ["ref"]},
    }
    solution = solve(PlacementSpec.build(Cluster(4, 72), placement), time_limit_s=10)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    assert solution.objective == 70_000  # 7 nodes held: the actor's 28 on 3 (12 a node, not 14), the ref's 100 and the reward's 95 on 2 each
