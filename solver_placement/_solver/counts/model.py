"""The count model: how many nodes of each shape use each pattern, decided by CP-SAT.

One integer per (shape, pattern) counts the nodes of that shape holding that pattern (the
cutting-stock form): the model's size follows the number of node shapes and patterns, never the
GPU count, and identical nodes leave no symmetry to search. Its terms are the flat model's
``nodes`` (nodes used, summed over components) and ``balance`` (the most GPUs taken on a node,
summed over components); ``contiguity`` orders equal answers afterwards (``layout.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
from ortools.sat.python import cp_model, cp_model_helper

from solver_placement._solver.counts.count_parameters import (
    AFTER_TOGETHER,
    COUNT_PARAMETERS,
    LOW_RANKS_WORK,
    OWN_ORDER_PARAMETERS,
    PRESOLVED,
    PRESOLVED_MOST,
    TOGETHER_PARAMETERS,
    TOGETHER_WORK,
)
from solver_placement._solver.counts.crossing import JointVariables, joint_cost, joint_values
from solver_placement._solver.counts.patterns import Shape
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.lean_model import LeanCpModel
from solver_placement._solver.options import Budget, SolverOptions, Status, solve_model


@dataclass(frozen=True)
class Counts:
    """The model's answer: nodes per (shape, table, local pattern), its status and objective (and bound)."""

    uses: dict[tuple[int, int, int], int]  # (shape index, table index, pattern index) -> nodes
    status: str
    value: int
    bound: int
    groupings: dict[tuple[int, int], tuple[int, ...]] = field(default_factory=dict)  # (class, priced level) -> sets used per grouping (``spanning.py``)
    taken: dict[tuple[int, int], tuple[tuple[int, ...], ...]] = field(default_factory=dict)  # (class, joint level) -> groups per box and cell (``crossing.py``)

    def of_shape(self, s: int) -> dict[tuple[int, int], int]:
        """Shape ``s``'s nodes per (table, local pattern)."""
        return {(t, p): n for (shape, t, p), n in self.uses.items() if shape == s}


#: Why the count path declines when :func:`solve_counts` has no answer: CP-SAT found none in
#: its share of the time, or proved there is none (then the exact model proves it too and names
#: the statements in conflict, which the count model cannot).
NO_COUNT_ANSWER = "no count answer (none found in its share of the time limit, or none exists: the exact model decides and names why)"


#: A further term of the objective over the model's counts ``uses[shape, table, pattern]``
#: (weighed ``contiguity``, ``contiguity.py``), weight included.
Term = Callable[[cp_model.CpModel, Mapping[tuple[int, int, int], cp_model.IntVar]], cp_model.LinearExpr]


