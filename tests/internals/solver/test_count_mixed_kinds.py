"""Weighed ``contiguity`` over node groups that mix hardware kinds, counted exactly (issue 34).

A window over GPUs and robots ranks one kind's items on every node, then the next kind's, so a
node's items have one rank base per kind (``counts/kind_ranks.py``); the count model splits each
node's patterns by base and proves the least rank sum. Before, every such spec was declined ("a
window whose ranks on a node do not follow the node's GPU order") and the flat model answered.
Here the count answer must be proven by the counts alone (method ``counts``, nothing declined)
at the flat model's optimum, and, where the spec is small enough to try every assignment, at the
brute force's (``brute_force.py``)."""

from __future__ import annotations

from typing import Any

import pytest
from brute_force import assignment_count, best_placement, valid_placements
from flat_model import built_or_refused, flat_solution
from helpers import declined_first, example_tiers
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from test_count_kinds import robot_cluster, weighed

from solver_placement import Cluster, InfeasiblePlacementError, PlacementSpec, Solution, solve
from solver_placement._solver.evaluate import objective_value

#: The enumeration's limit per draw for the brute force (complete assignments before the verifier
#: refuses any): above it only the flat model is asked.
MAX_ASSIGNMENTS = 50_000
#: The node group orders a window over both kinds is written in (GPUs first, robots first, and
#: the comma string form).
ORDERS: tuple[Any, ...] = (["cluster", "robots"], ["robots", "cluster"], "robots, cluster")


def counted_value(solution: Solution, objective: dict[str, int]) -> int:
    """The count answer's value of the weighed terms; it must be the count model's own proof."""
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    return objective_value(solution.spec, solution.spec.requests, solution.assignments, weighed(objective), {})


def flat_optimum(spec: PlacementSpec, objective: dict[str, int]) -> int:
    """The flat model's proven optimum of the weighed terms."""
    flat = flat_solution(spec, weighed(objective))
    assert (flat.method, flat.status) == ("search", "OPTIMAL")
    return objective_value(spec, spec.requests, flat.assignments, weighed(objective), {})


EXAMPLES: list[tuple[str, Cluster, dict[str, Any], dict[str, int]]] = [
    ("GPUs first, beside a GPU class", robot_cluster([4, 4, 4], [2, 1, 2]),
     {"scout": {"node_group": ["cluster", "robots"], "processes": 6}, "actor": {"processes": 4, "exclusive_with": ["scout"]}},
     {"contiguity": 3}),
    ("robots first, two items a process", robot_cluster([4, 2, 4], [2, 3, 0]),
     {"scout": {"node_group": ["robots", "cluster"], "processes": 4, "hardware_per_process": 2}, "actor": {"processes": 4, "exclusive_with": ["scout"]}},
     {"contiguity": 1, "nodes": 100}),
    ("two windows in opposite orders, TP groups over both kinds", robot_cluster([2, 2, 2], [2, 2, 1]),
     {"scout": {"node_group": ["robots", "cluster"], "processes": 4, "tensor_parallel_size": 2},
      "probe": {"node_group": ["cluster", "robots"], "processes": 3, "exclusive_with": ["scout"]}},
     {"contiguity": 2, "balance": 5}),
    ("a collocated pair over both kinds, a robot class beside", robot_cluster([2, 2, 0], [1, 2, 2]),
     {"scout": {"node_group": ["cluster", "robots"], "processes": 4}, "probe": {"node_group": ["cluster", "robots"], "processes": 4, "collocate_with": "scout"},
      "env": {"node_group": "robots", "processes": 2, "exclusive_with": ["scout"]}},
     {"contiguity": 5, "nodes": 1}),
    ("memory on the GPUs alone: two windows share robots, not GPUs", robot_cluster([2, 2], [1, 2], memory=40),
     {"scout": {"node_group": ["cluster", "robots"], "processes": 4, "memory_gb": 30}, "probe": {"node_group": ["robots", "cluster"], "processes": 4, "memory_gb": 20}},
     {"contiguity": 1, "balance": 5}),
    ("beside a rank string's memory", robot_cluster([2, 2], [1, 1], memory=40),
     {"sim": {"node_group": ["cluster", "robots"], "placement": "0", "memory_gb": 15}, "scout": {"node_group": ["robots", "cluster"], "processes": 3, "memory_gb": 20}},
     {"contiguity": 3}),
    ("a strided window over both kinds", robot_cluster([4, 2], [2, 1]),
     {"scout": {"node_group": ["cluster", "robots"], "processes": 2, "hardware_per_process": 2, "stride": 2}, "actor": {"processes": 2, "exclusive_with": ["scout"]}},
     {"contiguity": 3}),
    ("alike nodes: runs of evenly rising bases", robot_cluster([4] * 6, [2] * 3 + [3] * 3),
     {"scout": {"node_group": ["robots", "cluster"], "processes": 8, "hardware_per_process": 2}, "actor": {"processes": 12, "exclusive_with": ["scout"]}},
     {"contiguity": 1, "nodes": 10_000}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "cluster", "placement", "objective"), EXAMPLES, ids=[case for case, *_ in EXAMPLES])
