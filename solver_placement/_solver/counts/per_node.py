"""A few nodes with ``balance`` weighed: each node's GPUs counted by stack, no pattern listed.

Why: the count model counts the nodes of each whole-node pattern, which keeps it small whatever
the node count, but on a few nodes the patterns far outnumber the nodes and listing them is most
of the time: three 8-GPU nodes of six components in a ring of exclusions have 9,247 patterns,
1-2 s to list (the walk), and the count model's relaxation is loose on them (no proof of the
fewest nodes under a peak of 21 GPUs in 3.5 s). Per node, what a node holds is how many of its
GPUs carry each stack (a set of classes that may share a GPU, ``stack_sums.stacks_of``), which
is small (18 stacks for six classes in a ring), and a class's GPUs on the node are a whole
number of its groups; a pattern is what a node's stacks add up to. Where no class takes runs of
consecutive GPUs, none is kept off a GPU and no rank string loads one, any GPUs carrying a class
make its groups, so this states exactly the patterns the count model lists, and the layout
(``layout.py``) tiles each node's pattern as it does the count model's.

Its size is the nodes times the stacks, so it serves clusters of at most ``MOST_NODES`` nodes
(past ``ALONE_NODES`` after the patterns, where they are listed: ``counts/__init__.py``);
alike nodes are ordered by load (no two orders of one layout searched). It answers each level of
``peak_levels.by_levels`` as the count model does (the bounds of every level set in place, as
``level_model.py`` does), and gives the shapes and counts the layout reads.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import InternalError
from solver_placement._solver.counts.model import Counts
from solver_placement._solver.counts.patterns import Shape, Table
from solver_placement._solver.counts.peak_levels import by_levels, least_peak
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.counts.stack_sums import graph_stacks
from solver_placement._solver.lean_model import LeanCpModel
from solver_placement._solver.options import Budget, SolverOptions, solve_model

log = logging.getLogger(__name__)

#: Most nodes (where some class may go) the per-node model serves. Up to ``ALONE_NODES`` it is
#: the only form; past that the whole-node patterns are counted first when ``patterns.shapes``
#: lists them all (now arrays, milliseconds), and this model gets ``SHARE`` of the time left
#: (each run at most ``SHARED_WORK``) only where they prove nothing, or first where they are too
#: many to list: alike nodes make the count model's one integer per pattern the tighter model on
#: most specs (5 nodes, 1,203 patterns: 0.03 s by counts, 1.3 s per node; of 25 ``balance``
#: specs on 5-16 nodes, this model proved 7 in its share and wasted 0.1-0.5 s CPU on the 18
#: others, all of which the patterns proved), while the patterns may be too many to list
#: (8 nodes past 4,000: proven here in 0.13 s).
MOST_NODES = 16
ALONE_NODES = 4
SHARE = 0.3
#: CP-SAT's deterministic time (its own measure of work, the same on any machine) for one
#: level's run where the patterns follow (past ``ALONE_NODES``). Bounded by its share of the
#: wall time alone, whether a level was proven here or by the patterns depended on the machine's
#: load, and so did the answer's tie-break: on 5 alike nodes of six classes in a ring
#: (``balance:5:3``) one level needs 0.41 of it per node (0.44 s), which a loaded machine cut
#: short and a quiet one did not, while the patterns prove it in 0.03 s. The levels the
#: benchmark's per-node runs prove take at most 0.007.
SHARED_WORK = 0.05


def per_node_applies(problem: CountProblem) -> bool:
    """Whether the per-node model states this count problem exactly: few nodes, no class in runs
    of consecutive GPUs or kept off a GPU, no rank string's load, no domain counted."""
    if problem.beside is not None or any(held.size for held in problem.blocked):
        return False
    if any(c.run != 1 or c.step != 1 or c.levels or c.priced or c.joint for c in problem.classes):
        return False
    return 0 < int(problem.allowed.any(axis=0).sum()) <= MOST_NODES


