"""The count path: declarative specs decided by node counts, GPU ids given by construction.

``problem.py`` reads a spec into classes, cliques and allowed nodes (or says which rule it cannot
state), ``patterns.py`` enumerates what one node may hold, ``model.py`` decides how many nodes
of each shape hold each pattern, and ``layout.py`` turns that into GPU ids. The caller verifies
the answer independently and falls back to the flat model when this path declines.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from solver_placement._solver.assignment import Assignment
from solver_placement._solver.bounds.objective import objective_lower_bound
from solver_placement._solver.counts.layout import LayoutFailed, assignments
from solver_placement._solver.counts.model import solve_counts
from solver_placement._solver.counts.patterns import TooManyPatterns, parts, shapes
from solver_placement._solver.counts.preferred import preferring, variants
from solver_placement._solver.counts.problem import CountProblem, count_problem
from solver_placement._solver.counts.separate import separations
from solver_placement._solver.counts.stacks import Misfit
from solver_placement._solver.options import Budget, SolverOptions
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CountAnswer:
    """Assignments of every rule-owning request, the count model's status, value and bound
    (of the ``nodes`` and ``balance`` terms; ``contiguity`` is a tie-break, see ``layout.py``)."""

    assignments: dict[str, Assignment]
    status: str
    value: int
    bound: int


def count_path(
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    weights: Mapping[str, int],
    options: SolverOptions,
    budget: Budget,
) -> CountAnswer | str:
    """The spec placed by counts, or why this path declines (a rule it cannot state, too many
    patterns, no answer in time, or a layout the construction could not tile).

    ``weights`` are the objective's (defaults included). The ``changes`` term needs the flat
    model (the caller does not come here with previous placements), and its answers cost nothing
    in ``topology`` (a preferred pipeline domain is counted as required and proven against the
    rule dropped, ``preferred.py``), so ``nodes`` and ``balance`` are all it weighs.
    """
    problem = count_problem(spec, requests)
    if isinstance(problem, Misfit):
        return _count_separating(spec, requests, problem, weights, options, budget)
    if isinstance(problem, str):
        return _count_preferring(spec, weights, options, budget) or problem if preferring(spec) else problem
    return _counted(problem, spec, requests, weights, options, budget)


def _counted(
    problem: CountProblem, spec: PlacementSpec, requests: Mapping[str, ComponentRequest], weights: Mapping[str, int], options: SolverOptions, budget: Budget
) -> CountAnswer | str:
    """Patterns, counts and layout of one count problem (see :func:`count_path`)."""
    cluster = spec.cluster
    joint = bool(weights.get("balance"))
    found = []
    for part in parts(problem, joint):
        try:
            found += shapes(problem, cluster.gpus_per_node, part, budget.check)
        except TooManyPatterns:
            if joint:
                return "more node patterns than the count model enumerates (the balance term needs whole-node patterns)"
            log.debug("too many whole-node patterns: enumerating them clique by clique")
            try:
                found += shapes(problem, cluster.gpus_per_node, part, budget.check, by_clique=True)
            except TooManyPatterns:
                return "more node patterns than the count model enumerates, even clique by clique"
    log.debug("the count model: %d node shape(s) with their patterns", len(found))
    node_start = np.concatenate(([0], np.cumsum(cluster.gpus_per_node)[:-1]))
    counts = solve_counts(problem, found, weights, node_start, options, budget)
    if counts is None:
        return "no count answer within the time limit"
    try:
        placed = assignments(problem, found, counts, requests, cluster)
    except LayoutFailed:
        return "a node whose groups could not be tiled by their strides"
    for name, request in requests.items():
        if request.determined:
            placed[name] = Assignment(request.indptr, request.cand_hw, request.cand_rank, cluster.num_hardware)
    return CountAnswer(placed, counts.status, counts.value, counts.bound)


def _count_separating(
    spec: PlacementSpec, requests: Mapping[str, ComponentRequest], misfit: Misfit, weights: Mapping[str, int], options: SolverOptions, budget: Budget
) -> CountAnswer | str:
    """Memory that fits in pairs but not all together (``separate.py``): the best answer with a
    pair kept apart, bounded by the spec with memory stated by pairs only."""
    log.debug("memory fits two by two but not all together: %s", misfit.reason)
    relaxed = count_problem(spec, requests, relaxed=True)
    looser = _counted(relaxed, spec, requests, weights, options, budget) if isinstance(relaxed, CountProblem) else None
    least = looser.bound if isinstance(looser, CountAnswer) else objective_lower_bound(spec, weights)
    best: CountAnswer | None = None
    for problem in separations(lambda pairs: count_problem(spec, requests, separate=pairs), misfit):
        answer = _counted(problem, spec, requests, weights, options, budget)
        if isinstance(answer, CountAnswer) and (best is None or answer.value < best.value):
            best = answer
            if best.value <= least:
                break  # meets the bound: no other separation can do better
    if best is None:
        return misfit.reason
    status = "OPTIMAL" if best.status == "OPTIMAL" and best.value <= least else "FEASIBLE"
    return CountAnswer(best.assignments, status, best.value, min(least, best.value))


def _count_preferring(spec: PlacementSpec, weights: Mapping[str, int], options: SolverOptions, budget: Budget) -> CountAnswer | None:
    """A spec preferring pipeline domains, counted with them required and proven against them
    dropped (``preferred.py``); None when the required spec is not counted either."""
    required, dropped = variants(spec)
    log.debug("a preferred pipeline domain: counted as required, then proven against the rule dropped")
    answer = count_path(required, required.requests, weights, options, budget)
    if isinstance(answer, str):
        return None
    other = count_path(dropped, dropped.requests, weights, options, budget)
    least_other = other.bound if isinstance(other, CountAnswer) else objective_lower_bound(dropped, weights)
    bound = min(answer.bound, int(weights.get("topology", 0)) + least_other)
    status = "OPTIMAL" if answer.status == "OPTIMAL" and bound == answer.value else "FEASIBLE"
    return CountAnswer(answer.assignments, status, answer.value, bound)


__all__ = ["CountAnswer", "count_path"]