def solve_counts(
    problem: CountProblem,
    shapes: list[Shape],
    weights: Mapping[str, int],
    node_start: np.ndarray,
    options: SolverOptions,
    budget: Budget,
    term: Term | None = None,
    peak_at_most: int | None = None,
    below: int | None = None,
    hint: Mapping[tuple[int, int, int], int] | None = None,
    tuning: Mapping[str, object] | None = None,
    between: tuple[int, int] | None = None,
) -> Counts | None:
    """The best counts within ``budget`` (one worker, the options' seed: the same answer on any
    machine), or None when CP-SAT finds none in time or proves there is none.

    ``peak_at_most`` keeps every node's weighed GPUs at most that (its patterns above it held
    at 0: shapes of whole-node patterns, as ``balance`` has them) and ``below`` keeps the
    objective under that value: one level of ``peak_levels.py``, which needs to tell "none" from
    "none in time", so with either given a proof of none is ``Counts`` with status
    ``INFEASIBLE`` (no uses).

    Every table of a shape counts all its nodes; tables linked in a clique tree agree, value by
    value, on the classes they share; each class's groups, nodes and GPUs are counted in its home
    table. Once the weighted terms are proven best, a second run keeps them at that value and
    moves GPUs to low ranks: it minimises each pattern's GPUs times the first rank of its shape
    (``node_start``: per node, the rank of its first GPU), so "low ranks first" also chooses
    among shapes (with one first rank it orders nothing and is not made); within a shape the
    layout puts heavier nodes first. A further ``term`` joins
    the weighted ones, and then there is no second run (it is what weighs the ranks). ``hint``
    (nodes per (shape, table, pattern), those used; the rest 0) is an answer the search starts
    from (``heavy_first.py``). ``tuning``: further CP-SAT parameters of the first run (a model
    its default search proves slowly: ``kind_ranks.SPLIT_SEARCH``; ``weighed.py``'s first run
    with every linear row in its relaxation from the start, its work bounded). ``between``
    (least, most): the objective's domain, an earlier run's bound over the same model and one
    less than its answer: a proof of none there is ``Counts`` with status ``INFEASIBLE``, the
    earlier answer then the best (``ranked_search.rows_first``). None, no run started, once the
    search time is spent (CP-SAT's setup runs past it: ``contiguity:5:15`` ended 0.17 s past 0.2 s)."""
    if budget.search_remaining() <= 0:
        return None
    model = LeanCpModel()
    uses: dict[tuple[int, int, int], cp_model.IntVar] = {}
    groups: dict[int, tuple[list[cp_model.IntVar], list[int]]] = {c: ([], []) for c in range(len(problem.classes))}  # per class, its counts and groups
    in_domain: dict[tuple[int, int, int], tuple[list[int], list[int]]] = {}  # (class, level, domain) -> the counts holding its groups (proto indices), and how many
    in_priced: dict[tuple[int, int, int], list[cp_model.LinearExprT]] = {}  # the same, for a priced preferred domain or a joint level's cell
    nodes_terms: tuple[list[cp_model.IntVar], list[int]] = ([], [])  # counts and the members they add to ``nodes``
    low_ranks: tuple[list[cp_model.IntVar], list[int]] = ([], [])  # counts and their GPUs times their shape's first rank
    gpus: list[int] = []  # per count (the order of ``uses``), the GPUs a node of its pattern takes
    most_gpus: list[int] = []  # per shape, the most GPUs its nodes can take (each table's heaviest pattern on every node)
    placed_first = 0 if problem.load is None else int(problem.load.max(initial=0))  # on nodes with no pattern too
    most = max((shape.capacity for shape in shapes), default=0) * sum(len(c.members) for c in problem.classes) + placed_first
    peak = model.new_int_var(placed_first, most, "peak GPUs taken on a node")
    loads: list[tuple[int, cp_model.IntVar]] = []  # (GPUs a node of the pattern takes, placed-first load included; its nodes)
    # Each table's patterns as one array, their terms as (count, coefficient) lists summed once:
    # the same proto as a sum of products per pattern (same order), built in half the time
    # (4,000 patterns on 739 nodes: 70 -> 37 ms).
    for s, shape in enumerate(shapes):
        count = int(shape.nodes.size)
        homes = [shape.home(k) for k in range(len(shape.part))]
        start = int(node_start[shape.nodes[0]])
        most_gpus.append(0)
        for t, table in enumerate(shape.tables):
            own = [i for i, k in enumerate(table.columns) if homes[k] == t]  # the columns this table counts
            classes = [problem.classes[shape.part[table.columns[i]]] for i in own]
            held = np.array(table.patterns, dtype=np.int64).reshape(len(table.patterns), len(table.columns))[:, own]
            gpus_of = (held @ np.array([c.width * len(c.members) for c in classes], dtype=np.int64)).tolist()
            cost_of = ((held > 0) @ np.array([len(c.members) for c in classes], dtype=np.int64)).tolist()
            row = [
                model.new_int_var(0, 0 if peak_at_most is not None and gpus + shape.load > peak_at_most else count, "")  # one table then: gpus is the node's
                for gpus in gpus_of
            ]
            for p, var in enumerate(row):
                uses[s, t, p] = var
            low_ranks[0].extend(row)
            low_ranks[1].extend(gpus * start for gpus in gpus_of)
            gpus.extend(gpus_of)
            most_gpus[s] += max(gpus_of, default=0) * count
            paying = [p for p, cost in enumerate(cost_of) if cost]
            nodes_terms[0].extend(row[p] for p in paying)
            nodes_terms[1].extend(cost_of[p] for p in paying)
            for i, k in enumerate(table.columns[j] for j in own):
                c = shape.part[k]
                holding = np.flatnonzero(held[:, i]).tolist()
                groups[c][0].extend(row[p] for p in holding)
                groups[c][1].extend(held[holding, i].tolist())
            if any(shape.domains[table.columns[i]] for i in own):  # each domain's sum built pattern by pattern
                columns = [(shape.part[k], shape.domains[k], len(problem.classes[shape.part[k]].levels)) for k in (table.columns[j] for j in own)]
                for var, pattern in zip(row, held.tolist()):
                    for (c, domains, required), g in zip(columns, pattern):
                        for level, domain in enumerate(domains if g else ()):  # the priced domain last (``patterns.py``)
                            if level < required:
                                found_in = in_domain.setdefault((c, level, domain), ([], []))
                                found_in[0].append(var.index)
                                found_in[1].append(g)
                            else:
                                in_priced.setdefault((c, level, domain), []).append(g * var)
            if weights.get("balance", 0):  # one table then (patterns.py): gpus is the node's
                loads.extend((gpus + shape.load, var) for gpus, var, pattern in zip(gpus_of, row, table.patterns) if any(pattern))
            model.add(cp_model.LinearExpr.sum(row) == count)
        _agree(model, shape, s, uses)
    if loads:
        model.add(peak >= peak_by_levels(model, loads, sum(int(shape.nodes.size) for shape in shapes)))
    for c, (held_by, times) in groups.items():
        model.add(cp_model.LinearExpr.weighted_sum(held_by, times) == problem.classes[c].groups)
    for (c, level, _), (indices, amounts) in sorted(in_domain.items()):  # a domain holds whole units (``domain_levels.py``)
        multiple = problem.classes[c].levels[level].multiple
        _add_multiple(model, indices, amounts, multiple, model.new_int_var(0, problem.classes[c].groups // multiple, ""))
    weighted = int(weights.get("nodes", 0)) * cp_model.LinearExpr.weighted_sum(*nodes_terms) + int(weights.get("balance", 0)) * peak
    sets: dict[tuple[int, int], list[cp_model.IntVar]] = {}
    if any(c.priced for c in problem.classes):
        weighted = weighted + int(weights.get("topology", 0)) * _spanned_cost(model, problem, in_priced, sets)
    boxes: JointVariables = {}
    if any(c.joint for c in problem.classes):
        weighted = weighted + int(weights.get("topology", 0)) * joint_cost(model, problem, in_priced, boxes)
    if term is not None:
        weighted = weighted + term(model, uses)
    if below is not None:
        model.add(weighted <= below - 1)
    one_worker = SolverOptions(options.time_limit_s, 1, options.seed)
    own_orders = any(not c.priced and any(level.member is not None for level in c.levels) for c in problem.classes)
    parameters = {**(OWN_ORDER_PARAMETERS if own_orders else COUNT_PARAMETERS), **(PRESOLVED if term is None and len(model.proto.variables) <= PRESOLVED_MOST else {}), **(tuning or {})}
    starts = [int(node_start[shape.nodes[0]]) for shape in shapes]
    if term is None and tuning is None and hint is None and len(set(starts)) > 1 and any(c.levels or c.priced or c.joint for c in problem.classes):
        most_low = sum(most * start for most, start in zip(most_gpus, starts))  # every answer's low-ranks sum is at most this
        together = _ranked_together(model, weighted, cp_model.LinearExpr.weighted_sum(*low_ranks), most_low, lambda: solve_model(model, one_worker, budget, **TOGETHER_PARAMETERS, max_deterministic_time=TOGETHER_WORK))
        if together is not None:
            solver, status = together
            if status == cp_model.INFEASIBLE:
                return Counts({}, "INFEASIBLE", 0, 0) if peak_at_most is not None or below is not None else None
            value = int(solver.value(weighted))
            groupings = {key: tuple(int(solver.value(var)) for var in used) for key, used in sets.items()}
            return Counts(_used(solver, uses), "OPTIMAL", value, value, groupings, joint_values(solver.value, boxes))
        parameters = {**parameters, **AFTER_TOGETHER}  # a spec that run left unproven: branching led by the relaxation
    minimize(model, weighted)
    if between is not None:
        offset = int(model.proto.objective.offset)
        model.proto.objective.domain.extend((between[0] - offset, between[1] - offset))
    if hint is not None:
        add_hints(model, uses.values(), (hint.get(key, 0) for key in uses))
    if budget.search_remaining() <= 0:  # spent by the run of both terms together
        return None
    solver, status = solve_model(model, one_worker, budget, **parameters)
    if status == cp_model.INFEASIBLE and (peak_at_most is not None or below is not None or between is not None):
        return Counts({}, "INFEASIBLE", 0, 0)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    found = Counts(
        _used(solver, uses),
        solver.status_name(status),
        int(round(solver.objective_value)),
        int(round(solver.best_objective_bound)),
        {key: tuple(int(solver.value(var)) for var in used) for key, used in sets.items()},
        joint_values(solver.value, boxes),
    )
    if status != cp_model.OPTIMAL or term is not None or len({int(node_start[shape.nodes[0]]) for shape in shapes}) < 2:
        return found  # one first rank: every answer's low-ranks sum is it times the GPUs asked, nothing to order
    if _ranks_of(found, uses, low_ranks[1]) == least_ranks(node_start, shapes, most_gpus, _ranks_of(found, uses, gpus)):
        return found  # no answer's GPUs sit lower: the second run would only prove it
    if budget.search_remaining() <= 0:  # no time to order the ties: the first run's answer, proven
        return found
    model.add(weighted == found.value)
    add_hints(model, uses.values(), (found.uses.get(key, 0) for key in uses))
    for priced_level, used in sets.items():
        add_hints(model, used, found.groupings[priced_level])
    minimize(model, cp_model.LinearExpr.weighted_sum(*low_ranks))
    solver, status = solve_model(model, one_worker, budget, **{**parameters, "max_deterministic_time": LOW_RANKS_WORK})  # its own bound on work, whatever the first run had
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return found
    groupings = {key: tuple(int(solver.value(var)) for var in used) for key, used in sets.items()}
    taken = joint_values(solver.value, boxes)
    return Counts(_used(solver, uses), found.status, found.value, found.bound, groupings, taken)


def add_hints(model: cp_model.CpModel, variables: Iterable[cp_model.IntVar], values: Iterable[int]) -> None:
    """``model.add_hint`` of each variable and its value, in the proto at once: the same hint in
    the same order (the count model's variables are never negated literals), where one call per
    variable cost more than the solve (10 microseconds each: 0.15 s a hint of the 14,852
    patterns of ``other hardware:331:11``, hinted at every level the relaxation leaves to CP-SAT
    and once more to move GPUs to low ranks)."""
    hint = model.proto.solution_hint
    hint.vars.extend(var.index for var in variables)
    hint.values.extend(int(value) for value in values)


def _ranked_together(
    model: cp_model.CpModel, weighted: cp_model.LinearExpr, low: cp_model.LinearExpr, most_low: int, run: Callable[[], tuple[cp_model.CpSolver, Status]]
) -> tuple[cp_model.CpSolver, Status] | None:
    """The weighted terms and the low-ranks sum in one run, the weighted terms first
    (``scale * weighted + low``: weighted values differ by multiples of ``step``, the gcd of their
    coefficients, and ``scale * step`` is more than ``most_low``, the most ``low`` can be, so no
    low-ranks sum pays for a worse weighted value): the solver and its status when the run
    proves the weighted terms best (or that there is no answer), else None, and the model is then
    as before it (its objective the caller's to set).

    Why: where domains are counted, the first run of :func:`solve_counts` wanders among the many
    answers of equal weight (``topology:258:2``: three answers, 0.03 of CP-SAT's deterministic
    time, to reach the bound its relaxation had at the root) and the low-ranks run then starts
    over from the first run's counts (0.05 more, often spent completing that hint:
    ``topology:512:11`` ended its run where it began). Both at once, the low-ranks term guides the
    search, and one run proves the weighted terms best within ``TOGETHER_WORK`` on every
    ``topology``, ``topology mixes`` and ``topology overlaps`` spec of the benchmark (the same
    weighted value, and a low-ranks sum as low or lower: 512:11's 5,785,088 -> 3,353,600).
    Where it does not (or the sum could lose precision in CP-SAT's relaxation, past 2**52), the
    two runs as before."""
    try:
        flat = cp_model_helper.FlatIntExpr(weighted)
    except TypeError:  # a constant: nothing to weigh first
        return None
    step = math.gcd(*flat.coeffs)  # every weighted value is the offset plus a multiple of this
    if not step:
        return None
    scale = most_low // step + 1  # one step of the weighted terms outweighs any low-ranks sum
    domains = [var.domain for var in flat.vars]  # (not the proto's: 10 microseconds a variable)
    most_weighted = sum(abs(c) * max(-domain.min(), domain.max()) for domain, c in zip(domains, flat.coeffs))
    if scale * (most_weighted + abs(flat.offset)) >= 2**52:
        return None
    minimize(model, scale * weighted + low)
    solver, status = run()
    if status == cp_model.INFEASIBLE:
        return solver, status
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    least = -(-(int(round(solver.best_objective_bound)) - most_low) // scale)  # every answer weighs at least this
    return (solver, status) if least > int(solver.value(weighted)) - step else None  # none a step lighter: this one's weight is the least


def minimize(model: cp_model.CpModel, objective: cp_model.LinearExprT) -> None:
    """``model.minimize(objective)``, the same proto, its terms written at once: CP-SAT's Python
    appends them to the proto one by one, 12 ms a solve of the 3,585 patterns of
    ``topology:512:11`` (twice: the low-ranks run has its own objective)."""
    try:  # (``objective.is_integer()`` first, as CP-SAT asks, walks the whole sum once more)
        flat = cp_model_helper.FlatIntExpr(objective) if isinstance(objective, cp_model.LinearExpr) else None
    except TypeError:  # a term not integral
        flat = None
    if flat is None:  # CP-SAT's own way
        model.minimize(objective)
        return
    model.clear_objective()
    written = model.proto.objective
    written.vars.extend([var.index for var in flat.vars])
    written.scaling_factor = 1.0
    written.offset = flat.offset
    written.coeffs.extend(flat.coeffs)


def _add_multiple(model: cp_model.CpModel, held_by: list[int], times: list[int], multiple: int, whole: cp_model.IntVar) -> None:
    """``sum(times * held_by) == multiple * whole`` (``held_by``: proto indices), written to the
    proto as ``model.add`` writes it (the terms merged per variable, in index order, ``whole``
    last), without a product per pattern and their sum: the same proto, 10-20 ms less a solve of
    500 nodes in racks (``topology:512:11``)."""
    merged: dict[int, int] = {}
    for index, g in zip(held_by, times):
        merged[index] = merged.get(index, 0) + g
    order = sorted(merged)
    linear = model.proto.constraints.add().linear
    linear.vars.extend([*order, whole.index])
    linear.coeffs.extend([*(merged[index] for index in order), -multiple])
    linear.domain.extend((0, 0))


def _used(solver: cp_model.CpSolver, uses: Mapping[tuple[int, int, int], cp_model.IntVar]) -> dict[tuple[int, int, int], int]:
    """The nodes of each count the answer uses (those not 0), read from the response at once
    rather than one ``solver.value`` call per count (7,000 calls on 512 nodes: 10 ms)."""
    values = np.asarray(solver.response_proto.solution, dtype=np.int64)
    taken = values[np.fromiter((var.index for var in uses.values()), dtype=np.int64, count=len(uses))]
    return {key: int(value) for key, value in zip(uses, taken.tolist()) if value}


def _ranks_of(found: Counts, uses: Mapping[tuple[int, int, int], cp_model.IntVar], per_node: list[int]) -> int:
    """``per_node`` (one value per count, in the order of ``uses``) summed over ``found``'s nodes."""
    return sum(value * found.uses.get(key, 0) for key, value in zip(uses, per_node))


def least_ranks(node_start: np.ndarray, shapes: list[Shape], most_gpus: list[int], asked: int) -> int:
    """A lower bound of the second run's objective (GPUs times their shape's first rank): the
    ``asked`` GPUs (every answer places the same) poured into the shapes lowest first rank
    first, each taking at most ``most_gpus`` of them. An answer that meets it has nothing to
    move: the run that would only prove so is skipped (``topology mixes:185:2``,
    ``topology overlaps:38:4`` and ``9:6`` of the declarative benchmark: the same placement,
    185:2's solve 0.096 -> 0.073 s of CPU)."""
    least, left = 0, asked
    for start, most in sorted((int(node_start[shape.nodes[0]]), most) for shape, most in zip(shapes, most_gpus)):
        taken = min(left, most)
        least, left = least + taken * start, left - taken
    return least


def _spanned_cost(
    model: cp_model.CpModel,
    problem: CountProblem,
    in_priced: Mapping[tuple[int, int, int], list[cp_model.LinearExprT]],
    sets: dict[tuple[int, int], list[cp_model.IntVar]],
) -> cp_model.LinearExpr:
    """The ``topology`` term of the priced preferred domains, exactly (``spanning.py``): per
    domain its remainder ``r`` (``scale * groups = modulus * q + r``, one boolean per value it
    may leave), and how many of each minimal set of remainders closing whole units the domains'
    remainders split into (``sets``, filled per class and priced level), each set costing its
    size less one."""
    cost: list[cp_model.LinearExprT] = []
    for c, count_class in enumerate(problem.classes):
        base = len(count_class.levels)
        for j, priced in enumerate(count_class.priced):
            leaving: dict[int, list[cp_model.IntVar]] = {v: [] for v in range(1, priced.modulus)}
            for (owner, level, domain), terms in sorted(in_priced.items()):
                if owner != c or level != base + j:
                    continue
                chosen = {v: model.new_bool_var("") for v in priced.reach[domain]}
                model.add_exactly_one(chosen.values())
                whole = model.new_int_var(0, priced.scale * count_class.groups // priced.modulus, "")
                model.add(priced.scale * sum(terms) == priced.modulus * whole + sum(v * chosen[v] for v in chosen))
                for v, literal in chosen.items():
                    if v:
                        leaving[v].append(literal)
            spanned = sum(1 for values in leaving.values() for _ in values)
            used = [model.new_int_var(0, spanned // len(grouping), "") for grouping in priced.groupings]
            for v, literals in leaving.items():
                if literals or any(v in grouping for grouping in priced.groupings):
                    model.add(cp_model.LinearExpr.sum(literals) == cp_model.LinearExpr.sum([grouping.count(v) * count for grouping, count in zip(priced.groupings, used) if v in grouping]))
            sets[c, j] = used
            cost += [(len(grouping) - 1) * count for grouping, count in zip(priced.groupings, used)]
    return cp_model.LinearExpr.sum(cost)


def peak_by_levels(model: cp_model.CpModel, loads: list[tuple[int, cp_model.IntVar]], nodes: int) -> cp_model.LinearExpr:
    """The most GPUs a node takes (the ``balance`` term) from ``(load, nodes of that pattern)``
    pairs, by levels: one boolean per distinct load, set when some node carries that load or
    more (each level reached reaches those below), the peak their staircase. One boolean per
    pattern would say the same, but CP-SAT searches those for seconds past a few thousand
    patterns, and loads are few (at most a node's GPUs times the members stacked on one)."""
    steps: list[cp_model.LinearExprT] = []
    previous, above = 0, None
    for level in sorted({load for load, _ in loads}):
        reached = model.new_bool_var("")
        model.add(cp_model.LinearExpr.sum([var for load, var in loads if load >= level]) <= nodes * reached)
        if above is not None:
            model.add_implication(reached, above)
        steps.append((level - previous) * reached)
        previous, above = level, reached
    return cp_model.LinearExpr.sum(steps)


def _agree(model: cp_model.CpModel, shape: Shape, s: int, uses: Mapping[tuple[int, int, int], cp_model.IntVar]) -> None:
    """Linked tables count the same nodes for every value of the classes they share."""
    for parent, child, shared in shape.links:
        if not shared:
            continue  # both tables count all the shape's nodes already
        sides: dict[tuple[int, ...], tuple[list[cp_model.IntVar], list[cp_model.IntVar]]] = {}
        for side, t in enumerate((parent, child)):
            table = shape.tables[t]
            positions = [table.columns.index(k) for k in shared]
            for p, pattern in enumerate(table.patterns):
                sides.setdefault(tuple(pattern[i] for i in positions), ([], []))[side].append(uses[s, t, p])
        for key in sorted(sides):
            mine, theirs = sides[key]
            model.add(sum(mine) == sum(theirs))
