"""The count model on strides whose blocks do not tile a tensor-parallel group
(``counts/strided.py``): a process of ``amount`` GPUs ``stride`` apart leaves holes that other
components, or another process of its own, may fill, so what a node holds is decided GPU by GPU
over progressions. Every spec with a placement is answered by the count path itself, proven, at
the exact flat model's optimum (one boolean per process and GPU: an independent formulation);
every spec without one is refused by both."""

from __future__ import annotations

import functools
import itertools
import random
from typing import Any

import numpy as np
import pytest
from flat_model import built_or_refused, flat_optimum, flat_solution
from generators import pattern_capacity
from helpers import declined_first, example_tiers
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from test_count_typed import PRIMARY

from solver_placement import Cluster, PlacementSpec, Solution, solve, verify
from solver_placement._solver.answer import Answer
from solver_placement._solver.build import fixed_conflicts
from solver_placement._solver.counts import count_path
from solver_placement._solver.counts.followers import Loose
from solver_placement._solver.counts.problem import CountProblem, count_problem
from solver_placement._solver.counts.runs import runs_cover
from solver_placement._solver.counts.strided import progressions_of
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.options import SolverOptions
from solver_placement._solver_settings import DEFAULT_WEIGHTS


def brute_progressions(stacks: tuple[tuple[int, ...], ...], keep_off: list[tuple[int, ...]], capacity: int, demand: tuple[int, ...], runs: tuple[int, ...], steps: tuple[int, ...]) -> bool:
    """Every assignment of an admitted stack (or none) to every GPU, each class's GPUs then
    searched for ``demand[k] / runs[k]`` disjoint progressions by trying every set of them: the
    definition the search by residues (``runs.RunsCovers``) decides."""
    choices = [[(), *{tuple(k for k in stack if gpu not in keep_off[k]) for stack in stacks}] for gpu in range(capacity)]
    for layout in itertools.product(*choices):
        held = [frozenset(gpu for gpu, stack in enumerate(layout) if k in stack) for k in range(len(demand))]
        if all(_disjoint(held[k], runs[k], steps[k], demand[k] // runs[k]) for k in range(len(demand))):
            return True
    return False


@functools.cache
def _disjoint(ids: frozenset[int], length: int, step: int, wanted: int) -> bool:
    """Whether ``ids`` hold ``wanted`` disjoint progressions of ``length`` ids ``step`` apart."""
    candidates = [frozenset(h + i * step for i in range(length)) for h in ids if all(h + i * step in ids for i in range(length))]
    return any(
        len(frozenset().union(*chosen)) == wanted * length for chosen in itertools.combinations(candidates, wanted)
    ) if wanted else True  # fmt: skip


@pytest.mark.parametrize("seed", range(6))
def test_progressions_by_residue_agree_with_every_layout(seed: int) -> None:
    """The GPU-by-GPU search with one open run per residue decides exactly what trying every
    stack on every GPU and every set of progressions decides, on random small nodes; and the
    ids it returns split into the progressions asked for."""
    rng = random.Random(seed)
    for _ in range(30):
        classes, capacity = rng.randint(1, 3), rng.randint(3, 6)
        pairs = {(a, b) for a in range(classes) for b in range(a + 1, classes) if rng.random() < 0.5}
        stacks = tuple(stack for size in range(classes, 0, -1) for stack in itertools.combinations(range(classes), size)
                       if not any((a, b) in pairs for a, b in itertools.combinations(stack, 2)))  # fmt: skip
        keep_off = [tuple(g for g in range(capacity) if rng.random() < 0.15) for _ in range(classes)]
        runs = tuple(rng.choice((1, 2, 3)) for _ in range(classes))
        steps = tuple(rng.choice((1, 2, 3)) if run > 1 else 1 for run in runs)
        demand = tuple(runs[k] * rng.randint(0, 2) for k in range(classes))
        expected = brute_progressions(stacks, keep_off, capacity, demand, runs, steps)
        held = runs_cover(stacks, keep_off, capacity, demand, runs, steps=steps)
        assert (held is not None) == expected, (stacks, keep_off, capacity, demand, runs, steps)
        for k in range(classes) if held is not None else ():
            chosen = progressions_of(np.array(held[k], dtype=np.int64), runs[k], steps[k], demand[k])
            assert chosen is not None and chosen.size == demand[k]
            assert (np.diff(chosen.reshape(-1, runs[k]), axis=1) == steps[k]).all()


def test_progressions_of_splits_a_union_the_one_way_it_can() -> None:
    """Two processes of three GPUs two apart fill six GPUs interleaved; one on GPUs 0, 2, 4 beside
    one on 5, 7, 9 leaves 6 and 8 over (not a progression of three)."""
    both = progressions_of(np.arange(6), 3, 2, 6)
    assert both is not None and both.reshape(-1, 3).tolist() == [[0, 2, 4], [1, 3, 5]]
    mixed = progressions_of(np.array([0, 2, 4, 5, 6, 7, 8, 9]), 3, 2, 9)
    assert mixed is None
    assert progressions_of(np.array([0, 2, 4, 5, 6, 7, 8, 9]), 3, 2, 6) is not None


@pytest.mark.parametrize(("gpus", "placement", "method"), [
    # the issue's example: one process of GPUs 0, 2, 4, 6 of an 8-GPU node, beside rank strings
    ([3, 0, 8, 4, 0, 2], {"verifier": "all", "inference": {"placement": "all", "max_processes_per_hardware": 8},
                          "sampler, agent": {"placement": "1-7:0-6, 9-10:7-10", "max_processes_per_hardware": 8},
                          "policy, rollout": {"processes": 1, "hardware_per_process": 4, "stride": 2}}, "counts"),
    # two processes of three GPUs two apart fill six GPUs; a third needs another node
    ([6, 6], {"actor": {"processes": 3, "hardware_per_process": 3, "stride": 2}}, "counts"),
    # a 4-GPU node never holds a span of five; an exclusive component fills the holes of one
    ([5, 4], {"actor": {"processes": 1, "hardware_per_process": 3, "stride": 2},
              "reward": {"processes": 6, "exclusive_with": ["actor"]}}, "counts"),
    # blocks of four tile the groups, but none avoids GPUs 3 and 6: progressions 0, 2 and 5, 7 do
    ([10], {"a": "3-3", "b": "6-6", "actor": {"processes": 2, "hardware_per_process": 2, "stride": 2, "tensor_parallel_size": 2,
                                             "exclusive_with": ["a", "b"]}}, "counts"),
])  # fmt: skip
def test_holes_of_a_stride_are_counted(gpus: list[int], placement: dict[str, Any], method: str) -> None:
    """Each spec (declined before: "a stride whose blocks do not tile its tensor-parallel
    groups", or for the last "no count answer") is proven by the count model at the flat
    model's optimum."""
    spec = PlacementSpec.build(Cluster(len(gpus), gpus), placement)
    solution = solve(spec, time_limit_s=10)
    assert (solution.method, solution.status, declined_first(solution)) == (method, "OPTIMAL", ())
    owners = {c.rule_owner: solution.assignments[c.name] for c in spec.components.values()}
    assert objective_value(spec, spec.requests, owners, PRIMARY, {}) == flat_optimum(spec, dict(spec.requests), PRIMARY)


def test_a_follower_of_another_shape_in_a_holey_group_is_declined_by_name() -> None:
    """A collocated component of two consecutive GPUs a process inside groups of three GPUs two
    apart: neither shape's processes tile the other's (``strided.tiles``), so the class is
    counted in whole blocks of both (``followers.Loose``), which no node here holds, and the count
    model names it; the flat model decides (here: no placement)."""
    spec = PlacementSpec.build(Cluster(2, 8), {
        "actor": {"processes": 2, "hardware_per_process": 3, "stride": 2},
        "ref": {"processes": 3, "hardware_per_process": 2, "collocate_with": "actor"},
    })  # fmt: skip
    loose = count_problem(spec, dict(spec.requests))
    assert isinstance(loose, Loose) and loose.reason.startswith("ref: processes of 2 GPUs at stride 1 collocated with actor, whose stride leaves holes")
    answer = count_path(spec, spec.requests, PRIMARY, SolverOptions(10.0, 1, 0), SolverOptions(10.0).start())
    assert not isinstance(answer, Answer) and answer.reason.startswith(loose.reason)


@st.composite
def strided_specs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """1-3 nodes of 2-8 GPUs; a strided component of 2-4 GPUs a process, stride 2-4 (a span the
    largest node holds), TP 1-3 or the stride (then its blocks tile a group, and are laid out
    in progressions where it is kept off some GPUs), sometimes with a collocated follower of one GPU a process or of
    its own shape; beside it 0-2 components of one or two GPUs a process (some strided), with
    exclusivity, ``max_processes_per_hardware`` or ``memory_gb`` that keep them off its GPUs or
    let them share, and now and then a rank string on part of a node that some are exclusive
    with (GPUs kept off)."""
    gpus = draw(st.lists(st.sampled_from([2, 3, 4, 5, 6, 7, 8]), min_size=1, max_size=3).filter(lambda sizes: max(sizes) >= 3))
    starts = np.concatenate(([0], np.cumsum(gpus)[:-1])).tolist()
    cluster = Cluster(len(gpus), gpus, gpu_memory_gb=80)
    placement: dict[str, Any] = {}
    if draw(st.integers(0, 3)) == 0:
        node = draw(st.integers(0, len(gpus) - 1))
        first = draw(st.integers(0, gpus[node] - 1))
        placement["fixed"] = {"placement": f"{starts[node] + first}-{starts[node] + draw(st.integers(first, gpus[node] - 1))}"}
    amount, stride = draw(st.sampled_from([(a, s) for a in range(2, 5) for s in range(2, 5) if (a - 1) * s < max(gpus)]))  # a span one node holds
    tp = draw(st.sampled_from([1, 1, 2, 3, stride]))
    room = sum(pattern_capacity(g, amount, stride) // tp for g in gpus)  # groups the nodes hold alone
    actor: dict[str, Any] = {"processes": tp * draw(st.integers(1, max(1, room))), "hardware_per_process": amount, "stride": stride}
    if tp > 1:
        actor["tensor_parallel_size"] = tp
    follower = draw(st.sampled_from([None, None, "one", "same"]))
    placement["actor"] = actor | _sharing(draw, placement, 2 if follower else 1)
    if follower == "one":
        placement["ref"] = {"processes": actor["processes"] * amount, "collocate_with": "actor"}
    elif follower == "same":
        placement["ref"] = {"processes": actor["processes"], "hardware_per_process": amount, "stride": stride, "collocate_with": "actor"}
    for name in ("critic", "reward")[: draw(st.integers(0, 2))]:
        per = draw(st.sampled_from([1, 1, 2]))
        body: dict[str, Any] = {"processes": draw(st.integers(1, max(1, sum(gpus) // (2 * per)))), "hardware_per_process": per}
        if per > 1 and draw(st.booleans()):
            body["stride"] = 2
        placement[name] = body | _sharing(draw, placement)
    return cluster, placement


def _sharing(draw: st.DrawFn, placement: dict[str, Any], least: int = 1) -> dict[str, Any]:
    """What keeps a component off the earlier ones' GPUs or lets it share them: exclusivity with
    some, memory of 30 or 50 GB on 80 GB GPUs, a process limit (at least ``least``: its own
    processes on a GPU with a collocated follower's)."""
    keys: dict[str, Any] = {}
    others = [name for name in placement if name != "ref" and draw(st.booleans())]
    if others:
        keys["exclusive_with"] = others
    if draw(st.integers(0, 2)) == 0:
        keys["memory_gb"] = draw(st.sampled_from([30, 50]))
    if draw(st.integers(0, 3)) == 0:
        keys["max_processes_per_hardware"] = draw(st.integers(least, 2))
    return keys


WEIGHED = {**PRIMARY, "contiguity": 1}  # ranks priced: the walk over a node's GPUs takes progressions too


@example_tiers(40, 110)
@pytest.mark.parametrize("weights", [PRIMARY, WEIGHED], ids=["tie-break", "contiguity weighed"])
def test_holey_strides_are_counted_exactly(examples: int, weights: dict[str, int]) -> None:
    check = settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(case=strided_specs())(check_strided))
    check(weights=weights)


def check_strided(case: tuple[Cluster, dict[str, Any]], weights: dict[str, int]) -> None:
    cluster, placement = case
    note(f"{cluster.gpus_per_node.tolist()} {placement} {weights}")
    spec = built_or_refused(cluster, placement)
    if spec is None:
        return
    if fixed_conflicts(spec, SolverOptions(10.0).start()):
        event("rank strings break their own rules")
        return
    requests = dict(spec.requests)
    problem = count_problem(spec, requests)
    if isinstance(problem, CountProblem):
        event("progressions" if any(c.step > 1 for c in problem.classes) else "blocks")
    found = count_path(spec, requests, weights, SolverOptions(10.0, 1, 0), SolverOptions(10.0).start())
    answer = found if isinstance(found, Answer) else None
    optimum = flat_optimum(spec, requests, weights)
    if optimum is None:
        assert answer is None or answer.status != "OPTIMAL", "the count model placed a spec the flat model proves infeasible"
        event("no placement")
        return
    assert isinstance(answer, Answer), f"the count path declined a spec that has a placement: {found}"
    assert answer.assignments is not None
    verify(spec, Solution(spec, spec.requests, dict(answer.assignments), "FEASIBLE", None).placements_by_component())
    assert answer.status == "OPTIMAL"
    assert answer.objective == optimum
    owners = {c.rule_owner: answer.assignments[c.name] for c in spec.components.values()}
    assert objective_value(spec, spec.requests, owners, weights, {}) == answer.objective
    event("counts OPTIMAL")



#: Progressions beside components of one GPU, with ranks weighed: the walk that prices them
#: visits the strided class's ids residue by residue (``local_costs.visit_order``).
WEIGHED_PROGRESSIONS = [
    (10, {"actor": {"processes": 3, "hardware_per_process": 3, "stride": 2}, "ref": {"processes": 5, "exclusive_with": ["actor"]},
          "reward": {"processes": 6, "exclusive_with": ["ref"]}}),
    (9, {"actor": {"processes": 2, "hardware_per_process": 2, "stride": 3}, "ref": {"processes": 7, "exclusive_with": ["actor"]}, "reward": {"processes": 4}}),
    (12, {"actor": {"processes": 4, "hardware_per_process": 3, "stride": 3}, "ref": {"processes": 6, "exclusive_with": ["actor"]},
          "reward": {"processes": 5, "exclusive_with": ["ref", "actor"]}}),
]  # fmt: skip


@pytest.mark.parametrize(("gpus", "placement"), WEIGHED_PROGRESSIONS, ids=["3 GPUs 2 apart", "2 GPUs 3 apart", "3 GPUs 3 apart, all apart"])
@pytest.mark.parametrize("weights", [{"contiguity": 1, "nodes": 10_000}, {"contiguity": 5, "nodes": 1}], ids=["nodes first", "ranks first"])
def test_weighed_ranks_of_progressions_are_proven_at_the_flat_optimum(gpus: int, placement: dict[str, Any], weights: dict[str, int]) -> None:
    """The count path proves these with ``contiguity`` weighed, at the flat model's optimum (both
    priced by the spec's own objective)."""
    spec = PlacementSpec.build(Cluster(2, gpus), placement)
    ours = solve(spec, time_limit_s=10, objective=weights)
    assert (ours.method, ours.status, declined_first(ours)) == ("counts", "OPTIMAL", ())
    flat = flat_solution(spec, weights)
    assert flat.status == "OPTIMAL"
    full = {**DEFAULT_WEIGHTS, **weights}
    assert objective_value(spec, spec.requests, ours.assignments, full, {}) == objective_value(spec, spec.requests, flat.assignments, full, {}) == ours.objective


@pytest.mark.slow
def test_weighed_ranks_on_wide_strided_nodes_are_proven() -> None:
    """Two 72-GPU nodes, 16 processes of five GPUs three apart, a ref kept off them, a reward
    kept off the ref, ranks weighed: the walk in id order passed its state limit and the count
    model declined (first fit answered 50,113 after 20 s, unproven); residue by residue it
    prices every pattern and the count model proves 50,005 (the flat model proves nothing at
    this size in a minute)."""
    placement = {
        "actor": {"processes": 16, "hardware_per_process": 5, "stride": 3},
        "ref": {"processes": 50, "exclusive_with": ["actor"]},
        "reward": {"processes": 40, "exclusive_with": ["ref"]},
    }
    spec = PlacementSpec.build(Cluster(2, 72), placement)
    weights = {"contiguity": 1, "nodes": 10_000}
    ours = solve(spec, time_limit_s=20, objective=weights)
    assert (ours.method, ours.status, declined_first(ours)) == ("counts", "OPTIMAL", ())
    assert ours.objective == objective_value(spec, spec.requests, ours.assignments, {**DEFAULT_WEIGHTS, **weights}, {}) == 50_005
