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

from solver_placement._errors import SolverTimeoutError, agreeing, counted
from solver_placement._solver.answer import Answer, Declined, PathName, by_component, through
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.bounds.objective import objective_lower_bound
from solver_placement._solver.counts.dropped_domains import dropped_first, many_domains
from solver_placement._solver.counts.followers import Blocks, Loose, Untiled
from solver_placement._solver.counts.kinds import count_by_kind, splits
from solver_placement._solver.counts.layout import LayoutFailed, assignments
from solver_placement._solver.counts.maximal import maximal_tables, solve_maximal
from solver_placement._solver.counts.model import NO_COUNT_ANSWER, Counts, solve_counts
from solver_placement._solver.counts.patterns import NotChordal, Shape, TooManyPatterns, parts, shapes
from solver_placement._solver.counts.peak_levels import solve_balanced
from solver_placement._solver.counts.per_node import alone, counted_per_node, per_node_applies, share
from solver_placement._solver.counts.preferred import forced_spans, preferring, variants
from solver_placement._solver.counts.preset import preset
from solver_placement._solver.counts.problem import CountProblem, count_problem
from solver_placement._solver.counts.rank_strings import rank_strings_alone
from solver_placement._solver.counts.separate import fits_every_gpu, separations
from solver_placement._solver.counts.spanning import joins_labels, rule_orders, spanned_rules, with_priced
from solver_placement._solver.counts.stacks import Misfit
from solver_placement._solver.counts.tensor_domains import groups_anywhere, on_node, requires_tensor_domain
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
    load: np.ndarray | None = None,
) -> Answer | Declined:
    """The spec placed by counts, or why this path declines (a rule it cannot state, too many
    patterns, no answer in time, or a layout the construction could not tile).

    ``weights`` are the objective's (defaults included). The ``changes`` term is not counted
    here (with previous placements the caller states it, ``replan.py``), and
    ``topology`` is weighed only where a preferred domain is not kept (a preferred domain is
    counted as required and proven against the rule dropped, ``preferred.py``; where no
    placement keeps it, its term is stated by counts, ``spanning.py``; a component placed first
    pays its own, ``preset.py``), so ``nodes`` and ``balance`` are what it weighs, and ``contiguity`` when its weight is not 0
    (``weighed.py``; the caller passes 0 when it is only the tie-break). ``load``: items per node
    of free components placed before this view was counted (``kinds.py``), which ``balance``
    adds to every node's.
    """
    if all(request.determined for request in requests.values()):  # nothing to choose (``rank_strings.py``)
        return rank_strings_alone(spec, requests)
    if splits(spec, requests):  # robots, whole nodes: each kind counted as GPUs are (``kinds.py``)
        return count_by_kind(spec, requests, weights, options, budget, lambda view, placed: count_path(view.spec, view.spec.requests, weights, options, budget, placed))
    if requests is spec.requests and many_domains(spec):  # one run per domain: dropped first, proven if kept (``dropped_domains.py``)
        return dropped_first(spec, weights, lambda view: count_path(view, view.requests, weights, options, budget, load), lambda: _as_stated(spec, requests, weights, options, budget, load))
    return _as_stated(spec, requests, weights, options, budget, load)


def _as_stated(
    spec: PlacementSpec, requests: Mapping[str, ComponentRequest], weights: Mapping[str, int], options: SolverOptions, budget: Budget, load: np.ndarray | None
) -> Answer | Declined:
    """:func:`count_path` past its views: required tensor-parallel domains, or every rule as stated."""
    if requires_tensor_domain(spec):
        return _count_tensor_domains(spec, weights, options, budget, load)
    return _count_stated(spec, requests, weights, options, budget, load=load)


