"""The count model over the patterns no class can grow on, and what each shape gives back.

Why: the count model has one integer per (shape, whole-node pattern), and on nodes of GPUs and
robots whose GPUs carry memory (``item_memory.py``, the ``kinds memory`` benchmark) a shape
lists 400-1,400 patterns, 2,400-3,600 in all: CP-SAT spent 0.05-0.8 s finding and proving the
best ``nodes`` term and another 0.1-0.3 s (its whole work limit) moving GPUs to low ranks. Only
5% of those patterns are *maximal*: no class they hold could take one more group on the node.
Stated over those alone, with per shape and class the groups its nodes give back, the same
model is 20 times smaller (0.002-0.03 s on the same cases).

Why it is exact, where :func:`maximal_tables` finds it so: a node pattern is the groups of each
class on one node, and its ``nodes`` cost depends only on the classes it holds (its support).
Every shape's table lists every pattern its nodes hold and is closed under removing a group (a
layout less one process is a layout: checked, not assumed). Any pattern ``p`` is below a
maximal pattern ``q`` of the same support: raise one held class at a time while the table holds
it. So every answer of the count model is, per node, a maximal pattern of the same cost less
some groups of the classes it holds, at least one of each left; per shape and class, the groups
given back are at most the groups its maximal patterns hold less one per node holding the class.
Conversely any such counts and give-backs are an answer: the groups given back are spread over
the nodes of the shape that hold the class, each keeping one (:func:`given_back`), and every
pattern so lowered is in the table (closed under removal) with the same support, so the same
cost. Both terms the model weighs are linear in these counts: ``nodes`` by the maximal patterns
(support kept), and the second run's low ranks by each shape's GPUs, which the give-backs lower
by their GPUs. So both runs' optima are the full model's.

``balance`` is decided level by level as ``peak_levels.py`` decides it (``by_levels``): at a
level, only the patterns whose load is at most its peak, a table still closed under removing a
group (a give-back only lowers a node's load), so each level's maximal patterns among those
state it exactly (:meth:`MaximalTable.maximal`). The levels up to the highest whose linear
relaxation already costs more than the best answer can are ruled out by that bound alone
(:meth:`MaximalModel.least_rest`), not each by a CP-SAT run.

Tables per clique (past ``patterns.MAX_PATTERNS`` whole-node patterns, ``junction.py``; the
``wide strides`` benchmark: 925 and 2,701 patterns of two cliques linked on one class) are
stated the same way table by table, over the columns a table alone counts (its *free* ones,
:func:`free_columns`): a column it shares with a linked table keeps its value, which the linked
tables agree on node by node, so a pattern is raised, and gives back, in its free columns only.
Raising a free column keeps every shared value and the support, so each table's answer is a
maximal pattern of the same cost and the same shared values less some groups given back, and
lowering one (:func:`given_back`) keeps the tables' agreement: the argument above, table by
table. On ``wide strides:96:1`` the model fell from 3,627 variables to 290, CP-SAT's run from
0.09 s to 0.012 and its building from 0.045 s to 0.007. Under ``balance`` such shapes are
not stated here (no table holds a node's load).

Not stated so (:func:`maximal_tables` returns None; the full model answers): required or priced
domains (sums per domain), ``balance`` over tables per clique, a table not closed under removing
a group of a free column, and rows too long to number (``MaximalTable.of``). Below
``MIN_PATTERNS`` the full model answers in milliseconds and its answers are the ones the
digests record: kept.

What changes where it applies is which of the equal answers is returned: the low-ranks run of
the full model stopped at its work limit (``count_parameters.LOW_RANKS_WORK``) on these sizes, this one
proves its optimum, so placements move toward low ranks with every objective unchanged (33 of
the benchmark's 276 feasible cases at 12 per family moved, none changed its objective).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._errors import InternalError
from solver_placement._solver.counts.count_parameters import COUNT_PARAMETERS, LOW_RANKS_WORK
from solver_placement._solver.counts.level_relaxation import LevelBounds, LevelColumns
from solver_placement._solver.counts.model import Counts, add_hints
from solver_placement._solver.counts.patterns import Shape
from solver_placement._solver.counts.peak_levels import by_levels, least_peak, whole_loads
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.lean_model import LeanCpModel
from solver_placement._solver.options import Budget, SolverOptions, solve_model

#: Fewest whole-node patterns (over all shapes) for which the count model is stated over the
#: maximal ones: below it the full model proves its answer in a few milliseconds, and the small
#: specs the digests record keep their answers (none of them reaches it). From here up it pays:
#: ``kinds memory:4:0`` (856 patterns, 52 maximal) took 0.107 s of CPU with the full model,
#: 0.025 s with this one, the same placement.
MIN_PATTERNS = 400
#: CP-SAT parameters where a shape has tables per clique (``wide strides``): the count model's,
#: with every linear row in the relaxation from the start (as ``ranked_search.ROWS_FIRST``), so the
#: rows where linked tables agree bound the search at once. ``wide strides:130:5`` (288
#: variables, 80 rows): 1,187 branches and 0.07-0.15 s of CPU became 146 branches and 0.004 s;
#: the other cases of the family as before. Not where every shape has one table (``kinds
#: memory``): there it was faster on some cases and slower on others (0.053 -> 0.096 s on 52:10).
LINKED_PARAMETERS = {**COUNT_PARAMETERS, "add_lp_constraints_lazily": False}
#: CP-SAT parameters added to a run at a peak level (``balance``): its presolve on. The count
#: model turns it off (``count_parameters.COUNT_PARAMETERS``: on thousands of patterns it was most of a
#: run), but a level's model here is a few hundred counts, and there presolve finds the answer
#: in far fewer branches: ``kinds memory`` at peak 12 on 613 nodes 1,073 -> 50 branches (0.024
#: -> 0.015 s of CPU), on 423 nodes 1,805 -> 47 (0.030 -> 0.013 s), on 624 nodes 0.015 ->
#: 0.007 s; the whole solve of 613:5 0.13-0.15 -> 0.11-0.12 s, of 423:11 0.13-0.15 -> 0.11-0.14,
#: the family's other cases as before. Not in the first run (no peak) nor the low-ranks run,
#: where it was no faster.
LEVEL_PARAMETERS = {"cp_model_presolve": True}


@dataclass(frozen=True)
class MaximalTable:
    """One table of a shape: its patterns (rows), each one's load on a node (``balance``'s;
    None for a table of one clique, where no table holds a node's load), and each pattern's
    number (to find a lowered pattern's row in the shape's own table); ``above[k]`` is the row
    of each pattern with one more group of column ``k`` (-1: none in the table, or ``k`` not
    free: a column the table shares with a linked one, or counts for another, is never raised
    nor given back)."""

    patterns: np.ndarray
    loads: np.ndarray | None
    radix: np.ndarray  # per column, its place in a pattern's number (mixed radix)
    numbers: np.ndarray  # the patterns' numbers, ascending
    order: np.ndarray  # the row of each of ``numbers``
    above: np.ndarray

    @classmethod
    def of(cls, patterns: np.ndarray, loads: np.ndarray | None, free: np.ndarray | None = None) -> MaximalTable:
        """The table of ``patterns`` (distinct rows) and their ``loads``, its ``free`` columns
        (a mask; None: all): each row's neighbours found by one sorted search over the rows as
        numbers (mixed radix), not a lookup each."""
        radix = np.cumprod([1, *(int(patterns[:, k].max(initial=0)) + 2 for k in range(patterns.shape[1] - 1))]).astype(np.int64)
        keys = patterns @ radix
        order = np.argsort(keys, kind="stable")
        above = np.full(patterns.shape, -1, dtype=np.int64)
        for k in range(patterns.shape[1]):
            if free is not None and not free[k]:
                continue
            wanted = keys + radix[k]
            at = np.minimum(np.searchsorted(keys[order], wanted), len(keys) - 1)
            found = keys[order][at] == wanted
            above[found, k] = order[at[found]]
        return cls(patterns, loads, radix, keys[order], order, above)

    def position(self, pattern: tuple[int, ...]) -> int:
        """The row of ``pattern``, by its number (a dictionary of every row cost 0.05 s of
        ``ring:739:8``'s 15,211 patterns, for the few an answer names)."""
        key = int(np.dot(pattern, self.radix))
        at = int(np.searchsorted(self.numbers, key))
        if at == self.numbers.size or self.numbers[at] != key:
            raise InternalError(f"pattern {pattern} is not a row of its table")
        return int(self.order[at])

    def maximal(self, peak: int | None = None) -> np.ndarray:
        """The positions of the patterns no held free column can grow on among those of load
        at most ``peak`` (None: all): closed under removing a group still, so the module's
        argument holds at every peak level."""
        if peak is not None and self.loads is None:
            raise InternalError("a peak level asked of a table of one clique (``balance`` is stated over whole-node tables)")
        allowed = np.ones(self.patterns.shape[0], dtype=bool) if peak is None or self.loads is None else self.loads <= peak
        grows = ((self.patterns > 0) & (self.above >= 0) & allowed[np.maximum(self.above, 0)]).any(axis=1)
        return np.flatnonzero(allowed & ~grows)


def maximal_tables(problem: CountProblem, shapes: Sequence[Shape], balance: bool = False) -> list[tuple[MaximalTable, ...]] | None:
    """Per shape, one table per table of its patterns (their loads with them where a shape has
    one table), when the count model over maximal patterns is exact (module docstring); None
    where it is not, or the full model is small (``MIN_PATTERNS``). ``balance``: weighed, which
    a shape of tables per clique does not state here (no table holds a node's load)."""
    if sum(shape.size for shape in shapes) < MIN_PATTERNS or any(c.levels or c.priced or c.joint for c in problem.classes):
        return None
    whole = all(len(shape.tables) == 1 for shape in shapes)
    if balance and not whole:
        return None  # tables per clique under ``balance``: the full model states the peak
    loads = whole_loads(problem, shapes) if whole else None
    found = []
    for s, shape in enumerate(shapes):
        per_table = []
        for t, table in enumerate(shape.tables):
            patterns = np.array(table.patterns, dtype=np.int64).reshape(len(table.patterns), len(table.columns))
            if math.prod(int(column.max(initial=0)) + 2 for column in patterns.T) >= 1 << 62:
                return None  # rows past an int64 as numbers (``MaximalTable.of``): many classes, the full model states them
            free = free_columns(shape, t)
            maximal = MaximalTable.of(patterns, None if loads is None else loads[s], free)
            if int((patterns[:, free] > 0).sum()) != int((maximal.above[:, free] >= 0).sum()):
                return None  # not closed under removing a group of a free column (each one held is one below a pattern's): the full model states it
            per_table.append(maximal)
        found.append(tuple(per_table))
    return found


def free_columns(shape: Shape, t: int) -> np.ndarray:
    """Which columns of the shape's table ``t`` the model may raise to a maximal pattern and
    give back: those it counts (their home) and shares with no linked table (a shared column's
    value is what the linked tables agree on, node by node). A whole-node table: every column."""
    shared = {k for parent, child, columns in shape.links if t in (parent, child) for k in columns}
    return np.array([shape.home(k) == t and k not in shared for k in shape.tables[t].columns], dtype=bool)


def solve_maximal(
    problem: CountProblem,
    shapes: Sequence[Shape],
    tables: Sequence[Sequence[MaximalTable]],
    weights: Mapping[str, int],
    node_start: np.ndarray,
    options: SolverOptions,
    budget: Budget,
) -> Counts | None:
    """``model.solve_counts`` (no term, cap or hint), or with ``balance`` weighed
    ``peak_levels.solve_balanced``, over the maximal patterns of :func:`maximal_tables` and each
    shape's groups given back: the best ``nodes`` term (level by level under ``balance``,
    ``peak_levels.by_levels``), then among its answers the GPUs on low ranks (the same runs, the
    same optima); the counts named in the shapes' own tables. None when CP-SAT finds no answer
    in time."""
    levels = MaximalModel(problem, shapes, tables, weights, node_start, options, budget)
    balance = int(weights.get("balance", 0))
    if not balance:
        best = levels.solve(None, None)
        return None if best is None else levels.low_ranks(best, None, best.value)
    spread = least_peak(problem, sum(int(shape.nodes.size) for shape in shapes))
    loads = [_whole_loads(per_shape) for per_shape in tables]
    candidates = sorted({int(load) for shape_loads in loads for load in shape_loads.tolist() if load >= spread})

    def peak_of(counts: Counts) -> int:
        placed_first = 0 if problem.load is None else int(problem.load.max(initial=0))
        return max([placed_first, *(int(loads[s][p]) for (s, _, p), nodes in counts.uses.items() if nodes)])

    best = by_levels(candidates, balance, levels.solve, peak_of, budget, levels.least_rest)
    if best is None or budget.remaining() <= 0:
        return best
    peak = peak_of(best)
    return levels.low_ranks(best, peak, best.value - balance * peak)


def _whole_loads(per_shape: Sequence[MaximalTable]) -> np.ndarray:
    """A shape's patterns' loads under ``balance``: its one whole-node table's
    (``maximal_tables`` gives no other under ``balance``)."""
    loads = per_shape[0].loads
    if len(per_shape) != 1 or loads is None:
        raise InternalError("``balance`` over a shape of tables per clique reached the maximal model")
    return loads


#: A built model at one peak: the model, its counts per (shape, table, maximal pattern), its
#: give-backs per (shape, table, free column), the ``nodes`` term and the low ranks.
Built = tuple[cp_model.CpModel, dict[tuple[int, int, int], cp_model.IntVar], dict[tuple[int, int, int], cp_model.IntVar], cp_model.LinearExpr, cp_model.LinearExpr]


class MaximalModel:
    """The count model over maximal patterns at one peak level at a time (each level's maximal
    patterns differ: built per question, a few hundred variables), and what each answer chose
    (to start the low-ranks run from it)."""

    def __init__(
        self,
        problem: CountProblem,
        shapes: Sequence[Shape],
        tables: Sequence[Sequence[MaximalTable]],
        weights: Mapping[str, int],
        node_start: np.ndarray,
        options: SolverOptions,
        budget: Budget,
    ) -> None:
        self.problem, self.shapes, self.tables, self.node_start, self.budget = problem, shapes, tables, node_start, budget
        self.nodes_weight = int(weights.get("nodes", 0))
        self.options = SolverOptions(options.time_limit_s, 1, options.seed)
        self.chosen: dict[tuple[int | None, tuple[tuple[tuple[int, int, int], int], ...]], tuple[list[int], list[int]]] = {}
        self.bounds: LevelBounds | None = None  # the relaxation of :meth:`least_rest`, made when first asked
        self.built: dict[int | None, Built] = {}  # per peak solved, its model as built (a copy) and its variables and terms
        self.parameters = LINKED_PARAMETERS if any(len(shape.tables) > 1 for shape in shapes) else COUNT_PARAMETERS

    def solve(self, peak: int | None, below: int | None) -> Counts | None:
        """The best ``nodes`` term with every node's load at most ``peak`` (None: any) and under
        ``below`` (None: any): ``peak_levels.LevelSolve``'s answer (``INFEASIBLE`` when a cap
        is proven to leave none, None when none in time, or when the budget's search time is
        spent before it starts: CP-SAT's setup runs past a spent limit)."""
        if self.budget.search_remaining() <= 0:
            return None
        built = self._built(peak)
        if built is None:
            return Counts({}, "INFEASIBLE", 0, 0)
        model, uses, back, weighted, _ = built
        self.built[peak] = (model.clone(), *built[1:])  # as built, for :meth:`low_ranks` at this peak
        if below is not None:
            model.add(weighted <= below - 1)
        model.minimize(weighted)
        solver, status = solve_model(model, self.options, self.budget, **(self.parameters if peak is None else {**self.parameters, **LEVEL_PARAMETERS}))
        if status == cp_model.INFEASIBLE and (peak is not None or below is not None):
            return Counts({}, "INFEASIBLE", 0, 0)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return None
        values = [int(solver.value(var)) for var in uses.values()], [int(solver.value(var)) for var in back.values()]
        found = Counts(given_back(self.tables, dict(zip(uses, values[0])), dict(zip(back, values[1]))), solver.status_name(status),
                       int(round(solver.objective_value)), int(round(solver.best_objective_bound)))  # fmt: skip
        self.chosen[peak, tuple(sorted(found.uses.items()))] = values
        return found

    def least_rest(self, peak: int) -> int | None:
        """``peak_levels.LeastRest``: the linear relaxation's bound on the ``nodes`` term at this
        peak over every whole-node pattern of load at most it (``level_relaxation.LevelBounds``,
        one program kept from peak to peak; None where it has none).

        Why: with ``balance`` weighed, the levels between the least peak and the first answer's
        were each a CP-SAT run that proved "none under the cap" (its model built anew), and one
        more run that found an answer below the highest such level first; the relaxation rules
        them out by bounds alone: ``kinds memory:613:5``, levels 9, 10 and 11 bounded at
        5,920,000, 5,400,000 and 5,180,000 against the best 4,970,000, in 1-6 ms each, where
        the four runs took 0.04 s of CPU. Valid for this model, which states the full one
        exactly at every level (module docstring)."""
        if self.bounds is None:
            columns = []
            for shape, (table,) in zip(self.shapes, self.tables):  # ``balance``: one whole-node table per shape (``maximal_tables``)
                members = np.array([len(self.problem.classes[c].members) for c in shape.part], dtype=np.int64)
                columns.append(LevelColumns(shape.part, table.patterns, self.nodes_weight * ((table.patterns > 0) @ members), _whole_loads((table,)), int(shape.nodes.size)))
            self.bounds = LevelBounds(columns, [c.groups for c in self.problem.classes])
        return self.bounds.bound([_whole_loads(tables) <= peak for tables in self.tables], self.budget.check)

    def low_ranks(self, best: Counts, peak: int | None, value: int) -> Counts:
        """``best`` (found at ``peak``, its ``nodes`` term ``value``) with its GPUs moved to low
        ranks at the same term and a peak no higher, as ``model.solve_counts``' second run;
        ``best`` itself when it is not proven, when every shape has one first rank, when the
        search time is spent, or when that run finds nothing in its work limit."""
        if best.status != "OPTIMAL" or len({int(self.node_start[shape.nodes[0]]) for shape in self.shapes}) < 2 or self.budget.search_remaining() <= 0:
            return best
        built = self.built.get(peak) or self._built(peak)  # the level's model as it was built: the same proto, not built again
        if built is None:
            return best
        model, uses, back, weighted, low = built
        model.add(weighted == value)
        hint = self.chosen.get((peak, tuple(sorted(best.uses.items()))))
        if hint is not None:  # found at this level: the same model, the same variables
            add_hints(model, [*uses.values(), *back.values()], [*hint[0], *hint[1]])
        model.minimize(low)
        solver, status = solve_model(model, self.options, self.budget, **self.parameters, max_deterministic_time=LOW_RANKS_WORK)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return best
        moved = given_back(self.tables, {key: int(solver.value(var)) for key, var in uses.items()}, {key: int(solver.value(var)) for key, var in back.items()})
        return replace(best, uses=moved)

    def _built(self, peak: int | None) -> Built | None:
        """The model at ``peak``: nodes per (shape, table, maximal pattern's position), groups
        given back per (shape, table, free column), the ``nodes`` term and the low ranks; None
        when some shape's nodes hold no pattern at that peak. Each class is counted in its home
        table (``Shape.home``), and linked tables agree value by value on the columns they share
        (``model._agree``: those columns are never raised, so each maximal pattern keeps them)."""
        problem = self.problem
        model = LeanCpModel()
        uses: dict[tuple[int, int, int], cp_model.IntVar] = {}
        back: dict[tuple[int, int, int], cp_model.IntVar] = {}
        in_class: dict[int, list[cp_model.LinearExprT]] = {c: [] for c in range(len(problem.classes))}
        costs: list[cp_model.LinearExprT] = []
        low_ranks: list[cp_model.LinearExprT] = []
        for s, (shape, tables) in enumerate(zip(self.shapes, self.tables)):
            count, start = int(shape.nodes.size), int(self.node_start[shape.nodes[0]])
            shape_gpus: list[cp_model.LinearExprT] = []
            rows: list[tuple[np.ndarray, np.ndarray, list[cp_model.IntVar]]] = []  # per table: its maximal positions, their patterns, their counts
            for t, table in enumerate(tables):
                maximal = table.maximal(peak)
                if maximal.size == 0:
                    return None
                patterns = table.patterns[maximal]
                columns = shape.tables[t].columns
                own = [i for i, k in enumerate(columns) if shape.home(k) == t]  # the columns this table counts
                free = free_columns(shape, t)
                classes = [problem.classes[shape.part[columns[i]]] for i in own]
                per_group = np.array([c.width * len(c.members) for c in classes], dtype=np.int64)
                cost = (patterns[:, own] > 0) @ np.array([len(c.members) for c in classes], dtype=np.int64)
                row = [model.new_int_var(0, count, "") for _ in maximal.tolist()]
                for p, var in zip(maximal.tolist(), row):
                    uses[s, t, p] = var
                rows.append((maximal, patterns, row))
                model.add(cp_model.LinearExpr.sum(row) == count)
                costs.append(cp_model.LinearExpr.weighted_sum(row, cost.tolist()))
                shape_gpus.append(cp_model.LinearExpr.weighted_sum(row, (patterns[:, own] @ per_group).tolist()))
                for j, k in enumerate(own):
                    c = shape.part[columns[k]]
                    holding = np.flatnonzero(patterns[:, k] > 0)
                    if holding.size == 0:
                        continue
                    held = cp_model.LinearExpr.weighted_sum([row[i] for i in holding], patterns[holding, k].tolist())
                    if not free[k]:
                        in_class[c].append(held)
                        continue
                    given = back[s, t, k] = model.new_int_var(0, int((patterns[holding, k] - 1).max()) * count, "")
                    model.add(given <= cp_model.LinearExpr.weighted_sum([row[i] for i in holding], (patterns[holding, k] - 1).tolist()))
                    in_class[c] += [held, -given]
                    shape_gpus.append(-int(per_group[j]) * given)
            _agree(model, shape, rows)
            low_ranks.append(start * cp_model.LinearExpr.sum(shape_gpus))
        for c, terms in in_class.items():
            model.add(cp_model.LinearExpr.sum(terms) == problem.classes[c].groups)
        weighted = self.nodes_weight * cp_model.LinearExpr.sum(costs)
        return model, uses, back, weighted, cp_model.LinearExpr.sum(low_ranks)


def _agree(model: cp_model.CpModel, shape: Shape, rows: Sequence[tuple[np.ndarray, np.ndarray, list[cp_model.IntVar]]]) -> None:
    """Linked tables count the same nodes for every value of the classes they share, as
    ``model._agree`` states it over every pattern (a value no maximal pattern of one side holds
    holds no node on the other)."""
    for parent, child, shared in shape.links:
        if not shared:
            continue  # both tables count all the shape's nodes already
        sides: dict[tuple[int, ...], tuple[list[cp_model.IntVar], list[cp_model.IntVar]]] = {}
        for side, t in enumerate((parent, child)):
            positions = [shape.tables[t].columns.index(k) for k in shared]
            _, patterns, row = rows[t]
            for pattern, var in zip(patterns[:, positions].tolist(), row):
                sides.setdefault(tuple(pattern), ([], []))[side].append(var)
        for key in sorted(sides):
            mine, theirs = sides[key]
            model.add(cp_model.LinearExpr.sum(mine) == cp_model.LinearExpr.sum(theirs))


def given_back(tables: Sequence[Sequence[MaximalTable]], uses: Mapping[tuple[int, int, int], int], back: Mapping[tuple[int, int, int], int]) -> dict[tuple[int, int, int], int]:
    """Nodes per (shape, table, pattern) once each table gives its groups back: column by
    column in the table's order, from its patterns in their table's order, each node lowered
    to one group of the class before the next is touched (the fewest nodes changed, so the
    fewest distinct patterns for the layout)."""
    found: dict[tuple[int, int, int], int] = {}
    for s, per_shape in enumerate(tables):
        for t, table in enumerate(per_shape):
            held = {tuple(table.patterns[p].tolist()): n for (shape, at, p), n in sorted(uses.items()) if (shape, at) == (s, t) and n}
            for k in range(table.patterns.shape[1]):
                left = back.get((s, t, k), 0)
                for pattern in sorted(held):
                    if not left:
                        break
                    spare = pattern[k] - 1
                    if spare <= 0:
                        continue
                    nodes = held[pattern]
                    whole = min(nodes, left // spare)  # nodes lowered to one group of the class
                    part = left - whole * spare if whole < nodes else 0  # one more node lowered by the rest
                    lowered = [(1, whole), (pattern[k] - part, 1 if part else 0)]
                    held[pattern] -= whole + (1 if part else 0)
                    for value, many in lowered:
                        if many:
                            key = (*pattern[:k], value, *pattern[k + 1 :])
                            held[key] = held.get(key, 0) + many
                    left -= whole * spare + part
                    if not held[pattern]:
                        del held[pattern]
                if left:
                    raise InternalError(f"shape {s}'s table {t} gives back {left} more groups of column {k} than its nodes hold past one each")  # the model bounds them
            for pattern, nodes in sorted(held.items()):
                found[s, t, table.position(pattern)] = nodes
    return found


__all__ = ["MIN_PATTERNS", "MaximalModel", "MaximalTable", "free_columns", "given_back", "maximal_tables", "solve_maximal"]

