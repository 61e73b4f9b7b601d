"""The count path: declarative specs decided by node counts, GPU ids given by construction.

``tensor_domains.py`` counts a required tensor-parallel domain with groups on one node and
proves it by the rule as it is (``domain_levels.py`` states every required domain), ``preset.py`` places first the declarative components
collocated with rank strings (their items are known), ``problem.py`` reads a spec into classes, cliques and allowed nodes (or says which
rule it cannot state), ``patterns.py`` enumerates what one node may hold, ``model.py`` decides how many nodes
of each shape hold each pattern, and ``layout.py`` turns that into GPU ids. The caller verifies
the answer independently and falls back to the flat model when this path declines. Every
function here returns the solver's one shape (``answer.py``): an :class:`Answer` whose value and
bound are of the ``nodes`` and ``balance`` terms (``contiguity`` is a tie-break, see
``layout.py``, unless weighed: ``weighed.py`` prices ranks with ``contiguity.py``), or a
:class:`Declined` saying why.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from solver_placement._errors import counted
from solver_placement._solver.answer import Answer, Declined, PathName, by_component
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.bounds.objective import objective_lower_bound
from solver_placement._solver.counts.kinds import count_by_kind, splits
from solver_placement._solver.counts.layout import LayoutFailed, assignments
from solver_placement._solver.counts.model import NO_COUNT_ANSWER, solve_counts
from solver_placement._solver.counts.patterns import NotChordal, TooManyPatterns, parts, shapes
from solver_placement._solver.counts.preferred import preferring, variants
from solver_placement._solver.counts.preset import preset
from solver_placement._solver.counts.problem import CountProblem, count_problem
from solver_placement._solver.counts.separate import separations
from solver_placement._solver.counts.spanning import priced_level, spanned_rule
from solver_placement._solver.counts.stacks import Misfit
from solver_placement._solver.counts.tensor_domains import on_node, requires_tensor_domain
from solver_placement._solver.counts.weighed import counted_with_ranks
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.options import Budget, SolverOptions, SolveStatus
from solver_placement._solver.solution import Method
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.grammar import DomainRule
from solver_placement._specification.placement_spec import PlacementSpec

log = logging.getLogger(__name__)


def count_path(
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    weights: Mapping[str, int],
    options: SolverOptions,
    budget: Budget,
) -> Answer | Declined:
    """The spec placed by counts, or why this path declines (a rule it cannot state, too many
    patterns, no answer in time, or a layout the construction could not tile).

    ``weights`` are the objective's (defaults included). The ``changes`` term is not counted
    here (with previous placements the caller states it, ``replan.py``), and its answers cost nothing
    in ``topology`` (a preferred domain is counted as required and proven against the rule
    dropped, ``preferred.py``; a component placed first pays its own, ``preset.py``), so
    ``nodes`` and ``balance`` are what it weighs, and ``contiguity`` when its weight is not 0
    (``weighed.py``; the caller passes 0 when it is only the tie-break).
    """
    if splits(spec, requests):  # robots, whole nodes: each kind counted as GPUs are (``kinds.py``)
        return count_by_kind(spec, requests, bool(weights.get("balance")), lambda view: count_path(view, view.requests, weights, options, budget))
    if requires_tensor_domain(spec):
        return _count_tensor_domains(spec, weights, options, budget)
    return _count_stated(spec, requests, weights, options, budget)


def _count_stated(
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    weights: Mapping[str, int],
    options: SolverOptions,
    budget: Budget,
    priced: tuple[str, DomainRule] | None = None,
) -> Answer | Declined:
    """:func:`count_path` with every rule as the spec states it (no restriction tried first);
    ``priced``: a preferred rule (its owner and the rule) whose bound the model weighs
    (``spanning.py``)."""
    ready = preset(spec, requests, weights, options, budget)
    if isinstance(ready, Declined):
        return ready
    requests, fixed_cost = ready.requests, int(weights.get("nodes", 0)) * ready.nodes + int(weights.get("topology", 0)) * ready.topology
    if ready.nodes and all(request.determined for request in requests.values()):
        placed = {name: Assignment(r.indptr, r.cand_hw, r.cand_rank, spec.cluster.num_hardware) for name, r in requests.items()}
        value = objective_value(spec, spec.requests, by_component(spec, placed), weights, {})  # every item known: the spec's own value
        return _answer(spec, placed, SolveStatus.OPTIMAL, value, value)
    problem = count_problem(spec, requests)
    load = ready.load if ready.nodes and weights.get("balance") else None  # placed first: a constant load per node
    if isinstance(problem, Misfit):
        return _count_separating(spec, requests, problem, weights, options, budget, fixed_cost, load)
    if isinstance(problem, str):
        return (_count_preferring(spec, weights, options, budget) if preferring(spec) else None) or Declined(PathName.COUNTS, problem)
    if priced is not None:
        problem = _with_priced(problem, spec, requests, *priced)
        if isinstance(problem, str):
            return Declined(PathName.COUNTS, problem)
    return _counted(problem, spec, requests, weights, options, budget, fixed_cost, load)


def _with_priced(problem: CountProblem, spec: PlacementSpec, requests: Mapping[str, ComponentRequest], owner: str, rule: DomainRule) -> CountProblem | str:
    """``problem`` with ``owner``'s preferred ``rule`` priced in its class (``spanning.py``), or
    why not."""
    found = next((c for c in problem.classes if owner in c.members), None)
    level = None if found is None or found.levels else priced_level(spec, requests, owner, rule, found.width)
    if found is None or level is None:
        return f"{owner}: topology ({rule.group}.{rule.label}: prefer), which no placement keeps, on groups it does not price"
    return replace(problem, classes=tuple(replace(c, priced=level) if c is found else c for c in problem.classes))


def _counted(
    problem: CountProblem,
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    weights: Mapping[str, int],
    options: SolverOptions,
    budget: Budget,
    fixed_cost: int = 0,
    load: np.ndarray | None = None,
) -> Answer | Declined:
    """Patterns, counts and layout of one count problem (see :func:`count_path`); ``fixed_cost``
    is what the components placed first add to every answer, ``load`` their GPUs per node when
    ``balance`` weighs them (``preset.py``)."""
    if load is not None:
        problem = replace(problem, load=load)
    if weights.get("contiguity"):
        return counted_with_ranks(problem, spec, requests, weights, options, budget)
    cluster = spec.cluster
    joint = bool(weights.get("balance"))
    found = []
    for part in parts(problem, joint):
        try:
            found += shapes(problem, cluster.gpus_per_node, part, budget.check, whole=joint)
        except TooManyPatterns:
            if joint:  # whole-node patterns past the model's size: those a better answer may use (``reduced_costs.py``)
                return counted_with_ranks(problem, spec, requests, weights, options, budget)
            log.debug("too many whole-node patterns: enumerating them clique by clique")
            try:
                found += shapes(problem, cluster.gpus_per_node, part, budget.check, by_clique=True)
            except TooManyPatterns:
                return Declined(PathName.COUNTS, "more node patterns than the count model enumerates, even clique by clique")
            except NotChordal:
                return Declined(PathName.COUNTS, "more node patterns than the count model enumerates (a cycle of four or more components kept apart, with no chord, needs whole-node patterns)")
    log.debug("the count model: %s with their patterns", counted(len(found), "node shape"))
    node_start = np.concatenate(([0], np.cumsum(cluster.gpus_per_node)[:-1]))
    counts = solve_counts(problem, found, weights, node_start, options, budget)
    if counts is None:
        return Declined(PathName.COUNTS, NO_COUNT_ANSWER)
    try:
        placed = assignments(problem, found, counts, requests, cluster)
    except LayoutFailed:
        return Declined(PathName.COUNTS, "a node whose groups could not be tiled by their strides")
    for name, request in requests.items():
        if request.determined:
            placed[name] = Assignment(request.indptr, request.cand_hw, request.cand_rank, cluster.num_hardware)
    return _answer(spec, placed, SolveStatus(counts.status), counts.value + fixed_cost, counts.bound + fixed_cost)


def _count_separating(
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    misfit: Misfit,
    weights: Mapping[str, int],
    options: SolverOptions,
    budget: Budget,
    fixed_cost: int,
    load: np.ndarray | None,
) -> Answer | Declined:
    """Memory that fits in pairs but not all together (``separate.py``): the best answer with a
    pair kept apart, bounded by the spec with memory stated by pairs only."""
    log.debug("memory fits two by two but not all together: %s", misfit.reason)
    relaxed = count_problem(spec, requests, relaxed=True)
    looser = _counted(relaxed, spec, requests, weights, options, budget, fixed_cost, load) if isinstance(relaxed, CountProblem) else None
    least = looser.bound if isinstance(looser, Answer) and looser.bound is not None else objective_lower_bound(spec, weights)
    best: Answer | None = None
    for problem in separations(lambda pairs: count_problem(spec, requests, separate=pairs), misfit):
        answer = _counted(problem, spec, requests, weights, options, budget, fixed_cost, load)
        if isinstance(answer, Answer) and (best is None or answer.known("objective") < best.known("objective")):
            best = answer
            if best.known("objective") <= least:
                break  # meets the bound: no other separation can do better
    if best is None:
        return Declined(PathName.COUNTS, misfit.reason)
    status = SolveStatus.OPTIMAL if best.status == SolveStatus.OPTIMAL and best.known("objective") <= least else SolveStatus.FEASIBLE
    return replace(best, status=status, bound=min(least, best.known("objective")))


def _count_preferring(spec: PlacementSpec, weights: Mapping[str, int], options: SolverOptions, budget: Budget) -> Answer | None:
    """A spec preferring domains its units may span, counted with them required and proven
    against them dropped (``preferred.py``); None when the required spec is not counted either."""
    required, dropped = variants(spec)
    log.debug("a preferred domain: counted as required, then proven against the rule dropped")
    answer = count_path(required, required.requests, weights, options, budget)
    if isinstance(answer, Declined):
        return _count_spanning(spec, dropped, weights, options, budget)
    least_other = objective_lower_bound(dropped, weights)
    if answer.known("objective") > int(weights.get("topology", 0)) + least_other:  # the counting bound does not prove it: the count model's may
        other = count_path(dropped, dropped.requests, weights, options, budget)
        least_other = max(least_other, other.bound) if isinstance(other, Answer) and other.bound is not None else least_other
    bound = min(answer.known("bound"), int(weights.get("topology", 0)) + least_other)
    status = SolveStatus.OPTIMAL if answer.status == SolveStatus.OPTIMAL and bound == answer.known("objective") else SolveStatus.FEASIBLE
    return replace(answer, status=status, bound=bound)


def _count_spanning(spec: PlacementSpec, dropped: PlacementSpec, weights: Mapping[str, int], options: SolverOptions, budget: Budget) -> Answer | None:
    """A preferred domain no placement keeps whole, its least cost weighed in the count model
    (``spanning.py``); the answer only when its own objective meets the model's bound, else None."""
    rule = spanned_rule(spec)
    if rule is None or weights.get("contiguity"):
        return None
    log.debug("a preferred domain no placement keeps: its least spans weighed by the count model")
    answer = _count_stated(dropped, dropped.requests, weights, options, budget, priced=rule)
    if not isinstance(answer, Answer) or answer.status != SolveStatus.OPTIMAL or answer.assignments is None:
        return None
    value = objective_value(spec, spec.requests, answer.assignments, weights, {})
    return replace(answer, objective=value, primary=value) if value == answer.bound else None