def _count_stated(
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    weights: Mapping[str, int],
    options: SolverOptions,
    budget: Budget,
    priced: tuple[tuple[str, DomainRule], ...] = (),
    load: np.ndarray | None = None,
    joint: bool = False,
) -> Answer | Declined:
    """:func:`count_path` with every rule as the spec states it (no restriction tried first);
    ``priced``: preferred rules (their owners and the rules) whose ``topology`` term the model
    states (``spanning.py``; with ``joint``, a member's rules on several labels together,
    ``crossing.py``); ``load`` as there."""
    ready = preset(spec, requests, weights, options, budget)
    if isinstance(ready, Declined):
        return ready
    requests, fixed_cost = ready.requests, int(weights.get("nodes", 0)) * ready.nodes + int(weights.get("topology", 0)) * ready.topology
    if ready.nodes and all(request.determined for request in requests.values()):
        placed = {name: Assignment(r.indptr, r.cand_hw, r.cand_rank, spec.cluster.num_hardware) for name, r in requests.items()}
        value = objective_value(spec, spec.requests, by_component(spec, placed), weights, {})  # every item known: the spec's own value
        return _answer(spec, placed, SolveStatus.OPTIMAL, value, value, "every item known once the components collocated with rank strings are placed on theirs")
    problem = count_problem(spec, requests)
    budget.check("stating the count problem")  # its steps run per node: ~1 s of 16,384 nodes with rank strings beside
    if isinstance(problem, str):  # the variants place the same components first again: ``load`` as given
        return (_count_preferring(spec, weights, options, budget, load) if preferring(spec) else None) or Declined(PathName.COUNTS, problem)
    placed_load = _with_placed(load, ready.load if ready.nodes else None) if weights.get("balance") else None  # a constant load per node
    if isinstance(problem, Misfit):
        return _count_separating(spec, requests, problem, weights, options, budget, fixed_cost, placed_load)
    if isinstance(problem, Loose):
        return Declined(PathName.COUNTS, problem.reason) if priced else _count_in_blocks(spec, requests, problem, weights, options, budget, fixed_cost, placed_load)
    if priced:
        problem = with_priced(problem, spec, requests, priced, budget.check, joint)
        if isinstance(problem, str):
            return Declined(PathName.COUNTS, problem)
    answer = _counted(problem, spec, requests, weights, options, budget, fixed_cost, placed_load)
    if ready.nodes and isinstance(answer, Answer):
        return through(answer, "the components collocated with rank strings placed first, on their targets' items")
    return answer


def _with_placed(load: np.ndarray | None, placed: np.ndarray | None) -> np.ndarray | None:
    """Items per node of components placed before the counts: those placed before this view
    (``load``, ``kinds.py``) and those ``preset.py`` placed here."""
    if load is None or placed is None:
        return placed if load is None else load
    return load + placed


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
    if not weights.get("balance") or not per_node_applies(problem):
        return _by_patterns(problem, spec, requests, weights, options, budget, fixed_cost)
    # a few nodes under balance: each node's GPUs by stack, no pattern listed, on the fewest
    # nodes; on more, the patterns first where they are few, else a part of the time per node
    # first (``per_node.py``)
    listed = None if alone(problem) else _whole_node_shapes(problem, spec.cluster.gpus_per_node, budget)
    second = None if listed is None else _laid_out(problem, spec, requests, listed, *_counts_of(problem, listed, weights, spec.cluster.gpus_per_node, options, budget), fixed_cost)
    if isinstance(second, Answer) and second.status == SolveStatus.OPTIMAL:
        return second
    per_node = "the per-node model: each node's GPUs by stack, balance level by level (balance weighed on few nodes, no pattern listed)"
    first = _laid_out(problem, spec, requests, *counted_per_node(problem, spec.cluster, weights, options, share(problem, budget)), per_node, fixed_cost)
    if alone(problem) or (isinstance(first, Answer) and first.status == SolveStatus.OPTIMAL):
        return first
    if second is None:
        log.debug("the per-node model proved nothing in its part of the time: the patterns")
        second = _by_patterns(problem, spec, requests, weights, options, budget, fixed_cost)
    found = [answer for answer in (second, first) if isinstance(answer, Answer)]
    return min(found, key=lambda answer: answer.known("objective")) if found else second


