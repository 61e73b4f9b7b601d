"""``balance`` weighed, solved level by level: the fewest nodes under each peak, the best sum.

Why: with ``balance`` weighed the count model minimises ``w_rest * rest + w_balance * peak``
(``rest``: the ``nodes`` term, and a priced domain's spans), and CP-SAT finds the best ``rest``
for a given peak easily but proves the joint optimum slowly: on six components in a ring of
exclusions (60 nodes, 5,174 whole-node patterns, ``{nodes: 10000, balance: 1}``) it ended its
two seconds at 1,540,022 with the bound 1,470,023, while "147 nodes with no node above 23 GPUs"
is proven impossible in 0.07 s and "at most 24" found in 0.3 s. So the peak is taken out of the
model: a node's load is its pattern's (whole-node patterns, one table per shape), so "peak at
most ``L``" only holds the patterns above ``L`` at 0, and each level is the count model of
``rest`` alone.

The levels: first ``rest`` with no peak at all (its answer is the first incumbent, its bound the
least ``rest`` of any answer, ``least``); then each load a node can carry, ascending from the
GPUs spread evenly over the nodes, asking for an answer cheaper than the best so far. An answer
whose peak is ``L`` or more costs at least ``w_balance * L + least``, so once that reaches the
best, no later level can beat it: the best is proven when every level before was (OPTIMAL, or
INFEASIBLE under the cap), else its bound is that sum at the first level left unproven. Before
the levels one question covers them all: any answer with the highest peak that could still win
and the cap of the lowest; when there is none, the incumbent is proven at once (the usual case
with ``nodes`` weighed far above ``balance``: 60 nodes above, one 0.1 s question instead of
four). Where the model's relaxation bounds a level cheaply (``level_model.py``), bounds alone
ask it instead, by bisection, and rule out every level up to the highest they prove empty
(``_ruled_out``): the same answer, without the levels' solves. With ``balance`` 0 (``nodes``
alone) the first solve is the answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from solver_placement._solver.counts.count_parameters import COUNT_PARAMETERS
from solver_placement._solver.counts.level_model import LevelModel, states_whole
from solver_placement._solver.counts.model import Counts, Term, solve_counts
from solver_placement._solver.counts.patterns import Shape
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.options import Budget, SolverOptions

log = logging.getLogger(__name__)

#: One level's solve: the best counts of ``rest`` alone (``balance`` weight 0) with every
#: node's load at most the first argument (None: no limit) and the objective under the second
#: (None: no cap); ``Counts`` with status ``INFEASIBLE`` when proven none, None when none in time
#: (``model.solve_counts``, ``level_model.LevelModel.solve`` and ``per_node.PerNode.solve``
#: answer so).
LevelSolve = Callable[[int | None, int | None], Counts | None]
#: A lower bound on ``rest`` of every answer with every node's load at most the argument (None:
#: none known), cheaper than a level's solve (``level_model.LevelModel.least_rest``).
LeastRest = Callable[[int], int | None]
#: CP-SAT parameters of the one question that covers every level (:func:`by_levels`): any
#: answer will do there (it is not kept, only "none" is used), so the search stops at the first,
#: and presolve is off even where the model's own search needs it (``model.OWN_ORDER_PARAMETERS``):
#: ``topology overlaps:558:11`` proved "none" in 0.012 of CP-SAT's deterministic time instead
#: of 0.08 (0.13 -> 0.03 s). Its work is bounded (``SCREEN_WORK``): past it, the question is
#: asked with the model's own parameters (``FIRST_ANSWER`` added), as before.
FIRST_ANSWER = {"stop_after_first_solution": True}
SCREEN_PARAMETERS = {**COUNT_PARAMETERS, **FIRST_ANSWER}
SCREEN_WORK = 0.05


def solve_balanced(
    problem: CountProblem,
    shapes: Sequence[Shape],
    weights: Mapping[str, int],
    node_start: np.ndarray,
    options: SolverOptions,
    budget: Budget,
    term: Term | None = None,
) -> Counts | None:
    """``model.solve_counts`` with ``balance`` weighed: level by level over whole-node patterns
    (:func:`by_levels`), by the count model built once (``level_model.py``; with domains
    counted, ``solve_counts`` at each level); shapes of several tables (cliques) in one model,
    the peak in it, as before."""
    loads = whole_loads(problem, shapes)
    if loads is None:
        return solve_counts(problem, list(shapes), weights, node_start, options, budget, term)
    rest, balance = {**weights, "balance": 0}, int(weights.get("balance", 0))
    spread = least_peak(problem, sum(int(shape.nodes.size) for shape in shapes))
    candidates = sorted({int(load) for per_shape in loads for load in per_shape.tolist() if load >= spread})

    def peak_of(counts: Counts) -> int:
        return _peak(counts, problem, loads)

    if states_whole(problem, shapes):
        built = LevelModel(problem, shapes, loads, rest, options, budget)
        best = by_levels(candidates, balance, built.solve, peak_of, budget, built.least_rest)
        if best is None or budget.remaining() <= 0:
            return best
        peak = peak_of(best)
        return built.low_ranks(best, peak, best.value - balance * peak, node_start)

    def count_solve(peak: int | None, below: int | None) -> Counts | None:
        return solve_counts(problem, list(shapes), rest, node_start, options, budget, term, peak_at_most=peak, below=below)

    def screen(peak: int | None, below: int | None) -> Counts | None:
        for tuning in ({**SCREEN_PARAMETERS, "max_deterministic_time": SCREEN_WORK}, FIRST_ANSWER):
            found = solve_counts(problem, list(shapes), rest, node_start, options, budget, term, peak_at_most=peak, below=below, tuning=tuning)
            if found is not None:
                break
        return found

    return by_levels(candidates, balance, count_solve, peak_of, budget, screen=screen)


def least_peak(problem: CountProblem, nodes: int) -> int:
    """The least peak any answer can have: every class's weighed GPUs spread evenly over the
    ``nodes`` it may use, rounded up (a node's load is whole)."""
    return -(-_weighed_gpus(problem) // max(nodes, 1))


def whole_loads(problem: CountProblem, shapes: Sequence[Shape]) -> list[np.ndarray] | None:
    """Per shape, each pattern's weighed GPUs on a node (placed-first load included): what
    ``balance`` counts; None unless every shape lists whole-node patterns (one table, as
    ``balance`` has them), where a pattern's load is the node's."""
    if any(len(shape.tables) != 1 for shape in shapes):
        return None
    found = []
    for shape in shapes:
        table = shape.tables[0]
        per_group = np.array(
            [problem.classes[shape.part[k]].width * len(problem.classes[shape.part[k]].members) for k in table.columns], dtype=np.int64
        )
        patterns = np.array(table.patterns, dtype=np.int64).reshape(len(table.patterns), len(table.columns))
        found.append(patterns @ per_group + shape.load)
    return found


def by_levels(
    candidates: Sequence[int],
    balance: int,
    solve: LevelSolve,
    peak_of: Callable[[Counts], int],
    budget: Budget,
    least_rest: LeastRest | None = None,
    screen: LevelSolve | None = None,
) -> Counts | None:
    """The best counts with ``balance`` (its weight) weighed, level by level (module
    docstring): ``candidates`` are the loads a node may carry from the least peak up, ascending,
    ``peak_of`` an answer's peak. Their value and bound include ``balance`` times the peak. None
    when the first solve (no peak) has no answer: none in time, or none at all. With
    ``least_rest`` the levels no answer can win are ruled out by bounds alone first
    (:func:`_ruled_out`), else by one solve at the highest (``screen`` when given: a solve that
    may stop at any answer, since only "none" is used of it)."""
    top = solve(None, None)
    if top is None or top.status == "INFEASIBLE":
        return None
    least = top.bound
    best = _valued(top, balance, peak_of)
    above = peak_of(top)
    levels = [level for level in candidates if level < above]
    stopped = above  # the least peak of an answer not yet ruled out or found
    reachable = [level for level in levels if balance * level + least < best.value]
    if least_rest is not None and len(reachable) > 1:
        highest = _ruled_out(reachable, least_rest, best.value - balance * reachable[0])
        levels = [level for level in levels if highest is None or level > highest]
    elif len(reachable) > 1:  # one question for them all first: any answer cheaper, at the least peak's cap
        screened = (screen or solve)(reachable[-1], best.value - balance * reachable[0])
        if screened is not None and screened.status == "INFEASIBLE":
            log.debug("balance by levels: no answer below %d up to peak %d", best.value, reachable[-1])
            levels = [level for level in levels if level > reachable[-1]]
    for level in levels:
        if balance * level + least >= best.value or budget.remaining() <= 0:
            stopped = level
            break
        found = solve(level, best.value - balance * level)
        if found is not None and found.status != "INFEASIBLE":
            best = min(best, _valued(found, balance, peak_of), key=lambda counts: counts.value)
        if found is None or found.status not in ("OPTIMAL", "INFEASIBLE"):
            log.debug("balance by levels: peak %d not proven", level)
            stopped = level
            break
        log.debug("balance by levels: peak at most %d: %s, best %d", level, found.status, best.value)
    bound = min(best.value, balance * stopped + least)
    return replace(best, status="OPTIMAL" if bound == best.value else "FEASIBLE", bound=bound)  # the sets a priced domain uses kept


def _ruled_out(levels: Sequence[int], least_rest: LeastRest, cap: int) -> int | None:
    """The highest of ``levels`` (ascending) whose bound on ``rest`` reaches ``cap`` (the most
    ``rest`` an answer at the lowest level may have and still win), found by bisection; None
    when none does. That level and every one below it hold no winning answer: a level's bound
    also bounds every level below it (fewer patterns allowed: a relaxation no lower), and the
    lowest level's cap is the highest, so no level from the lowest to it has an answer under
    its cap; their solves, each proving just that, are not run.

    Why: levels proven empty one by one were most of the time where the answer sits at a high
    peak (``other hardware`` on 331 nodes: eight levels, each its own relaxation, and a CP-SAT
    search of 0.2 s at the highest whose answer was not used); bisection asks a few bounds."""
    low, high, found = 0, len(levels) - 1, None
    while low <= high:
        middle = (low + high) // 2
        bound = least_rest(levels[middle])
        if bound is not None and bound >= cap:
            found, low = levels[middle], middle + 1
        else:
            high = middle - 1
    if found is not None:
        log.debug("balance by levels: no answer up to peak %d can win (bounds alone)", found)
    return found


def _valued(counts: Counts, balance: int, peak_of: Callable[[Counts], int]) -> Counts:
    """``counts`` of ``rest`` alone, valued with ``balance`` times their peak."""
    return replace(counts, value=counts.value + balance * peak_of(counts))


def _peak(counts: Counts, problem: CountProblem, loads: Sequence[np.ndarray]) -> int:
    """The most weighed GPUs on a node of ``counts``' layout (components placed first load
    nodes with no pattern too)."""
    placed_first = 0 if problem.load is None else int(problem.load.max(initial=0))
    return max([placed_first, *(int(loads[s][p]) for (s, _, p), nodes in counts.uses.items() if nodes)])


def _weighed_gpus(problem: CountProblem) -> int:
    """Every class's GPUs times its members: what ``balance`` spreads over the nodes."""
    return sum(c.groups * c.width * len(c.members) for c in problem.classes)
