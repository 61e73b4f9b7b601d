"""The least-cost local ids of each node pattern a count answer of whole-node patterns uses.

Why a module of its own: the count path with ranks weighed (``weighed.py``) and the re-planning
one (``kept_weighed.py``) lay out their answers' nodes alike, each pattern by the search (or the
walk, for progressions) that priced it, and that search is remembered across the patterns.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from solver_placement._solver.counts.contiguity import Local, Ranked, local_run
from solver_placement._solver.counts.fixed_loads import FixedLoad
from solver_placement._solver.counts.graphs import ApartGraph
from solver_placement._solver.counts.local_costs import NodeWalk, least_layout, visit_order
from solver_placement._solver.counts.patterns import beside_of
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.counts.stack_sums import graph_stacks
from solver_placement._solver.options import Budget
from solver_placement._specification.candidates import ComponentRequest


class Pricer:
    """One :class:`Local` search per part, graph, GPU count and GPUs kept off, shared by the
    layout of every node: the least-cost stacks of the few patterns the answer uses. A part
    whose walk visits a class's progressions residue by residue is laid out by that walk traced
    back (``local_costs.least_layout``): the search keeps one open run per residue, which on
    72-GPU nodes passed ``MAX_LOCAL_STATES`` for patterns the walk had priced."""

    def __init__(
        self, problem: CountProblem, requests: Mapping[str, ComponentRequest], parts: list[tuple[int, ...]], budget: Budget, ranked: list[Ranked]
    ) -> None:
        self.problem = problem
        self.requests = requests
        self.parts = parts
        self.budget = budget
        self.ranked = ranked
        self.searches: dict[tuple[object, ...], Local] = {}

    def ids(
        self,
        graph: ApartGraph,
        capacity: int,
        pattern: tuple[int, ...],
        keep_off: tuple[tuple[int, ...], ...],
        loads: tuple[FixedLoad | None, ...],
        rows: tuple[tuple[int, int], ...],
    ) -> dict[int, np.ndarray]:
        """Each present class's local ids on a node asked ``pattern`` (beside the rank strings'
        ``loads``): the least-cost stacks of each part, GPU by GPU; a part split by rank bases
        (``rows``: the run and pattern the model chose for it, ``kind_ranks.py``) by the split of
        that pattern, traced back through its walk."""
        taken: dict[int, np.ndarray] = {}
        split = {run.shape.part: (run.split, run.splits[p]) for s, p in rows if (run := self.ranked[s]).split is not None}
        for part in self.parts:
            demand = tuple(pattern[c] * self.problem.classes[c].width for c in part)
            if not any(demand):
                continue
            if part in split:
                by_base, items = split[part]
                stacks = least_layout(by_base.walk, items, self.budget.check)
                taken |= {c: by_base.ids_of(stacks, k) for k, c in enumerate(part) if demand[k]}
                continue
            off = tuple(keep_off[c] for c in part)
            walk = self._walk(graph, part, capacity, off, loads)
            if visit_order(walk) != list(range(capacity)):  # a class in progressions: its search would keep a run open per residue
                stacks = least_layout(walk, demand, self.budget.check)
            else:
                stacks = self._search(graph, part, capacity, off, loads).layout(demand)
            for k, c in enumerate(part):
                if demand[k]:
                    taken[c] = np.array([gpu for gpu, stack in enumerate(stacks) if k in stack], dtype=np.int64)
        return taken

    def _walk(self, graph: ApartGraph, part: tuple[int, ...], capacity: int, off: tuple[tuple[int, ...], ...], loads: tuple[FixedLoad | None, ...]) -> NodeWalk:
        """The walk that priced the part on such a node (``ranked_runs.py``), its demand in GPUs
        (widths of 1), for :func:`local_costs.least_layout`."""
        classes = [self.problem.classes[c] for c in part]
        runs, steps = zip(*(local_run(c, self.requests) for c in classes))
        fits = beside_of(self.problem, part) if loads else None
        return NodeWalk(
            capacity, tuple(len(c.members) for c in classes), (1,) * len(part), (True,) * len(part), off, tuple(runs),
            graph_stacks(graph, part), loads, fits, tuple(steps),
        )  # fmt: skip

    def _search(
        self, graph: ApartGraph, part: tuple[int, ...], capacity: int, off: tuple[tuple[int, ...], ...], loads: tuple[FixedLoad | None, ...] = ()
    ) -> Local:
        key = (graph, part, capacity, off, loads)
        if key not in self.searches:
            classes = [self.problem.classes[c] for c in part]
            weights = tuple(len(count_class.members) for count_class in classes)
            runs, steps = zip(*(local_run(c, self.requests) for c in classes))
            stacks = graph_stacks(graph, part)
            fits = beside_of(self.problem, part) if loads else None
            self.searches[key] = Local(weights, stacks, capacity, off, tuple(runs), self.budget.check, loads, fits, tuple(steps))
        return self.searches[key]