def _by_patterns(
    problem: CountProblem,
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    weights: Mapping[str, int],
    options: SolverOptions,
    budget: Budget,
    fixed_cost: int,
) -> Answer | Declined:
    """:func:`_counted` by node patterns: listed per shape, counted, laid out."""
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
            except (TooManyPatterns, NotChordal):  # too many by clique, or no clique tree: every whole-node pattern, walked (``weighed.py``)
                return counted_with_ranks(problem, spec, requests, weights, options, budget)
    return _laid_out(problem, spec, requests, found, *_counts_of(problem, found, weights, cluster.gpus_per_node, options, budget), fixed_cost)


def _whole_node_shapes(problem: CountProblem, gpus_per_node: np.ndarray, budget: Budget) -> list[Shape] | None:
    """Every whole-node pattern per shape (``balance`` weighed: one part), or None past the
    patterns ``patterns.shapes`` lists (then ``weighed.py`` walks them)."""
    try:
        return [shape for part in parts(problem, True) for shape in shapes(problem, gpus_per_node, part, budget.check, whole=True)]
    except TooManyPatterns:
        return None


def _counts_of(
    problem: CountProblem, found: list[Shape], weights: Mapping[str, int], gpus_per_node: np.ndarray, options: SolverOptions, budget: Budget
) -> tuple[Counts | None, str]:
    """The count model over the patterns ``found`` (``balance`` weighed: level by level), and
    which model that was, in words for the solution's notes."""
    log.debug("the count model: %s with their patterns", counted(len(found), "node shape"))
    node_start = np.concatenate(([0], np.cumsum(gpus_per_node)[:-1]))
    patterns = sum(shape.size for shape in found)
    over = f"{patterns:,} {agreeing(patterns, 'node pattern')} of {counted(len(found), 'node shape')}"
    levels = ", balance level by level of its peak" if weights.get("balance") else ""
    maximal = maximal_tables(problem, found, bool(weights.get("balance")))  # many patterns: the count model over those no class grows on (``maximal.py``)
    if maximal is not None:
        counts = solve_maximal(problem, found, maximal, weights, node_start, options, budget)
        return counts, f"counted over the maximal ones of {over} and what each gives back{levels} (many patterns: those no class grows on state them all)"
    counts = (solve_balanced if weights.get("balance") else solve_counts)(problem, found, weights, node_start, options, budget)
    return counts, f"counted over {over}{levels} (nodes per pattern: every rule stated by counts, the model's size independent of the GPU count)"


