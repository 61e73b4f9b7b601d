"""The count model beside rank strings that load their GPUs (``counts/fixed_loads.py``): their
``memory_gb`` held on their GPUs, their processes counted towards any
``max_processes_per_hardware``, and their own limits bounding what joins them. Every spec with a
placement is answered by the count path itself, proven, with the exact flat model's optimum (one
boolean per process and GPU: an independent formulation); every spec without one is refused by
both."""

from __future__ import annotations

from typing import Any

import numpy as np
from helpers import example_tiers
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from test_count_typed import PRIMARY, counted, flat_optimum

from solver_placement import Cluster, InfeasiblePlacementError, PlacementSpec, Solution, solve, verify
from solver_placement._solver.answer import Answer
from solver_placement._solver.build import fixed_conflicts
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
def loaded_specs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """1-4 nodes of 2-8 GPUs (of 40 or 80 GB, or unknown memory); 1-2 rank strings on GPUs of one
    node (often the same GPUs), each with or without ``memory_gb`` and a process limit; now and
    then a filled window beside them; 1-3 declarative components (TP 1-2, one or two GPUs per
    process) with or without memory, a limit, and exclusivity with earlier components."""
    gpus = draw(st.lists(st.sampled_from([2, 4, 6, 8]), min_size=1, max_size=4))
    starts = np.concatenate(([0], np.cumsum(gpus)[:-1])).tolist()
    cluster = Cluster(len(gpus), gpus, gpu_memory_gb=draw(st.sampled_from([None, 40, 80])))
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
    if draw(st.integers(0, 3)) == 0:
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
        if draw(st.booleans()):
            body |= memory(draw)
        if draw(st.booleans()):
            body["max_processes_per_hardware"] = draw(st.integers(1, 3))
        others = [other for other in spec if draw(st.integers(0, 3)) == 0]
        if others:
            body["exclusive_with"] = others
        spec[name] = body
    return cluster, spec


@example_tiers(60, 400)
def test_rank_strings_loads_are_counted_exactly(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(loaded_specs())(check_loaded))()


def check_loaded(case: tuple[Cluster, dict[str, Any]]) -> None:
    cluster, placement = case
    note(f"{cluster.gpus_per_node.tolist()} {cluster.gpu_memory_gb} {placement}")
    try:
        spec = PlacementSpec.build(cluster, placement)
    except InfeasiblePlacementError:
        event("refused when built")
        return
    if fixed_conflicts(spec, SolverOptions(10.0).start()):
        event("rank strings break their own rules")  # refused before any path (``solve.py``)
        return
    requests = dict(spec.requests)
    problem = count_problem(spec, requests)
    if isinstance(problem, CountProblem) and problem.beside is not None:
        event("fixed loads stated")
    answer = counted(spec, requests)
    optimum = flat_optimum(spec, requests)
    if optimum is None:
        assert answer is None or answer.status != "OPTIMAL", "the count model placed a spec the flat model proves infeasible"
        event("no placement")
        return
    assert isinstance(answer, Answer), "the count path declined a spec that has a placement"
    assert answer.assignments is not None
    verify(spec, Solution(spec, spec.requests, dict(answer.assignments), "FEASIBLE", None).placements_by_component())
    assert answer.status == "OPTIMAL"
    assert answer.objective == optimum
    owners = {c.rule_owner: answer.assignments[c.name] for c in spec.components.values()}
    assert objective_value(spec, spec.requests, owners, PRIMARY, {}) == answer.objective
    event("counts OPTIMAL")
