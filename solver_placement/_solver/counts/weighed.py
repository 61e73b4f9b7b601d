"""The count path when ``contiguity`` is weighed as a term: patterns, counts and layout with the
ranks priced (``contiguity.py``), and the answer proven only when its own value meets the bound.

Why a path of its own: with contiguity only a tie-break, the count model proves ``nodes`` and
``balance`` and orders ties afterwards (``model.py``'s second run); weighed, the ranks trade
against the other terms, so they join the one objective, every shape is cut into runs whose ranks
rise evenly, and the layout gives each node the stacks of its least local cost. Whole-node
patterns are needed (a node's local cost is of its whole pattern), as for ``balance``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import numpy as np

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import counted
from solver_placement._solver.answer import Answer, Declined, PathName, by_component
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.counts.contiguity import (
    Local,
    TooManyLocalStates,
    add_term,
    consecutive_run,
    in_some_hole_set,
    kept_off,
    rank_bases,
    ranked_shapes,
    stacks_of,
)
from solver_placement._solver.counts.fixed_loads import FixedLoad
from solver_placement._solver.counts.graphs import ApartGraph
from solver_placement._solver.counts.layout import LayoutFailed, assignments
from solver_placement._solver.counts.model import solve_counts
from solver_placement._solver.counts.patterns import MAX_PATTERNS, Shape, TooManyPatterns, beside_of, parts, shapes
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.options import Budget, SolverOptions, SolveStatus
from solver_placement._solver.solution import Method
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec

log = logging.getLogger(__name__)


def counted_with_ranks(
    problem: CountProblem,
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    weights: Mapping[str, int],
    options: SolverOptions,
    budget: Budget,
) -> Answer | Declined:
    """The count problem solved with ``contiguity`` weighed (``weights["contiguity"]`` > 0);
    its value is the spec's objective of the layout built, its bound the model's."""
    cluster = spec.cluster
    bases = rank_bases(problem, requests, cluster)
    if isinstance(bases, str):
        return Declined(PathName.COUNTS, bases)
    found: list[Shape] = []
    for part in parts(problem, bool(weights.get("balance"))):
        try:
            found += shapes(problem, cluster.gpus_per_node, part, budget.check)
        except TooManyPatterns:
            return Declined(PathName.COUNTS, "more node patterns than the count model enumerates (a weighed contiguity needs whole-node patterns)")
    pricer = _Pricer(problem, requests, cluster, budget)
    try:
        ranked = ranked_shapes(problem, found, bases, cluster, pricer.cost)
    except TooManyLocalStates:
        return Declined(PathName.COUNTS, "more local layouts of node patterns than the contiguity term prices")
    if sum(run.shape.size for run in ranked) > MAX_PATTERNS:
        return Declined(PathName.COUNTS, "more node patterns than the count model enumerates, once cut into runs of evenly rising ranks")
    log.debug("the count model with contiguity weighed: %s", counted(len(ranked), "run"))
    weight = int(weights["contiguity"])
    node_start = np.concatenate(([0], np.cumsum(cluster.gpus_per_node)[:-1]))
    counts = solve_counts(problem, [run.shape for run in ranked], weights, node_start, options, budget, lambda model, uses: weight * add_term(model, ranked, uses))
    if counts is None:
        return Declined(PathName.COUNTS, "no count answer within the time limit")
    try:
        placed = assignments(problem, [run.shape for run in ranked], counts, requests, cluster, lambda s, pattern: ranked[s].rise(pattern), pricer.ids)
    except LayoutFailed:
        return Declined(PathName.COUNTS, "a node whose groups could not be tiled by their strides")
    for name, request in requests.items():
        if request.determined:
            placed[name] = Assignment(request.indptr, request.cand_hw, request.cand_rank, cluster.num_hardware)
    return _answer(spec, requests, placed, weights, counts.status, counts.bound)


def _answer(
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    placed: Mapping[str, Assignment],
    weights: Mapping[str, int],
    status: str,
    model_bound: int,
) -> Answer:
    """The answer with the spec's own objective of ``placed``; the bound is the model's plus what
    the components placed before counting cost (``preset.py``: free in the spec, fixed here).
    Proven when the model is and the layout met its bound (a node whose least-cost stacks break
    a stride's runs is laid out another way, and may cost more)."""
    assignments_ = by_component(spec, placed)
    value = objective_value(spec, spec.requests, assignments_, weights, {})
    preset = {name: spec.requests[name] for name, request in requests.items() if request.determined and not spec.requests[name].determined}
    fixed = objective_value(spec, preset, {name: placed[name] for name in preset}, {**weights, "balance": 0}, {}) if preset else 0  # their load is in the model's
    bound = min(model_bound + fixed, value)
    proven = SolveStatus.OPTIMAL if status == "OPTIMAL" and value == bound else SolveStatus.FEASIBLE
    primary = objective_value(spec, spec.requests, assignments_, {**weights, "contiguity": 0}, {})
    return Answer(PathName.COUNTS, Method.COUNTS, assignments_, proven, value, bound, primary=primary)


class _Pricer:
    """One :class:`Local` search per part, graph, GPU count and GPUs kept off, shared by the
    pricing of every pattern and by the layout of every node."""

    def __init__(self, problem: CountProblem, requests: Mapping[str, ComponentRequest], cluster: Cluster, budget: Budget) -> None:
        self.problem = problem
        self.requests = requests
        self.cluster = cluster
        self.budget = budget
        self.parts: list[tuple[int, ...]] = []
        self.searches: dict[tuple[object, ...], Local] = {}

    def cost(self, run: Shape, node: int, demand: tuple[int, ...]) -> float:
        """The least local cost of ``demand`` (GPUs per class of the run's part) on ``node``."""
        if run.part not in self.parts:
            self.parts.append(run.part)
        graph = self.problem.graphs[int(self.problem.graph_of[node])]
        off = kept_off(self.problem, run.part, self.cluster, node)
        capacity = int(self.cluster.gpus_per_node[node])
        loads = self.problem.beside.on_node(node, capacity) if self.problem.beside is not None else ()
        return self._search(graph, run.part, capacity, off, loads).cost(demand)

    def ids(
        self, graph: ApartGraph, capacity: int, pattern: tuple[int, ...], keep_off: tuple[tuple[int, ...], ...], loads: tuple[FixedLoad | None, ...]
    ) -> dict[int, np.ndarray]:
        """Each present class's local ids on a node asked ``pattern`` (beside the rank strings'
        ``loads``): the least-cost stacks of each part, GPU by GPU."""
        taken: dict[int, np.ndarray] = {}
        for part in self.parts:
            demand = tuple(pattern[c] * self.problem.classes[c].width for c in part)
            if not any(demand):
                continue
            stacks = self._search(graph, part, capacity, tuple(keep_off[c] for c in part), loads).layout(demand)
            for k, c in enumerate(part):
                if demand[k]:
                    taken[c] = np.array([gpu for gpu, stack in enumerate(stacks) if k in stack], dtype=np.int64)
        return taken

    def _search(
        self, graph: ApartGraph, part: tuple[int, ...], capacity: int, off: tuple[tuple[int, ...], ...], loads: tuple[FixedLoad | None, ...] = ()
    ) -> Local:
        key = (graph, part, capacity, off, loads)
        if key not in self.searches:
            classes = [self.problem.classes[c] for c in part]
            weights = tuple(len(count_class.members) for count_class in classes)
            runs = tuple(consecutive_run([(int(self.requests[m].amount[0]), int(self.requests[m].stride or 1)) for m in c.members]) for c in classes)
            stacks = stacks_of(graph, part, in_some_hole_set(graph))
            self.searches[key] = Local(weights, stacks, capacity, off, runs, self.budget.check, loads, beside_of(self.problem, part) if loads else None)
        return self.searches[key]
