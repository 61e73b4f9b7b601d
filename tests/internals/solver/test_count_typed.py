"""The count model on nodes whose GPUs its classes are kept off unevenly (``counts/typed.py``,
``counts/windows.py``): a rank string one component is exclusive with and its exclusive partner
is not, and a window over part of a node. Where the count model answers "optimal", its
objective equals the exact flat model's optimum on the same requests (one boolean per process
and GPU: an independent formulation), and its layout passes the verifier."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from flat_model import PRIMARY, built_or_refused, count_answer, flat_optimum
from helpers import declined_first, example_tiers
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from solver_placement import Cluster, InfeasiblePlacementError, PlacementSpec, Solution, solve, verify
from solver_placement._solver.answer import Answer
from solver_placement._solver.counts.problem import CountProblem, count_problem
from solver_placement._solver.evaluate import objective_value
from solver_placement._specification.candidates import ComponentRequest

NAMES = ("actor", "critic", "reward")


@st.composite
def uneven_specs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """1-3 nodes of 2, 4 or 8 GPUs; 1-2 rank strings on some GPUs of one node; 2-3 declarative
    components in TP groups of 1-2 GPUs (one or two per process), each exclusive with some rank
    strings and some earlier components, drawn independently, so partners often do not avoid
    the same rank strings (process limits and memory beside rank strings:
    ``test_count_fixed_loads.py``)."""
    gpus = draw(st.lists(st.sampled_from([2, 4, 8]), min_size=1, max_size=3))
    total = sum(gpus)
    starts = np.concatenate(([0], np.cumsum(gpus)[:-1])).tolist()
    spec: dict[str, Any] = {}
    for i in range(draw(st.integers(1, 2))):
        node = draw(st.integers(0, len(gpus) - 1))
        first = draw(st.integers(0, gpus[node] - 1))
        last = draw(st.integers(first, gpus[node] - 1))
        spec[f"fixed{i}"] = f"{starts[node] + first}-{starts[node] + last}"
    fixed = list(spec)
    for name in NAMES[: draw(st.integers(2, 3))]:
        tp, amount = draw(st.sampled_from([1, 2])), draw(st.sampled_from([1, 1, 2]))
        body: dict[str, Any] = {"processes": tp * draw(st.integers(1, max(1, total // (2 * tp * amount)))), "tensor_parallel_size": tp}
        if amount > 1:
            body["hardware_per_process"] = amount
        others = [other for other in spec if draw(st.booleans())] or [draw(st.sampled_from(fixed))]
        body["exclusive_with"] = others
        spec[name] = body
    return Cluster(len(gpus), gpus), spec


def counted(spec: PlacementSpec, requests: dict[str, ComponentRequest]) -> Answer | None:
    answer = count_answer(spec, requests)
    return answer if isinstance(answer, Answer) else None


def check_against_flat(spec: PlacementSpec, requests: dict[str, ComponentRequest]) -> Answer | None:
    """The count model's answer, verified, its objective the flat optimum when proven; no answer
    only where the flat model proves there is none."""
    answer = counted(spec, requests)
    if answer is None:
        assert flat_optimum(spec, requests) is None, "the count model declined a spec that has a placement"
        event("no placement")
        return None
    event(f"counts {answer.status}")
    assert answer.assignments is not None
    solution = Solution(spec, spec.requests, dict(answer.assignments), "FEASIBLE", None)
    verify(spec, solution.placements_by_component())
    assert objective_value(spec, requests, by_rule_owner(spec, answer), PRIMARY, {}) == answer.objective
    if answer.status == "OPTIMAL":
        assert answer.objective == flat_optimum(spec, requests)
    return answer


def by_rule_owner(spec: PlacementSpec, answer: Answer) -> dict:
    assert answer.assignments is not None
    return {c.rule_owner: answer.assignments[c.name] for c in spec.components.values()}


@example_tiers(40, 80)
def test_rank_strings_partners_do_not_avoid_are_counted_exactly(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(uneven_specs())(check_uneven))()


def check_uneven(case: tuple[Cluster, dict[str, Any]]) -> None:
    cluster, placement = case
    note(f"{cluster.gpus_per_node.tolist()} {placement}")
    spec = built_or_refused(cluster, placement)
    if spec is None:
        return
    problem = count_problem(spec, spec.requests)
    if isinstance(problem, CountProblem):
        event("stated")
    check_against_flat(spec, dict(spec.requests))


@st.composite
def partial_windows(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any], dict[str, tuple[int, int]]]:
    """2-3 nodes of 4 GPUs; 1-3 declarative components (TP 1-2, one or two GPUs per process),
    some exclusive with earlier ones, and for some a window of consecutive GPUs that holds part
    of a node at either end (no spec key states such a window for a free component today, so
    the test cuts the request's window itself)."""
    nodes = draw(st.integers(2, 3))
    total = 4 * nodes
    spec: dict[str, Any] = {}
    windows: dict[str, tuple[int, int]] = {}
    for name in NAMES[: draw(st.integers(1, 3))]:
        tp, amount = draw(st.sampled_from([1, 2])), draw(st.sampled_from([1, 1, 2]))
        body: dict[str, Any] = {"processes": tp * draw(st.integers(1, max(1, total // (2 * tp * amount)))), "tensor_parallel_size": tp}
        if amount > 1:
            body["hardware_per_process"] = amount
        others = [other for other in spec if draw(st.booleans())]
        if others:
            body["exclusive_with"] = others
        spec[name] = body
        if draw(st.booleans()):
            first = draw(st.integers(0, total - 2))
            windows[name] = (first, draw(st.integers(first + 1, total - 1)))
    return Cluster(nodes, 4), spec, windows


def cut(request: ComponentRequest, first: int, last: int) -> ComponentRequest:
    """A free request whose window is only its ranks ``first..last`` (ranks kept)."""
    keep = (request.cand_rank >= first) & (request.cand_rank <= last)
    return replace(request, indptr=np.array([0, int(keep.sum())]), cand_hw=request.cand_hw[keep], cand_rank=request.cand_rank[keep])


@example_tiers(40, 80)
def test_windows_over_part_of_a_node_are_counted_exactly(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(partial_windows())(check_windows))()


def check_windows(case: tuple[Cluster, dict[str, Any], dict[str, tuple[int, int]]]) -> None:
    cluster, placement, windows = case
    note(f"{placement} windows {windows}")
    try:
        spec = PlacementSpec.build(cluster, placement)
    except InfeasiblePlacementError:
        return
    requests = {name: cut(r, *windows[name]) if name in windows else r for name, r in spec.requests.items()}
    answer = check_against_flat(spec, requests)
    if answer is not None:
        assert answer.assignments is not None
        for name, (first, last) in windows.items():  # every GPU inside the component's cut window
            assert np.isin(answer.assignments[name].ranks, np.arange(first, last + 1)).all()


@pytest.mark.parametrize(("placement", "objective"), [
    # critic may use the rank string's GPUs, actor may not: node 0 holds critic beside fixed
    ({"fixed": "0-1", "actor": {"processes": 4, "exclusive_with": ["fixed"]}, "critic": {"processes": 3, "exclusive_with": ["actor"]}}, 20000),
    ({"fixed": "0-2", "actor": {"processes": 3, "exclusive_with": ["fixed"]},
      "critic": {"processes": 2, "hardware_per_process": 2, "exclusive_with": ["actor"]}, "ref": {"processes": 2, "exclusive_with": ["critic", "fixed"]}}, 30000),
])
def test_a_rank_string_one_partner_avoids_is_proven_by_the_count_model(placement: dict[str, Any], objective: int) -> None:
    solution = solve(PlacementSpec.build(Cluster(2, 4), placement), time_limit_s=10)
    assert (solution.method, solution.status, solution.objective, declined_first(solution)) == ("counts", "OPTIMAL", objective, ())