def alone(problem: CountProblem) -> bool:
    """Whether the per-node model is the only form tried (the fewest nodes)."""
    return int(problem.allowed.any(axis=0).sum()) <= ALONE_NODES


def share(problem: CountProblem, budget: Budget) -> Budget:
    """The per-node model's time: the whole ``budget`` when it is the only form, else ``SHARE``
    of what is left."""
    if alone(problem):
        return budget
    return Budget(time.perf_counter() + SHARE * budget.remaining(), budget.limit_s)


class PerNode:
    """The model, built once: per node its stacks' GPUs, each class's groups and presence, and
    its load; the bounds each level sets (loads, the objective's cap)."""

    def __init__(self, problem: CountProblem, cluster: Cluster, weights: Mapping[str, int], options: SolverOptions, budget: Budget) -> None:
        self.problem = problem
        self.options = SolverOptions(options.time_limit_s, 1, options.seed)
        self.budget = budget
        self.nodes = np.flatnonzero(problem.allowed.any(axis=0))
        self.capacity = cluster.gpus_per_node
        self.placed_first = problem.load if problem.load is not None else np.zeros(cluster.num_nodes, dtype=np.int64)
        part = tuple(range(len(problem.classes)))
        members = [len(c.members) for c in problem.classes]
        model = self.model = LeanCpModel()
        self.groups: list[list[cp_model.IntVar]] = []
        self.loads: list[tuple[cp_model.Constraint, int]] = []  # per node, its GPUs' load and the load placed first
        present: list[tuple[cp_model.IntVar, int]] = []
        holding: dict[int, list[cp_model.IntVar]] = {}
        previous: tuple[tuple[object, ...], cp_model.LinearExpr] | None = None
        for node in self.nodes.tolist():
            graph = problem.graphs[problem.graph_of[node]]
            stacks = graph_stacks(graph, part)
            capacity = int(self.capacity[node])
            gpus = [model.new_int_var(0, capacity, "") for _ in stacks]
            model.add(cp_model.LinearExpr.sum(gpus) <= capacity)
            held = []
            for c, count_class in enumerate(problem.classes):
                most = capacity // count_class.width if problem.allowed[c, node] else 0
                groups = model.new_int_var(0, most, "")
                carrying = [var for var, stack in zip(gpus, stacks) if c in stack]
                model.add(cp_model.LinearExpr.sum(carrying) == count_class.width * groups)
                there = model.new_bool_var("")
                model.add(groups >= there)
                model.add(groups <= most * there)  # linear both ways: what CP-SAT's relaxation reads
                present.append((there, members[c]))
                holding.setdefault(c, []).append(there)
                held.append(groups)
            self.groups.append(held)
            load = cp_model.LinearExpr.weighted_sum(gpus, [sum(members[c] for c in stack) for stack in stacks])
            self.loads.append((model.add(load <= 2**40), int(self.placed_first[node])))  # its bound set by each level
            alike = (capacity, int(problem.graph_of[node]), tuple(problem.allowed[:, node].tolist()), int(self.placed_first[node]))
            if previous is not None and previous[0] == alike:
                model.add(previous[1] >= load)  # alike nodes (the same load placed first): heavier first, one order of each layout
            previous = (alike, load)
        for c, count_class in enumerate(problem.classes):
            model.add(cp_model.LinearExpr.sum([held[c] for held in self.groups]) == count_class.groups)
            most = max((int(self.capacity[node]) // count_class.width for node in self.nodes.tolist() if problem.allowed[c, node]), default=0)
            if most and count_class.groups > most:  # on at least its fewest nodes: a cut the integers keep (``pattern_program.fewest_nodes``)
                model.add(cp_model.LinearExpr.sum(holding[c]) >= -(-count_class.groups // most))
        self.objective = int(weights.get("nodes", 0)) * cp_model.LinearExpr.weighted_sum([var for var, _ in present], [m for _, m in present])
        self.cap = model.add(self.objective <= 2**40)  # its bound set by each solve
        model.minimize(self.objective)
        self.patterns: list[dict[tuple[int, ...], int]] = [{(0,) * len(part): 0} for _ in self.nodes.tolist()]

    def solve(self, peak: int | None, below: int | None) -> Counts | None:
        """``peak_levels.LevelSolve``: the best counts of the ``nodes`` term with every node's
        load at most ``peak`` and the objective under ``below`` (None: no limit); their uses are
        (node's position, 0, its pattern's index in :meth:`shapes`)."""
        for constraint, placed_first in self.loads:
            _set_high(constraint, 2**40 if peak is None else peak - placed_first)
        _set_high(self.cap, 2**40 if below is None else below - 1)
        work = {} if alone(self.problem) else {"max_deterministic_time": SHARED_WORK}  # the patterns follow: the run's work bounded
        solver, status = solve_model(self.model, self.options, self.budget, **work)
        if status == cp_model.INFEASIBLE:
            return Counts({}, "INFEASIBLE", 0, 0)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return None
        uses: dict[tuple[int, int, int], int] = {}
        for i, held in enumerate(self.groups):
            pattern = tuple(int(solver.value(var)) for var in held)
            index = self.patterns[i].setdefault(pattern, len(self.patterns[i]))
            uses[i, 0, index] = 1
        return Counts(uses, solver.status_name(status), int(round(solver.objective_value)), int(round(solver.best_objective_bound)))

    def peak_of(self, counts: Counts) -> int:
        """The most weighed GPUs on a node of an answer :meth:`solve` gave (components placed
        first load nodes no class may use too)."""
        per_group = [c.width * len(c.members) for c in self.problem.classes]
        pattern_of = [{index: pattern for pattern, index in known.items()} for known in self.patterns]
        used = (sum(g * w for g, w in zip(pattern_of[i][p], per_group)) + int(self.placed_first[self.nodes[i]]) for (i, _, p) in counts.uses)
        return max([int(self.placed_first.max(initial=0)), *used])

    def shapes(self) -> list[Shape]:
        """One shape per node, its table every pattern an answer put there (the empty one
        first): what the layout reads with an answer's counts."""
        found = []
        width = len(self.problem.classes)
        for i, node in enumerate(self.nodes.tolist()):
            patterns = tuple(sorted(self.patterns[i], key=self.patterns[i].__getitem__))
            found.append(
                Shape(
                    tuple(range(width)), int(self.capacity[node]), np.array([node], dtype=np.int64),
                    (Table(tuple(range(width)), patterns),), tuple(() for _ in range(width)), load=int(self.placed_first[node]),
                )
            )  # fmt: skip
        return found


def _set_high(constraint: cp_model.Constraint, high: int) -> None:
    """A linear constraint's upper bound (its domain one interval ``[low, high]``, as built)."""
    domain = constraint.proto.linear.domain
    if len(domain) != 2:  # as built: never user input
        raise InternalError("a constraint of the per-node count model is not one interval")
    domain[1] = high


def counted_per_node(problem: CountProblem, cluster: Cluster, weights: Mapping[str, int], options: SolverOptions, budget: Budget) -> tuple[list[Shape], Counts | None]:
    """The shapes and the best counts (None: none in time, or none at all) with ``balance``
    weighed, level by level (``peak_levels.by_levels``), each level per node."""
    built = PerNode(problem, cluster, {**weights, "balance": 0}, options, budget)
    weighed = sum(len(c.members) for c in problem.classes)
    most = max(int(built.capacity[node]) * weighed + int(built.placed_first[node]) for node in built.nodes.tolist())
    log.debug("balance by levels, each node's GPUs by stack (%d nodes)", built.nodes.size)
    best = by_levels(range(least_peak(problem, int(built.nodes.size)), most + 1), int(weights.get("balance", 0)), built.solve, built.peak_of, budget)
    return built.shapes(), best