def test_mixed_kinds_contiguity_is_proven_by_counts_at_the_flat_optimum(case: str, cluster: Cluster, placement: dict[str, Any], objective: dict[str, int]) -> None:
    """Each spec (before: declined by the count model) is proven by the counts, at the flat
    model's optimum."""
    spec = PlacementSpec.build(cluster, placement)
    solution = solve(spec, time_limit_s=10, objective=objective)
    assert counted_value(solution, objective) == flat_optimum(spec, objective)


@st.composite
def mixed_contiguity_specs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any], dict[str, int]]:
    """1-3 nodes of 0, 1, 2 or 4 GPUs and 0-3 robots; a ``scout`` over both kinds (any order, 1
    or 2 items a process, maybe TP 2), maybe a ``probe`` over both kinds (collocated with it,
    exclusive with it, or free to share), maybe a GPU ``actor`` and a robot ``env`` exclusive with
    the scout; ``contiguity`` weighed, with ``nodes`` or ``balance`` beside it."""
    size = draw(st.integers(1, 3))
    gpus = draw(st.lists(st.sampled_from([0, 1, 2, 4]), min_size=size, max_size=size))
    robots = draw(st.lists(st.integers(0, 3), min_size=size, max_size=size))
    if not sum(gpus):
        gpus[0] = 2
    if not sum(robots):
        robots[-1] = 1
    items = sum(gpus) + sum(robots)
    per_process = draw(st.sampled_from([1, 1, 2]))
    tp = draw(st.sampled_from([1, 1, 2]))
    scout: dict[str, Any] = {"node_group": draw(st.sampled_from(ORDERS)), "processes": tp * draw(st.integers(1, max(1, items // (2 * tp * per_process))))}
    if per_process > 1:
        scout["hardware_per_process"] = per_process
    if tp > 1:
        scout["tensor_parallel_size"] = tp
    placement: dict[str, Any] = {"scout": scout}
    probe = draw(st.sampled_from(["none", "collocated", "exclusive", "sharing"]))
    if probe == "collocated":
        placement["probe"] = {"node_group": draw(st.sampled_from(ORDERS)), "processes": scout["processes"] * per_process, "collocate_with": "scout"}
    elif probe != "none":
        placement["probe"] = {"node_group": draw(st.sampled_from(ORDERS)), "processes": draw(st.integers(1, max(1, items // 3)))}
        if probe == "exclusive":
            placement["probe"]["exclusive_with"] = ["scout"]
    if draw(st.booleans()):
        placement["actor"] = {"processes": draw(st.integers(1, max(1, sum(gpus) // 2))), "exclusive_with": ["scout"]}
    if draw(st.booleans()):
        placement["env"] = {"node_group": "robots", "processes": draw(st.integers(1, max(1, sum(robots) // 2))), "exclusive_with": ["scout"]}
    objective = {"contiguity": draw(st.sampled_from([1, 3])), **draw(st.sampled_from([{}, {"nodes": 100}, {"balance": 5}]))}
    return robot_cluster(gpus, robots), placement, objective


@example_tiers(40, 80)
def test_drawn_mixed_kinds_contiguity_meets_the_flat_and_brute_force_optima(examples: int) -> None:
    """Any drawn spec the counting bounds do not refuse is proven by the count model at the flat
    model's optimum, and at the least price of every valid assignment where those are few."""
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(mixed_contiguity_specs())(check_drawn))()


def check_drawn(case: tuple[Cluster, dict[str, Any], dict[str, int]]) -> None:
    """One draw of :func:`mixed_contiguity_specs`: counted and proven, at both optima."""
    cluster, placement, objective = case
    note(f"{cluster.gpus_per_node.tolist()} {placement} {objective}")
    spec = built_or_refused(cluster, placement)
    if spec is None:
        return
    try:
        solution = solve(spec, time_limit_s=10, objective=objective)
    except InfeasiblePlacementError:
        event("no placement")
        return
    note(f"{solution.method} {solution.status} {solution.notes}")
    value = counted_value(solution, objective)
    assert value == flat_optimum(spec, objective)
    if assignment_count(spec) <= MAX_ASSIGNMENTS:
        event("held against brute force")
        assert best_placement(spec, valid_placements(spec), weighed(objective)).value == value