def _laid_out(
    problem: CountProblem, spec: PlacementSpec, requests: Mapping[str, ComponentRequest], found: list[Shape], counts: Counts | None, model: str, fixed_cost: int
) -> Answer | Declined:
    """The count model's answer laid out on GPU ids (``layout.py``), or why not; ``model`` names
    the model that counted it."""
    cluster = spec.cluster
    if counts is None:
        return Declined(PathName.COUNTS, NO_COUNT_ANSWER)
    try:
        placed = assignments(problem, found, counts, requests, cluster)
    except LayoutFailed:
        return Declined(PathName.COUNTS, "a node whose groups could not be tiled by their strides")
    except Untiled as untiled:  # a relaxation's counts (``Blocks.SPLIT``): no layout, but their bound
        raise Untiled(str(untiled), counts.bound + fixed_cost) from None
    for name, request in requests.items():
        if request.determined:
            placed[name] = Assignment(request.indptr, request.cand_hw, request.cand_rank, cluster.num_hardware)
    return _answer(spec, placed, SolveStatus(counts.status), counts.value + fixed_cost, counts.bound + fixed_cost, model)


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
    pair kept apart, bounded by the spec with memory stated by pairs only; where none meets that
    bound, the spec with such memory stated exactly (a hole of the classes holding memory, its
    stacks those that fit: ``stacks.apart_graphs``), whose answer is the spec's own. Why that
    one last: where the hole joins a long chain of exclusions its walk passes its limit after
    most of a second (``heterogeneous:635:342``), and a pair kept apart proves most such specs
    in milliseconds (``heterogeneous:10:66``: 0.02 s, 1.0 s with the hole first); three
    components that fit two by two on 3 GPUs, two processes each, have no answer with any pair
    kept apart, and the hole proves the one with each GPU holding a pair."""
    log.debug("memory fits two by two but not all together: %s", misfit.reason)
    relaxed = count_problem(spec, requests, relaxed=True)
    looser = _counted(relaxed, spec, requests, weights, options, budget, fixed_cost, load) if isinstance(relaxed, CountProblem) else None
    least = looser.bound if isinstance(looser, Answer) and looser.bound is not None else objective_lower_bound(spec, weights)
    if isinstance(looser, Answer) and looser.status == SolveStatus.OPTIMAL and fits_every_gpu(spec, looser.assignments):
        log.debug("the answer with memory stated by pairs keeps it on every GPU: optimal as it is")
        return through(looser, "memory that fits two by two but not all together, stated by pairs: the answer keeps it on every GPU")
    best: Answer | None = None
    try:
        for problem in separations(lambda pairs: count_problem(spec, requests, separate=pairs), misfit):
            answer = _counted(problem, spec, requests, weights, options, budget, fixed_cost, load)
            if isinstance(answer, Answer) and (best is None or answer.known("objective") < best.known("objective")):
                best = through(answer, "memory that fits two by two but not all together: the best layout with a pair kept apart, proven against memory stated by pairs")
                if best.known("objective") <= least:
                    break  # meets the bound: no other separation can do better
        if best is None or best.known("objective") > least:
            stacked = count_problem(spec, requests, stacked=True)
            exact = _counted(stacked, spec, requests, weights, options, budget, fixed_cost, load) if isinstance(stacked, CountProblem) else None
            log.debug("memory stated by the stacks that fit: %s", exact.reason if isinstance(exact, Declined) else exact.status if exact else "not stated")
            if isinstance(exact, Answer):
                least = max(least, exact.known("bound"))  # the spec's own bound
                if best is None or exact.known("objective") <= best.known("objective"):
                    best = through(exact, "memory that fits two by two but not all together: stated exactly, the GPU stacks of its holders those that fit")
    except SolverTimeoutError:  # the bound of memory stated by pairs holds all the same: first fit may meet it
        log.debug("the time ran out among the pairs kept apart: %s", "the best so far" if best else "none, the bound of memory by pairs kept")
        if best is None:
            return Declined(PathName.COUNTS, f"{misfit.reason}; the time ran out among the pairs kept apart", bound=least)
    if best is None:
        return Declined(PathName.COUNTS, misfit.reason, bound=least)
    status = SolveStatus.OPTIMAL if best.status == SolveStatus.OPTIMAL and best.known("objective") <= least else SolveStatus.FEASIBLE
    return replace(best, status=status, bound=min(least, best.known("objective")))


def _count_in_blocks(
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    loose: Loose,
    weights: Mapping[str, int],
    options: SolverOptions,
    budget: Budget,
    fixed_cost: int,
    load: np.ndarray | None,
) -> Answer | Declined:
    """Strided blocks that do not tile a class's groups (``followers.py``): the answer counted in
    whole blocks, proven when it meets the bound of the count model with no blocks (a
    relaxation; its counts may hold no layout, their bound is read all the same) or the
    counting bound, else ``FEASIBLE`` with the higher of the two as its bound."""
    log.debug("strided blocks that do not tile a class's groups: counted in whole blocks, proven without them")
    whole, split = (count_problem(spec, requests, blocks=blocks) for blocks in (Blocks.WHOLE, Blocks.SPLIT))
    if not isinstance(whole, CountProblem) or not isinstance(split, CountProblem):
        return Declined(PathName.COUNTS, loose.reason)
    answer = _counted(whole, spec, requests, weights, options, budget, fixed_cost, load)
    try:
        looser = _counted(split, spec, requests, weights, options, budget, fixed_cost, load)
        split_bound = looser.bound if isinstance(looser, Answer) and looser.bound is not None else 0
    except Untiled as untiled:  # its counts hold no layout: their bound, where they were solved
        split_bound = untiled.bound or 0
    least = max(split_bound, objective_lower_bound(spec, weights))
    if not isinstance(answer, Answer) or answer.status != SolveStatus.OPTIMAL:
        return Declined(PathName.COUNTS, loose.reason)
    answer = through(answer, "strided blocks that do not tile a class's groups: counted in whole blocks, proven against the counts without them")
    if answer.known("objective") > least:  # a layout, with its gap to the bound: the flat model may find nothing in the time (7 nodes, 5 s)
        return replace(answer, status=SolveStatus.FEASIBLE, bound=least)
    return replace(answer, bound=answer.known("objective"))


def _count_preferring(spec: PlacementSpec, weights: Mapping[str, int], options: SolverOptions, budget: Budget, load: np.ndarray | None) -> Answer | Declined | None:
    """A spec preferring domains its units may span, counted with them required and proven
    against them dropped (``preferred.py``); where that has no answer or does not prove it, with
    their ``topology`` term stated (``spanning.py``). Why not, or None when neither applies."""
    required, dropped = variants(spec)
    if forced_spans(spec):  # some unit is wider than any domain's share of its GPUs: no placement keeps them all
        log.debug("a preferred domain no unit of its rule fits: its topology term stated at once")
        return _count_spanning(spec, dropped, weights, options, budget, load)
    log.debug("a preferred domain: counted as required, then proven against the rule dropped")
    answer = count_path(required, required.requests, weights, options, budget, load)
    if isinstance(answer, Declined):
        return _count_spanning(spec, dropped, weights, options, budget, load)
    answer = through(answer, "preferred domains counted as required, proven against the rules dropped")
    least_other = objective_lower_bound(dropped, weights)
    if answer.known("objective") > int(weights.get("topology", 0)) + least_other:  # the counting bound does not prove it: the count model's may
        other = count_path(dropped, dropped.requests, weights, options, budget, load)
        least_other = max(least_other, other.bound) if isinstance(other, Answer) and other.bound is not None else least_other
    bound = min(answer.known("bound"), int(weights.get("topology", 0)) + least_other)
    if answer.status == SolveStatus.OPTIMAL and bound == answer.known("objective"):
        return replace(answer, bound=bound)
    spanning = _count_spanning(spec, dropped, weights, options, budget, load)  # states the topology term: its bound is the spec's too
    if isinstance(spanning, Answer):
        bound = max(bound, spanning.known("bound"))
        answer = spanning if spanning.known("objective") <= answer.known("objective") else answer
    status = SolveStatus.OPTIMAL if answer.status == SolveStatus.OPTIMAL and bound >= answer.known("objective") else SolveStatus.FEASIBLE
    return replace(answer, status=status, bound=min(bound, answer.known("objective")))


def _count_spanning(
    spec: PlacementSpec, dropped: PlacementSpec, weights: Mapping[str, int], options: SolverOptions, budget: Budget, load: np.ndarray | None
) -> Answer | Declined | None:
    """Preferred domains no placement keeps whole, their ``topology`` term stated in the count
    model (``spanning.py``), or why not; None with ``contiguity`` weighed (its path does not
    state them). A member's rules on several labels are priced in the spec's order first (one
    rule's order, the others a bound); where its layout misses that bound they are stated
    together over cells (``crossing.py``, exact), else in each other order."""
    rules = spanned_rules(spec)
    if not rules or weights.get("contiguity"):
        return None
    log.debug("a preferred domain no placement keeps: its topology term stated in the count model")
    missed: list[tuple[int, int, Answer]] = []  # per order tried: its layout's value, the model's bound (each order's model bounds the spec), the answer
    orders = rule_orders(rules)  # a member's order serves one of its rules: the others' terms are a bound (``spanning.py``)
    tries = [(orders[0], False), (orders[0], True), *((order, False) for order in orders[1:])]  # then a member's rules together (``crossing.py``)
    for order, joint in tries:
        if joint and not joins_labels(spec, rules):
            continue
        answer = _count_stated(dropped, dropped.requests, weights, options, budget, priced=order, load=load, joint=joint)
        if joint and isinstance(answer, Declined):  # too many boxes (or no answer in time): each rule's order, as before
            log.debug("preferred domains stated together: %s", answer.reason)
            continue
        if not isinstance(answer, Answer) or answer.assignments is None:
            return answer if isinstance(answer, Declined) else None
        value = objective_value(spec, spec.requests, answer.assignments, weights, {})
        if value == answer.objective:
            together = ", a member's rules on several labels together over their cells" if joint else ""
            return through(answer, f"preferred domains no placement keeps whole: their topology term stated in the count model{together}")
        missed.append((value, answer.known("bound"), answer))
    names = ", ".join(f"{owner}: topology.{rule.group}.{rule.label}" for owner, rule in rules)
    value, _, best = min(missed, key=lambda tried: tried[0])  # the spec's own order of its rules on a tie
    bound = min(value, max(tried[1] for tried in missed))
    log.debug("%s: the best layout of the orders tried costs %d, above the count models' bound %d", names, value, bound)
    step = f"preferred domains no placement keeps whole ({names}): their topology term stated in the count model, rule by rule, its layout above the models' bound"
    return through(replace(best, status=SolveStatus.FEASIBLE, objective=value, bound=bound, primary=value), step)


def _count_tensor_domains(spec: PlacementSpec, weights: Mapping[str, int], options: SolverOptions, budget: Budget, load: np.ndarray | None) -> Answer | Declined:
    """A spec requiring tensor-parallel domains, counted with every group on one node and proven
    by the rule as it is, groups free to span nodes of a domain (``tensor_domains.py``): the
    restricted answer when nothing is better, else the exact one."""
    restricted = on_node(spec)
    log.debug("a required tensor-parallel domain: counted with groups on one node, proven with groups spanning nodes")
    kept = None if restricted is None else count_path(restricted, restricted.requests, weights, options, budget, load)
    least, bounded_by = objective_lower_bound(spec, weights), "the counting bound"
    loose = groups_anywhere(spec) if isinstance(kept, Answer) and kept.known("objective") > least and not weights.get("contiguity") else None
    if loose is not None:  # a relaxation (groups of one process), counted in milliseconds
        free = count_path(loose, loose.requests, weights, options, budget, load)
        if isinstance(free, Answer) and free.known("bound") > least:
            least, bounded_by = free.known("bound"), "the bound of groups free to span any nodes"
    if isinstance(kept, Answer) and kept.status == SolveStatus.OPTIMAL and kept.known("objective") <= least:
        return through(replace(kept, bound=kept.known("objective")), f"a required tensor-parallel domain, counted with every group on one node (meets {bounded_by})")
    exact = _count_stated(spec, spec.requests, weights, options, budget, load=load)
    if isinstance(exact, Declined) and not isinstance(kept, Answer):
        return exact  # the rule as it is says why (the restriction has no answer either)
    if isinstance(exact, Answer) and exact.bound is not None:
        least = max(least, exact.bound)
    found = [answer for answer in (kept, exact) if isinstance(answer, Answer)]
    best = min(found, key=lambda answer: answer.known("objective"))  # the restricted one on a tie
    status = SolveStatus.OPTIMAL if best.known("objective") <= least else SolveStatus.FEASIBLE
    way = "every group on one node" if best is kept else "groups free to span the domain's nodes"
    return through(replace(best, status=status, bound=min(least, best.known("objective"))), f"a required tensor-parallel domain, counted with {way}")


def _answer(spec: PlacementSpec, placed: Mapping[str, Assignment], status: SolveStatus, value: int, bound: int, model: str) -> Answer:
    """The count path's answer from assignments by rule-owning request; its value, on the count
    model's scale, is also its value without ``contiguity``; ``model`` names what counted it."""
    return Answer(PathName.COUNTS, Method.COUNTS, by_component(spec, placed), status, value, bound, primary=value, model=(model,))


__all__ = ["count_path"]
