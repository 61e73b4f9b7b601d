"""Where domains are counted, ``solve_counts`` weighs the weighted terms and low ranks in one
run (``model._ranked_together``): the weighted terms scaled past any low-ranks sum, so the run's
answer is the weighted optimum and, among its answers, the one with the least low-ranks sum.

* On drawn topology specs whose node shapes start at several ranks: one CP-SAT run, the value
  the two runs (the run switched off) prove, a low-ranks sum no higher than theirs, and the
  flat model's optimum.
* A run that proves nothing in its work (none allowed) leaves the two runs as before.
"""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

import numpy as np
from flat_model import flat_solution
from hypothesis import HealthCheck, event, given, note, settings
from test_count_topology import topology_specs

from solver_placement import Cluster, InfeasiblePlacementError, PlacementSpec
from solver_placement._solver.counts import model
from solver_placement._solver.counts.model import Counts, solve_counts
from solver_placement._solver.counts.patterns import Shape, parts, shapes
from solver_placement._solver.counts.problem import CountProblem, count_problem
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.options import SolverOptions
from solver_placement._solver_settings import DEFAULT_WEIGHTS

#: The count model's weights alone: ``balance`` is solved level by level elsewhere (``peak_levels.py``).
NODES_ONLY = {**DEFAULT_WEIGHTS, "balance": 0, "contiguity": 0}


def _counted(problem: CountProblem, found: list[Shape], node_start: np.ndarray) -> tuple[Counts | None, int]:
    """The count model's answer and its CP-SAT runs (the real solver, counted)."""
    with patch.object(model, "solve_model", wraps=model.solve_model) as runs:
        counts = solve_counts(problem, found, NODES_ONLY, node_start, SolverOptions(), SolverOptions().start())
    return counts, runs.call_count


def _low_ranks(counts: Counts, found: list[Shape], problem: CountProblem, node_start: np.ndarray) -> int:
    """What the low-ranks run minimises: each used pattern's GPUs (its home columns) times its
    shape's first rank, times its nodes."""
    total = 0
    for (s, t, p), nodes in counts.uses.items():
        shape = found[s]
        table = shape.tables[t]
        gpus = sum(
            g * problem.classes[shape.part[k]].width * len(problem.classes[shape.part[k]].members)
            for k, g in zip(table.columns, table.patterns[p])
            if shape.home(k) == t
        )
        total += gpus * int(node_start[shape.nodes[0]]) * nodes
    return total


def _stated(case: tuple[Cluster, dict[str, Any]]) -> tuple[PlacementSpec, CountProblem, list[Shape], np.ndarray] | None:
    """A drawn case's spec, count problem, node shapes and first ranks, where the count model
    states it with a domain counted and its shapes start at two ranks or more (else None)."""
    cluster, placement = case
    try:
        spec = PlacementSpec.build(cluster, placement)
    except InfeasiblePlacementError:
        return None
    problem = count_problem(spec, spec.requests)
    if not isinstance(problem, CountProblem) or not any(c.levels for c in problem.classes):
        return None
    found = [shape for part in parts(problem, joint=False) for shape in shapes(problem, cluster.gpus_per_node, part, lambda _: None)]
    node_start = np.concatenate(([0], np.cumsum(cluster.gpus_per_node)[:-1]))
    return (spec, problem, found, node_start) if len({int(node_start[shape.nodes[0]]) for shape in found}) > 1 else None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(topology_specs())
def test_one_run_proves_the_value_and_ranks_no_higher_than_two(case: tuple[Cluster, dict[str, Any]]) -> None:
    note(f"{case[0].gpus_per_node.tolist()} {case[1]}")
    stated = _stated(case)
    if stated is None:
        event("not a counted domain on several first ranks")
        return
    spec, problem, found, node_start = stated
    together, runs = _counted(problem, found, node_start)
    with patch.object(model, "TOGETHER_WORK", 0.0):  # no work: the run proves nothing, the two runs answer
        apart, apart_runs = _counted(problem, found, node_start)
    if together is None or apart is None:
        assert together is None and apart is None, "one way answered, the other did not"
        event("no answer")
        return
    event(f"{runs} run(s) together, {apart_runs} apart")
    assert runs == 1
    assert together.status == apart.status == "OPTIMAL"
    assert together.value == together.bound == apart.value
    assert _low_ranks(together, found, problem, node_start) <= _low_ranks(apart, found, problem, node_start)
    assert together.value == objective_value(spec, spec.requests, flat_solution(spec).assignments, NODES_ONLY, {})


def test_a_run_that_proves_nothing_leaves_the_two_runs() -> None:
    """Pipelines of two kept in a rack, on a 4-GPU node and two 8-GPU nodes (three first ranks):
    with no work allowed the run ends unproven and the two runs answer, at the same value."""
    labels = [{"rack": "r0"}, {"rack": "r0"}, {"rack": "r1"}]
    placement = {
        "actor": {"processes": 8, "tensor_parallel_size": 2, "pipeline_parallel_size": 2, "topology": {"pipeline_parallel": {"rack": "require"}}}
    }
    stated = _stated((Cluster(3, [4, 8, 8], node_labels=labels), placement))
    assert stated is not None
    _, problem, found, node_start = stated
    together, runs = _counted(problem, found, node_start)
    with patch.object(model, "TOGETHER_WORK", 0.0):
        apart, apart_runs = _counted(problem, found, node_start)
    assert together is not None and apart is not None
    assert (runs, apart_runs) == (1, 3)
    assert together.value == apart.value
