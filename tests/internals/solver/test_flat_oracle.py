"""The flat model's optima held against brute force (``brute_force.py``) on tiny specs.

Every count-model property test trusts the flat model's "OPTIMAL"; its symmetry rule once
proved 240,000 optimal where 140,000 existed (commit 4ba9f74). Here nothing of either CP-SAT
model is trusted: on at most 8 items and 6 processes every assignment is tried, the verifier
keeps the valid ones and ``objective_value`` prices them. The flat model must prove exactly their
least price (or infeasibility exactly when none is valid), at the primary weights, with
``contiguity`` weighed and with ``balance`` weighed near ``nodes``, and with previous placements
to keep; where the count path answers "OPTIMAL", its answer costs the same least price.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from brute_force import assignment_count, best_placement, valid_placements
from flat_model import PRIMARY, count_answer
from helpers import example_tiers
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from solver_placement import Cluster, InfeasiblePlacementError, PlacementError, PlacementSpec, Solution, solve, verify
from solver_placement._solver.answer import Answer, by_component
from solver_placement._solver.build import build_model
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.exact import solve_polished
from solver_placement._solver.options import SolverOptions
from solver_placement._solver.solution import Method
from solver_placement._solver_settings import DEFAULT_WEIGHTS
from solver_placement._specification.candidates import expand_all
from solver_placement._verify.placed import ranked_items

#: The enumeration's limit per draw (complete assignments before the verifier refuses any);
#: a draw above it is skipped as a hypothesis event.
MAX_ASSIGNMENTS = 200_000
#: Primary weights; ``contiguity`` weighed (the defaults); ``balance`` weighed near ``nodes``
#: and ``contiguity`` near both, so the terms trade against each other.
WEIGHTS: tuple[Mapping[str, int], ...] = (PRIMARY, DEFAULT_WEIGHTS, {**DEFAULT_WEIGHTS, "nodes": 6, "balance": 5, "contiguity": 1, "topology": 7})
LABELS = ("rack", "zone")


def flat_optimum(spec: PlacementSpec, weights: Mapping[str, int], previous: Mapping[str, Sequence[Sequence[int]]]) -> int | None:
    """The flat model's proven optimum (its answer verified, priced by ``objective_value`` and by
    CP-SAT alike), or None when it proves no placement exists."""
    try:
        ctx = build_model(spec, expand_all(spec.requests), weights={**DEFAULT_WEIGHTS, **weights}, previous=previous)
    except PlacementError as error:
        note(f"the flat model refused it when built: {error}")
        return None
    if ctx.conflicts:  # rules the fixed layouts already break: the model is not solved (as in ``explain.py``)
        note(f"the flat model's conflicts: {[conflict.text for conflict in ctx.conflicts]}")
        return None
    options = SolverOptions(time_limit_s=10.0)
    solver, status = solve_polished(ctx, options, options.start())
    name = solver.status_name(status)
    if name == "INFEASIBLE":
        return None
    assert name == "OPTIMAL", f"the flat model proved nothing in 10 s: {name}"
    assignments = by_component(spec, ctx.assignments(solver.response_proto.solution))
    verify(spec, Solution(spec, spec.requests, assignments, name, None, method=Method.SEARCH).placements_by_component())
    value = objective_value(spec, spec.requests, assignments, weights, previous)
    assert value == round(solver.objective_value), f"CP-SAT prices its answer {solver.objective_value}, objective_value {value}"
    return value


def topology(draw: st.DrawFn, tp: int, pp: int) -> dict[str, dict[str, str]]:
    """Rules for TP groups (``tp`` > 1) and pipelines (``pp`` > 1) over zero, one or both labels."""
    drawn: dict[str, dict[str, str]] = {}
    for group, size in (("tensor_parallel", tp), ("pipeline_parallel", pp)):
        if size > 1:
            for label in LABELS:
                mode = draw(st.sampled_from(["require", "prefer", None]))
                if mode:
                    drawn.setdefault(group, {})[label] = mode
    return drawn


@st.composite
def tiny_specs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """1-4 nodes of 1-4 GPUs (8 at most), racks and zones drawn per node (so they cross, and a
    node may lack one or hold the text an unlabelled node once passed for), maybe GPU memory and a node group of some nodes; an actor of TP groups and
    pipelines of 1-2 with topology rules, 1-2 GPUs per process (strided or not), a node group, a
    ``resources`` window, memory or a cap of processes per GPU; maybe a second component
    (collocated, exclusive, a rank string or free) and a third exclusive with both others."""
    gpus = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4).filter(lambda sizes: sum(sizes) <= 8))
    nodes = len(gpus)
    labels = [
        {label: value for label in LABELS if (value := draw(st.sampled_from(["a", "b", "a", "b", "node 1", None]))) is not None} for _ in range(nodes)
    ]
    memory = draw(st.sampled_from([None, [draw(st.sampled_from([40, 80])) for _ in range(nodes)]]))
    grouped = nodes > 1 and draw(st.booleans())
    groups = [{"label": "g", "node_ranks": f"0-{draw(st.integers(0, nodes - 2))}"}] if grouped else None
    cluster = Cluster(nodes, gpus, node_labels=labels, gpu_memory_gb=memory, node_groups=groups)
    total = sum(gpus)
    tp, pp = draw(st.sampled_from([1, 2, 2])), draw(st.sampled_from([1, 1, 2]))
    actor: dict[str, Any] = {"tensor_parallel_size": tp}
    if pp > 1:
        actor["pipeline_parallel_size"] = pp
    if draw(st.integers(0, 5)) == 0:
        first = draw(st.integers(0, total - 1))
        actor["resources"] = f"{first}-{draw(st.integers(first, total - 1))}"
        actor["processes"] = tp * pp * draw(st.integers(1, 2))
    else:
        per_process = draw(st.sampled_from([1, 1, 2]))
        actor["processes"] = tp * pp * draw(st.integers(1, max(1, 6 // (tp * pp))))
        if per_process > 1:
            actor["hardware_per_process"] = per_process
            if draw(st.booleans()):
                actor["stride"] = 2
    if rules := topology(draw, tp, pp):
        actor["topology"] = rules
    if grouped and draw(st.booleans()):
        actor["node_group"] = "g"
    if draw(st.integers(0, 3)) == 0:
        actor["memory_gb"] = draw(st.sampled_from([20, 30, 50]))
    if draw(st.integers(0, 3)) == 0:
        actor["max_processes_per_hardware"] = 2
    placement: dict[str, Any] = {"actor": actor}
    second = draw(st.sampled_from(["collocated", "exclusive", "rank string", "rank lists", "free", None]))
    items = actor["processes"] * actor.get("hardware_per_process", 1)  # the actor's, unless a window decides
    if second == "collocated":  # mostly as many items as the actor's (else the build or the verifier refuses it)
        per_process = draw(st.sampled_from([1, 2]))
        placement["rollout"] = {
            "processes": max(1, items // per_process) if draw(st.integers(0, 3)) else draw(st.integers(1, 4)),
            "collocate_with": "actor",
            "tensor_parallel_size": draw(st.sampled_from([1, 2])),
        }
        if per_process > 1:
            placement["rollout"]["hardware_per_process"] = 2
            placement["rollout"]["stride"] = draw(st.sampled_from([1, 2, "auto"]))
        if draw(st.booleans()):
            placement["rollout"]["memory_gb"] = draw(st.sampled_from([20, 40, {"weights": 20, "optimizer": 20}]))
            placement["rollout"]["offload_optimizer"] = draw(st.booleans())
    elif second == "rank string":
        first = draw(st.integers(0, total - 1))
        placement["rollout"] = {"placement": f"{first}-{draw(st.integers(first, min(total - 1, first + 1)))}"}
    elif second == "rank lists":  # explicit lists (one per process, any shape), maybe collocated
        ranks = draw(st.permutations(range(total)))[: min(total, items) if draw(st.booleans()) else draw(st.integers(1, min(total, 4)))]
        size = draw(st.sampled_from([n for n in (1, 2) if len(ranks) % n == 0]))
        placement["rollout"] = {"placement": [sorted(ranks[i : i + size]) for i in range(0, len(ranks), size)]}
        if draw(st.booleans()):
            placement["rollout"]["collocate_with"] = "actor"
    elif second is not None:
        placement["rollout"] = {"processes": draw(st.integers(1, 3)), "tensor_parallel_size": draw(st.sampled_from([1, 1, 2]))}
        if second == "exclusive":
            placement["rollout"]["exclusive_with"] = ["actor"]
        if draw(st.booleans()):
            placement["rollout"]["max_processes_per_hardware"] = 2
    if draw(st.booleans()):
        others = list(placement)
        placement["reward"] = {
            "processes": draw(st.integers(1, 2)),
            "exclusive_with": draw(st.lists(st.sampled_from(others), min_size=1, max_size=2, unique=True)),
        }
        if "rollout" in placement and "collocate_with" not in placement["rollout"] and draw(st.booleans()):
            placement["rollout"]["exclusive_with"] = ["reward"]  # a cycle actor, rollout, reward with "actor" drawn above
    return cluster, placement


def previous_of(draw: st.DrawFn, spec: PlacementSpec) -> dict[str, list[list[int]]]:
    """Items each process held before, per free component: random sets of its window (the
    layout of some earlier job), maybe fewer or more processes than now."""
    previous: dict[str, list[list[int]]] = {}
    for name, request in spec.requests.items():
        window = ranked_items(spec.components[name], spec.cluster)
        size = int(request.amount[0])
        if request.determined or size > len(window):
            continue
        previous[name] = [
            draw(st.lists(st.sampled_from(window), min_size=size, max_size=size, unique=True))
            for _ in range(draw(st.integers(1, request.num_processes + 1)))
        ]
    return previous


@example_tiers(40, 100)
def test_the_flat_model_proves_the_brute_force_optimum(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])(
        given(tiny_specs(), st.data())(check_against_brute_force)
    )()


def check_against_brute_force(case: tuple[Cluster, dict[str, Any]], data: st.DataObject) -> None:
    cluster, placement = case
    note(f"{cluster.gpus_per_node.tolist()} {cluster.node_labels} {cluster.gpu_memory_gb} {placement}")
    try:
        spec = PlacementSpec.build(cluster, placement)
    except PlacementError:
        event("refused when built")
        return
    if sum(request.num_processes for request in spec.requests.values()) > 6 or assignment_count(spec) > MAX_ASSIGNMENTS:
        event("too large to enumerate")
        return
    previous = previous_of(data.draw, spec) if data.draw(st.booleans()) else {}
    note(f"previous: {previous}")
    placements = valid_placements(spec)
    event("no valid assignment" if not placements else "placed")
    if placements:
        for key in sorted({key for body in placement.values() for key in body} | ({"previous"} if previous else set())):
            event(f"placed with {key}")
    for weights in WEIGHTS:
        best = best_placement(spec, placements, weights, previous)
        assert flat_optimum(spec, weights, previous) == best.value, f"weights {weights}: the brute force's least price is {best.value}"
        if not previous:
            check_count_path(spec, weights, best.value)


def check_count_path(spec: PlacementSpec, weights: Mapping[str, int], least: int | None) -> None:
    """``solve`` refuses a spec exactly when no assignment is valid, and otherwise answers at
    the least price whenever it says "OPTIMAL"; where the count path alone proves an answer, that
    answer costs the least price too."""
    if least is None:
        with pytest.raises(InfeasiblePlacementError):
            solve(spec, time_limit_s=10, objective=weights)
        assert not isinstance(count_answer(spec, weights=weights), Answer)  # alone, past the bounds: it declines, never crashes
        return
    solution = solve(spec, time_limit_s=10, objective=weights)
    owned = {c.rule_owner: solution.assignments[c.name] for c in spec.components.values()}
    if solution.status == "OPTIMAL":
        assert objective_value(spec, spec.requests, owned, weights, {}) == least, (
            f"weights {weights}: solve ({solution.method}) proved a worse answer"
        )
    answer = count_answer(spec, weights=weights)
    if isinstance(answer, Answer) and answer.status == "OPTIMAL":
        event("counts proved it")
        owned = {c.rule_owner: answer.assignments[c.name] for c in spec.components.values()}
        assert objective_value(spec, spec.requests, owned, weights, {}) == least, f"weights {weights}: the count path proved a worse answer"


#: Specs on which the flat model once proved a wrong optimum, each named by what it broke.
REGRESSIONS = [
    pytest.param(
        Cluster(1, 4),
        {"actor": {"processes": 4, "tensor_parallel_size": 2}, "rollout": {"placement": [[0, 2], [1, 3]], "collocate_with": "actor"}},
        id="a rank string nested in groups the ascending order never forms: called infeasible",
    ),
    pytest.param(
        Cluster(3, 1, node_labels=[{"rack": "node 1"}, {}, {"rack": "node 1"}]),
        {"actor": {"processes": 2, "tensor_parallel_size": 2, "topology": {"tensor_parallel": {"rack": "require"}}}},
        id="the verifier took unlabelled node 1 for rack 'node 1': a cheaper group the solver rightly refuses",
    ),
]


@pytest.mark.parametrize(("cluster", "placement"), REGRESSIONS)
def test_the_flat_model_proves_the_brute_force_optimum_where_it_once_did_not(cluster: Cluster, placement: dict[str, Any]) -> None:
    spec = PlacementSpec.build(cluster, placement)
    placements = valid_placements(spec)
    assert placements, "the regression case has no valid assignment: it tests nothing"
    for weights in WEIGHTS:
        assert flat_optimum(spec, weights, {}) == best_placement(spec, placements, weights).value, f"weights {weights}"


#: Specs the counting bounds refuse whose count path, run alone, once raised a bare IndexError: a
#: view of one model held no candidate of a component (its node group's single GPU taken by the
#: rank string), and stating that component's units or takers indexed an empty array.
NO_CANDIDATE_VIEWS = [
    {"actor": {"processes": 6, "node_group": "g"}, "rollout": {"placement": [[2]], "collocate_with": "actor"},
     "reward": {"processes": 1, "exclusive_with": ["actor", "rollout"]}},
    {"actor": {"processes": 2, "tensor_parallel_size": 2, "node_group": "g", "topology": {"tensor_parallel": {"zone": "prefer"}}},
     "rollout": {"placement": [[1]], "collocate_with": "actor"}},
]  # fmt: skip


@pytest.mark.parametrize("placement", NO_CANDIDATE_VIEWS)
def test_the_count_path_declines_a_view_without_candidates(placement: dict[str, Any]) -> None:
    spec = PlacementSpec.build(Cluster(2, [1, 4], node_labels=[{"zone": "a"}, {"zone": "b"}], node_groups=[{"label": "g", "node_ranks": "0"}]), placement)
    with pytest.raises(InfeasiblePlacementError):
        solve(spec, time_limit_s=10)
    assert not isinstance(count_answer(spec), Answer)