def _count_tensor_domains(spec: PlacementSpec, weights: Mapping[str, int], options: SolverOptions, budget: Budget) -> Answer | Declined:
    """A spec requiring tensor-parallel domains, counted with every group on one node and proven
    by the rule as it is, groups free to span nodes of a domain (``tensor_domains.py``): the
    restricted answer when nothing is better, else the exact one."""
    restricted = on_node(spec)
    log.debug("a required tensor-parallel domain: counted with groups on one node, proven with groups spanning nodes")
    kept = None if restricted is None else count_path(restricted, restricted.requests, weights, options, budget)
    least = objective_lower_bound(spec, weights)
    if isinstance(kept, Answer) and kept.status == SolveStatus.OPTIMAL and kept.known("objective") <= least:
        return replace(kept, bound=kept.known("objective"))
    exact = _count_stated(spec, spec.requests, weights, options, budget)
    if isinstance(exact, Answer) and exact.bound is not None:
        least = max(least, exact.bound)
    found = [answer for answer in (kept, exact) if isinstance(answer, Answer)]
    if not found:
        return exact if isinstance(exact, Declined) else Declined(PathName.COUNTS, "a required tensor-parallel domain with no count answer")
    best = min(found, key=lambda answer: answer.known("objective"))  # the restricted one on a tie
    status = SolveStatus.OPTIMAL if best.known("objective") <= least else SolveStatus.FEASIBLE
    return replace(best, status=status, bound=min(least, best.known("objective")))


def _answer(spec: PlacementSpec, placed: Mapping[str, Assignment], status: SolveStatus, value: int, bound: int) -> Answer:
    """The count path's answer from assignments by rule-owning request; its value, on the count
    model's scale, is also its value without ``contiguity``."""
    return Answer(PathName.COUNTS, Method.COUNTS, by_component(spec, placed), status, value, bound, primary=value)


__all__ = ["count_path"]
