"""The exact search: one CP-SAT model over every collocated or disaggregated placement.

RLinf's toolkit searches its cost tables by a memoised recursion over two-way cuts that keeps
one best result per sub-workflow, never tries a 1-GPU sink and drops mixed layouts after the
fact; here every split is one assignment of a CP-SAT model (each component's GPU count and
per-batch time tied by a table constraint over exactly its allowed rows, the pipeline
bottleneck by ``AddMaxEquality``), so the optimum is proven over all of them. The best few
candidates come from re-solving with the earlier ones forbidden; ties between equally fast
placements are broken by a documented rule, so the answer never depends on the solver's luck.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from ortools.sat.python import cp_model

from solver_placement._auto.problem import MAX_UNITS, AutoProblem
from solver_placement._auto.result import COLLOCATED, DISAGGREGATED, AutoCandidate, AutoPlacement, SearchStats
from solver_placement._auto.section import read_top_k
from solver_placement._auto.value_domains import fillable_counts, time_unit
from solver_placement._cluster.cluster import Cluster
from solver_placement._config import ConfigSource
from solver_placement._errors import InfeasiblePlacementError, InternalError, PlacementConfigError, SolverTimeoutError
from solver_placement._job import Job
from solver_placement._solver.lean_model import LeanCpModel
from solver_placement._solver.options import SolverOptions, Status, solve_model

#: A placement read from a solve: its mode and, disaggregated, the GPU counts in pipeline order.
Choice = tuple[str, tuple[int, ...]]
#: Allowed GPU counts an infeasibility message lists per component before eliding the rest.
SHOWN_COUNTS = 12


def auto_place(
    source: AutoProblem | ConfigSource | Job,
    *,
    cluster: Cluster | None = None,
    top_k: int | None = None,
    time_limit_s: float | None = None,
    num_workers: int | None = None,
    seed: int | None = None,
) -> AutoPlacement:
    """Choose collocation or a disaggregated split minimising the modelled iteration time.

    Returns the proven-optimal candidate and the next ``top_k - 1`` best distinct ones, each
    found by re-solving with the earlier ones forbidden. Among equal modelled times collocation
    wins, then the split giving more GPUs to earlier pipeline stages. The keyword arguments
    override the ``solver:`` section; one time limit covers every solve of the call. A given
    ``cluster`` sizes the search instead of the config (one GPU count on every node). Raises
    :class:`PlacementConfigError` on bad input, :class:`InfeasiblePlacementError` when no GPU
    count satisfies the tables, :class:`SolverTimeoutError` when the time limit passes before
    any placement is found.
    """
    if isinstance(source, AutoProblem) and cluster is not None:
        raise PlacementConfigError("an AutoProblem is already sized; give the config with cluster=, not the problem")
    problem = source if isinstance(source, AutoProblem) else AutoProblem.from_config(source, cluster)
    options = problem.solver_options(time_limit_s=time_limit_s, num_workers=num_workers, seed=seed)
    k = problem.top_k if top_k is None else read_top_k(top_k)
    return _Search(problem, options).run(k)


class _Search:
    """The CP-SAT model of one problem, re-solved once per candidate within one time budget."""

    def __init__(self, problem: AutoProblem, options: SolverOptions) -> None:
        self.problem = problem
        self.options = options
        self.started = time.perf_counter()
        self.budget = options.start()
        self.model = LeanCpModel()
        self.solves = 0
        self.collocated_forbidden = False
        self.unit_s = time_unit(problem)
        self.gpus: dict[str, cp_model.IntVar] = {}
        self._build()

    def _units(self, seconds: float) -> int:
        return int(round(seconds / self.unit_s))

    # ------------------------------------------------------------------------------- the model
    def _build(self) -> None:
        """Variables: ``collocated``; per pipelined component its GPU count ``g`` and per-batch
        time ``b`` (:meth:`_add_stage`).

        Constraints: the counts fill the cluster unless collocated; ``bottleneck = max(b)``.
        Objective ``time`` (integer units): the collocated total, or ``sum(b) + (batches - 1) *
        bottleneck + resident``, one linear expression.
        """
        p, m = self.problem, self.model
        self.collocated = m.new_bool_var("collocated")
        self.collocated_units, resident_units = self._mode_times()
        batch_vars: list[cp_model.IntVar] = []
        ceiling = 0
        offset: cp_model.LinearExpr | int = 0
        counts = fillable_counts(p)
        for name in p.pipeline:
            batch, slowest = self._add_stage(name, counts[name], offset)
            batch_vars.append(batch)
            ceiling = max(ceiling, slowest)
            offset = offset + self.gpus[name]
        m.add(offset == p.num_gpus - p.num_gpus * self.collocated)
        bottleneck = m.new_int_var(0, ceiling, "bottleneck")
        m.add_max_equality(bottleneck, batch_vars)
        objective = (
            sum(batch_vars)
            + (p.pipeline_batches - 1) * bottleneck
            + (self.collocated_units or 0) * self.collocated
            + (resident_units or 0) * (1 - self.collocated)
        )
        self.time = m.new_int_var(0, MAX_UNITS, "time")
        m.add(self.time == objective)
        m.minimize(self.time)

    def _mode_times(self) -> tuple[int | None, int | None]:
        """The collocated total and the resident components' time, in units; a mode whose time
        is not modelled (None) is ruled out."""
        collocated_time, resident_time = self.problem.collocated_time(), self.problem.resident_time()
        collocated_units = None if collocated_time is None else self._units(collocated_time)
        if collocated_units is None:
            self.model.add(self.collocated == 0)
        resident_units = None if resident_time is None else self._units(resident_time)
        if resident_units is None:
            self.model.add(self.collocated == 1)
        return collocated_units, resident_units

    def _add_stage(self, name: str, counts: Sequence[int], offset: cp_model.LinearExprT) -> tuple[cp_model.IntVar, int]:
        """The GPU count and per-batch time of ``name``, whose block starts at ``offset``.

        Tied by a table constraint over the allowed (count, time) pairs plus ``(0, 0)`` for
        collocation (exact: no interpolation between table rows); ``g = 0`` exactly when
        collocated; the block starts at a multiple of the stage's alignment. Returns the time
        variable and its upper bound (the slowest row).
        """
        m, table, total = self.model, self.problem.tables[name], self.problem.num_gpus
        rows = [(g, self._units(table.batch_time(g))) for g in counts]  # type: ignore[arg-type]
        slowest = max((u for _, u in rows), default=0)
        gpus = m.new_int_var_from_domain(cp_model.Domain.from_values([0, *(g for g, _ in rows)]), f"{name}_gpus")
        batch = m.new_int_var(0, slowest, f"{name}_batch")
        m.add_allowed_assignments([gpus, batch], [(0, 0), *rows])
        m.add(gpus == 0).only_enforce_if(self.collocated)
        m.add(gpus >= 1).only_enforce_if(~self.collocated)
        step = self.problem.alignment(name)
        if step > 1:
            m.add(offset == step * m.new_int_var(0, total // step, f"{name}_start"))
        self.gpus[name] = gpus
        return batch, slowest

    # ------------------------------------------------------------------------------ the solves
    def run(self, k: int) -> AutoPlacement:
        """Solve, record, forbid, repeat: the ``k`` best distinct placements, best first."""
        candidates: list[AutoCandidate] = []
        first: tuple[bool, float, float] | None = None
        for _ in range(k):
            solver, status = self._solve()
            if status == cp_model.INFEASIBLE:
                if not candidates:
                    raise _infeasible(self.problem)
                break
            if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                if not candidates:
                    raise SolverTimeoutError(
                        f"auto placement: no placement found within solver.time_limit_s = {self.options.time_limit_s} s"
                    )
                break
            proven = status == cp_model.OPTIMAL
            if first is None:
                first = (proven, solver.objective_value * self.unit_s, solver.best_objective_bound * self.unit_s)
            mode, counts = self._tie_break(solver.value(self.time)) if proven else self._read(solver)
            candidates.append(AutoCandidate.of(self.problem, mode, counts))
            self._forbid(mode, counts)
            if not proven:
                break
        if first is None:
            raise InternalError("the auto placement search ended without a result")
        stats = SearchStats(*first, self.solves, time.perf_counter() - self.started)
        return AutoPlacement(self.problem, tuple(candidates), stats)

    def _solve(self) -> tuple[cp_model.CpSolver, Status]:
        self.solves += 1
        return solve_model(self.model, self.options, self.budget)

    def _tie_break(self, best: int) -> Choice:
        """Among the placements of modelled time ``best`` (integer units): collocation if it is
        one, else the split with lexicographically most GPUs on the earlier stages.

        Solved with ``time`` and ``collocated`` pinned (their domains narrowed, then restored:
        cheaper than copying the model) and one weighted objective: weights ``(G + 1)^i`` make it
        lexicographic, the last stage's count being fixed by the others.
        """
        if self.collocated_units == best and not self.collocated_forbidden:
            return COLLOCATED, ()
        names = self.problem.pipeline
        base = self.problem.num_gpus + 1
        pinned = [(self.time, best), (self.collocated, 0)]
        saved = [list(self._domain(var)) for var, _ in pinned]
        for var, value in pinned:
            self._set_domain(var, [value, value])
        self.model.maximize(sum(base ** (len(names) - 2 - i) * self.gpus[name] for i, name in enumerate(names[:-1])))
        try:
            solver, status = self._solve()
        finally:
            for (var, _), domain in zip(pinned, saved, strict=True):
                self._set_domain(var, domain)
            self.model.minimize(self.time)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            raise SolverTimeoutError(
                f"auto placement: the tie-break among equally fast splits ran out of solver.time_limit_s = {self.options.time_limit_s} s"
            )
        return self._read(solver)

    def _domain(self, var: cp_model.IntVar) -> Sequence[int]:
        return self.model.proto.variables[var.index].domain

    def _set_domain(self, var: cp_model.IntVar, bounds: Sequence[int]) -> None:
        domain = self.model.proto.variables[var.index].domain
        domain.clear()
        domain.extend(bounds)

    def _read(self, solver: cp_model.CpSolver) -> Choice:
        if solver.boolean_value(self.collocated):
            return COLLOCATED, ()
        return DISAGGREGATED, tuple(solver.value(self.gpus[name]) for name in self.problem.pipeline)

    def _forbid(self, mode: str, counts: tuple[int, ...]) -> None:
        """No-good: every later solve must find a different placement."""
        if mode == COLLOCATED:
            self.collocated_forbidden = True
            self.model.add(self.collocated == 0)
            return
        differs = []
        for name, count in zip(self.problem.pipeline, counts, strict=True):
            literal = self.model.new_bool_var(f"{name}_not_{count}")
            self.model.add(self.gpus[name] != count).only_enforce_if(literal)
            differs.append(literal)
        self.model.add_bool_or(differs)


def _infeasible(problem: AutoProblem) -> InfeasiblePlacementError:
    """Why no placement exists, in the tables' own terms: collocation's missing rows, then each
    stage's allowed counts and alignment, which together cannot add up to the cluster."""
    conflicts = []
    missing = [name for name in problem.components() if problem.tables[name].time(problem.num_gpus) is None]
    if missing:
        conflicts.append(f"collocation: {', '.join(missing)} not modelled on all {problem.num_gpus} GPUs")
    for name in problem.pipeline:
        allowed = problem.tables[name].allowed()
        shown = ", ".join(map(str, allowed[:SHOWN_COUNTS])) + (", ..." if len(allowed) > SHOWN_COUNTS else "")
        conflicts.append(f"{name}: allowed GPU counts {{{shown}}}, block start a multiple of {problem.alignment(name)}")
    conflicts.append(f"disaggregation: one block per component, adding up to {problem.num_gpus} GPUs")
    return InfeasiblePlacementError(
        "auto placement: no collocated or disaggregated placement satisfies the cost tables:\n  - " + "\n  - ".join(conflicts),
        conflicts,
    )
