"""The count model beside rank strings that load their GPUs (``counts/fixed_loads.py``): their
``memory_gb`` held on their GPUs, their processes counted towards any
``max_processes_per_hardware``, and their own limits bounding what joins them. Every spec with a
placement is answered by the count path itself, proven, with the exact flat model's optimum (one
boolean per process and GPU: an independent formulation); every spec without one is refused by
both."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from flat_model import built_or_refused, flat_optimum, flat_solution
from helpers import declined_first, example_tiers
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from test_count_typed import PRIMARY

from solver_placement import Cluster, PlacementSpec, Solution, solve, verify
from solver_placement._solver.answer import Answer
from solver_placement._solver.build import fixed_conflicts
from solver_placement._solver.counts import count_path
from solver_placement._solver.counts.problem import CountProblem, count_problem
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.options import SolverOptions

NAMES = ("actor", "critic", "reward")


def memory(draw: st.DrawFn) -> Any:
    """``memory_gb`` as one number, or per part with an offload flag (idle below active)."""
    if draw(st.booleans()):
        return {"memory_gb": draw(st.sampled_from([10, 20, 30, 50]))}
    return {"memory_gb": {"weights": draw(st.sampled_from([5, 10, 20])), "optimizer": draw(st.sampled_from([10, 20, 40]))}, "offload_optimizer": True}


@st.composite
def loaded_specs(draw: st.DrawFn, most_nodes: int = 4, balanced: bool = True) -> tuple[Cluster, dict[str, Any], dict[str, int]]:
    """1-4 nodes of 2-8 GPUs (of 40 or 80 GB, or unknown memory); 1-2 rank strings on GPUs of one
    node (often the same GPUs), each with or without ``memory_gb`` and a process limit; now and
    then a filled window beside them; 1-3 declarative components (TP 1-2, one or two GPUs per
    process, some strided, or one on exactly the first rank string's GPUs) with or without memory,
    a limit, and exclusivity with earlier components; ``balance`` weighed or not (then every
    class is in one part, whole-node patterns; nothing is placed first then)."""
    gpus = draw(st.lists(st.sampled_from([2, 4, 6, 8]), min_size=1, max_size=most_nodes))
    starts = np.concatenate(([0], np.cumsum(gpus)[:-1])).tolist()
    cluster = Cluster(len(gpus), gpus, gpu_memory_gb=draw(st.sampled_from([None, 40, 80])))
    balance = draw(st.sampled_from([0, 0, 1] if balanced else [0]))  # components placed first are left to the flat model with it (``preset.py``)
    spec: dict[str, Any] = {}
    node = draw(st.integers(0, len(gpus) - 1))
    for i in range(draw(st.integers(1, 2))):
        first = draw(st.integers(0, gpus[node] - 1))
        last = draw(st.integers(first, gpus[node] - 1))
        body: dict[str, Any] = {"placement": f"{starts[node] + first}-{starts[node] + last}"}
        if draw(st.booleans()):
            body |= memory(draw)
        if draw(st.booleans()):
            body["max_processes_per_hardware"] = draw(st.integers(1, 3))
        spec[f"fixed{i}"] = body
    if not balance and draw(st.integers(0, 3)) == 0:
        where = draw(st.integers(0, len(gpus) - 1))
        body = {"resources": f"{starts[where]}-{starts[where] + gpus[where] - 1}"}
        if draw(st.booleans()):
            body |= memory(draw)
        spec["filled"] = body
    total = sum(gpus)
    for name in NAMES[: draw(st.integers(1, 3))]:
        tp, amount = draw(st.sampled_from([1, 1, 2])), draw(st.sampled_from([1, 1, 2]))
        body = {"processes": tp * draw(st.integers(1, max(1, total // (2 * tp * amount)))), "tensor_parallel_size": tp}
        if amount > 1:
            body["hardware_per_process"] = amount
            if tp == 2 and draw(st.booleans()):  # blocks of 4 that tile its groups of 4 GPUs
                body["stride"] = 2
        if name == "reward" and not balance and draw(st.booleans()):  # on exactly the first rank string's GPUs (placed first, ``preset.py``)
            spec[name] = {"processes": len(span(spec["fixed0"]["placement"])), "collocate_with": "fixed0", **memory(draw)}
            continue
        if draw(st.booleans()):
            body |= memory(draw)
        if draw(st.booleans()):
            body["max_processes_per_hardware"] = draw(st.integers(1, 3))
        others = [other for other in spec if draw(st.integers(0, 3)) == 0]
        if others:
            body["exclusive_with"] = others
        spec[name] = body
    return cluster, spec, {**PRIMARY, "balance": balance}


def span(ranks: str) -> range:
    """The GPUs of a rank string ``first-last``."""
    first, last = (int(x) for x in ranks.split("-"))
    return range(first, last + 1)


@example_tiers(40, 80)
def test_rank_strings_loads_are_counted_exactly(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(loaded_specs())(check_loaded))()


def check_loaded(case: tuple[Cluster, dict[str, Any], dict[str, int]]) -> None:
    cluster, placement, weights = case
    note(f"{cluster.gpus_per_node.tolist()} {cluster.gpu_memory_gb} {placement} {weights}")
    spec = built_or_refused(cluster, placement)
    if spec is None:
        return
    if fixed_conflicts(spec, SolverOptions(10.0).start()):
        event("rank strings break their own rules")  # refused before any path (``solve.py``)
        return
    requests = dict(spec.requests)
    problem = count_problem(spec, requests)
    if isinstance(problem, CountProblem) and problem.beside is not None:
        event("fixed loads stated")
    found = count_path(spec, requests, weights, SolverOptions(10.0, 1, 0), SolverOptions(10.0).start())
    answer = found if isinstance(found, Answer) else None
    optimum = flat_optimum(spec, requests, weights)
    if optimum is None:
        assert answer is None or answer.status != "OPTIMAL", "the count model placed a spec the flat model proves infeasible"
        event("no placement")
        return
    assert isinstance(answer, Answer), "the count path declined a spec that has a placement"
    assert answer.assignments is not None
    verify(spec, Solution(spec, spec.requests, dict(answer.assignments), "FEASIBLE", None).placements_by_component())
    if weights["contiguity"] and answer.status != "OPTIMAL":  # a weighed contiguity is a bound for strides (``contiguity.py``)
        assert answer.objective >= optimum
        event("counts FEASIBLE (weighed contiguity)")
        return
    assert answer.status == "OPTIMAL"
    assert answer.objective == optimum
    owners = {c.rule_owner: answer.assignments[c.name] for c in spec.components.values()}
    assert objective_value(spec, spec.requests, owners, weights, {}) == answer.objective
    event("counts OPTIMAL")


@st.composite
def weighed_specs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any], dict[str, int]]:
    """:func:`loaded_specs` on 1-2 nodes, ``balance`` not weighed, with ``contiguity`` weighed as
    a term (1 or 5 per rank): the count path prices each node's local layout beside the loads
    (``weighed.py``); the flat model weighing ranks proves larger ones slowly."""
    cluster, placement, weights = draw(loaded_specs(most_nodes=2, balanced=False))
    return cluster, placement, {**weights, "contiguity": draw(st.sampled_from([1, 5]))}


@example_tiers(15, 50)
def test_a_weighed_contiguity_beside_loads_is_counted_exactly(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(weighed_specs())(check_loaded))()


@pytest.mark.parametrize("placement", [
    # rollout and reward each fit beside the actor's memory on an 80 GB GPU, not both together
    {"actor": {"placement": "0-3", "memory_gb": {"weights": 20, "optimizer": 20}, "offload_optimizer": True},
     "rollout": {"processes": 3, "memory_gb": {"weights": 10, "optimizer": 30}, "offload_optimizer": True}, "reward": {"processes": 3, "memory_gb": 35}},
    # the same by processes: the actor's own limit of 2 takes one more process per GPU
    {"actor": {"placement": "0-3", "max_processes_per_hardware": 2}, "rollout": {"processes": 3}, "reward": {"processes": 3}},
    # two rank strings on the same GPUs, both with memory, and a limited component beside them
    {"actor": {"placement": "0-1", "memory_gb": 30}, "env": {"placement": "0-3", "memory_gb": 10},
     "rollout": {"processes": 6, "memory_gb": 35, "max_processes_per_hardware": 2}},
    # a rank string with memory and a filled window beside it on the same node
    {"actor": {"placement": "0-3", "memory_gb": 50}, "judge": {"resources": "4-7", "memory_gb": 40},
     "rollout": {"processes": 6, "memory_gb": 30}},
])  # fmt: skip
def test_loads_beside_rank_strings_are_proven_by_the_count_model(placement: dict[str, Any]) -> None:
    spec = PlacementSpec.build(Cluster(2, 4, gpu_memory_gb=80), placement)
    solution = solve(spec, time_limit_s=10)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    flat = flat_solution(spec, {"contiguity": 0})
    assert flat.status == "OPTIMAL"
    assert solution.objective == flat.objective
