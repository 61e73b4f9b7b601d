"""Solving a spec: build the CP-SAT model, run it deterministically, read out assignments.

Model, solve and read-out are three separate steps. The search is deterministic: a fixed seed
and CP-SAT's interleaved search, whose result does not depend on the number of workers. An
infeasible spec is solved a second time with one assumption literal per user statement, and
the statements CP-SAT names as conflicting make up the error message.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ortools.sat.python import cp_model

from solver_placement.constants import DEFAULT_TIME_LIMIT_S, MAX_TIME_LIMIT_S
from solver_placement.cluster.cluster import Cluster
from solver_placement.config import ConfigSource, check_keys, positive_int
from solver_placement.errors import InfeasiblePlacementError, PlacementConfigError, PlacementError, SolverTimeoutError
from solver_placement.solver.decompose import narrow, should_aggregate, solve_per_node
from solver_placement.solver.model import DEFAULT_WEIGHTS, ModelContext, build_model
from solver_placement.spec.candidates import expand_all
from solver_placement.records import Placement
from solver_placement.solver.solution import Solution
from solver_placement.spec.placement_spec import PlacementSpec

SOLVER_KEYS = ("time_limit_s", "num_workers", "seed", "objective")
PreviousPlacements = Solution | Mapping[str, Sequence[Placement]]
#: Time a CP-SAT run still gets once the budget is spent (enough to report, not to search).
MIN_RUN_S = 0.01
#: Longest conflict set that is shrunk to a minimal one by re-solving.
MAX_CORE_TO_MINIMIZE = 40


def solve(
    source: PlacementSpec | ConfigSource,
    *,
    cluster: Cluster | None = None,
    time_limit_s: float | None = None,
    num_workers: int | None = None,
    seed: int | None = None,
    objective: Mapping[str, int] | None = None,
    previous: PreviousPlacements | None = None,
) -> Solution:
    """Place every component of ``source`` (a spec, a YAML path, a dict or a DictConfig).

    Keyword arguments override the config's ``cluster.solver`` section; ``objective`` weighs
    the terms of the objective (see ``model.add_objective``); ``previous`` (an earlier solution
    or its placements) makes the ``changes`` term count the processes that move. Raises a
    :class:`PlacementError` subclass on bad input, :class:`InfeasiblePlacementError` naming the
    conflicting statements, or :class:`SolverTimeoutError`.
    """
    started = time.perf_counter()
    spec = source if isinstance(source, PlacementSpec) else PlacementSpec.from_config(source, cluster)
    options = _options(spec.solver_options, time_limit_s, num_workers, seed)
    # one budget for every CP-SAT run of this call (decomposition, polish, explanation)
    options["deadline"] = started + float(options["time_limit_s"])
    weights = _weights({**options.get("objective", {}), **(objective or {})})
    held_before = _previous_hardware(spec, previous)
    parsed = time.perf_counter()
    requests = spec.requests
    clock = {"build": 0.0, "solve": 0.0}
    ctx, solver, status = None, None, cp_model.UNKNOWN
    decomposed: dict | None = None
    tried = []
    if not held_before and should_aggregate(spec, requests):
        tried.append("the node-level decomposition (no layout found)")
        with _timed(clock, "solve"):
            narrowed = narrow(spec, requests, weights, float(options["time_limit_s"]) / 2)
            decomposed = None if narrowed is None else solve_per_node(spec, narrowed, weights, lambda c: _polished(c, options))
    if decomposed is None:  # the exact flat model decides
        with _timed(clock, "build"):
            ctx = build_model(spec, expand_all(requests), weights=weights, previous=held_before)
        if ctx.conflicts:
            raise _infeasible(ctx.conflicts)
        with _timed(clock, "solve"):
            solver, status = _polished(ctx, options)
    if decomposed is not None:
        assignments = {c.name: decomposed[c.shares_rule_with or c.name] for c in spec.components.values()}
        # optimal per stage, not proven optimal for the whole spec: no objective value is claimed
        return Solution(spec, requests, assignments, "FEASIBLE", None, {"parse": parsed - started, **clock})
    if status == cp_model.INFEASIBLE:
        conflicts = explain(spec, options) or ["the spec as a whole (the time limit left no time to name the conflicting statements)"]
        raise _infeasible(conflicts)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        pairs = sum(request.cand_hw.size for request in ctx.requests.values())
        raise _not_solved(status, options, [*tried, f"the exact model ({pairs} process x item candidates, {len(ctx.model.proto.variables)} variables)"])
    assignments = ctx.assignments(solver.response_proto.solution)
    timings = {"parse": parsed - started, **clock}
    objective = solver.objective_value if ctx.model.has_objective() else None
    return Solution(spec, requests, assignments, solver.status_name(status), objective, timings)


def explain(spec: PlacementSpec, options: Mapping[str, Any] | None = None) -> list[str]:
    """The user statements that cannot hold together (empty if the spec is feasible)."""
    options = _options(spec.solver_options, None, None, None) if options is None else options
    ctx = build_model(spec, expand_all(spec.requests), explain=True)
    if ctx.conflicts:
        return ctx.conflicts
    literals = list(ctx.statements.values())
    ctx.model.add_assumptions(literals)
    solver, status = _run(ctx, {**options, "num_workers": 1}, linearization_level=2)
    if status != cp_model.INFEASIBLE:
        return []
    names = {literal.index: text for text, literal in ctx.statements.items()}
    core = [names[index] for index in solver.sufficient_assumptions_for_infeasibility() if index in names]
    if not core:
        return ["the spec as a whole (CP-SAT found no smaller conflicting set)"]
    return _minimize_core(ctx, core, options)


def _minimize_core(ctx: ModelContext, core: list[str], options: Mapping[str, Any]) -> list[str]:
    """Drop every statement the conflict does not need (deletion: re-solve without it).

    CP-SAT's set is sufficient, not minimal; a short core names only what the user must change.
    Skipped for long cores, where the re-solves would cost more than the shorter message is worth.
    """
    if len(core) > MAX_CORE_TO_MINIMIZE:
        return core
    needed = list(core)
    for statement in core:
        trial = [s for s in needed if s != statement]
        ctx.model.clear_assumptions()
        ctx.model.add_assumptions([ctx.statements[s] for s in trial])
        _, status = _run(ctx, {**options, "num_workers": 1})
        if status == cp_model.INFEASIBLE:
            needed = trial
    return needed


@contextmanager
def _timed(clock: dict[str, float], key: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        clock[key] += time.perf_counter() - started


def _weights(raw: Mapping[str, Any]) -> dict[str, int]:
    check_keys(raw, DEFAULT_WEIGHTS, "cluster.solver.objective")
    return {key: positive_int(value, f"cluster.solver.objective.{key}", allow_zero=True) for key, value in raw.items()}


def _previous_hardware(spec: PlacementSpec, previous: PreviousPlacements | None) -> dict[str, list[list[int]]]:
    """Physical ids each process held before, per component, on this spec's cluster."""
    if previous is None:
        return {}
    records = previous.placements_by_component() if isinstance(previous, Solution) else previous
    held = {}
    for name, placements in records.items():
        if name in spec.components:
            held[name] = [
                [spec.cluster.physical_id(p.cluster_node_rank, p.hardware_type, local) for local in (p.local_hardware_ranks or [0])]
                for p in placements
                if _exists(spec, p)
            ]
    return held


def _exists(spec: PlacementSpec, p: Placement) -> bool:
    """False for records on hardware the cluster no longer has (e.g. a lost node)."""
    try:
        for local in p.local_hardware_ranks or [0]:
            spec.cluster.physical_id(p.cluster_node_rank, p.hardware_type, local)
    except PlacementConfigError:
        return False
    return True


def _options(config: Mapping[str, Any], time_limit_s: float | None, num_workers: int | None, seed: int | None) -> dict[str, Any]:
    check_keys(config, SOLVER_KEYS, "cluster.solver")
    merged = {"time_limit_s": DEFAULT_TIME_LIMIT_S, "num_workers": 1, "seed": 0, **config}
    merged.pop("deadline", None)
    for key, value in (("time_limit_s", time_limit_s), ("num_workers", num_workers), ("seed", seed)):
        if value is not None:
            merged[key] = value
    limit = merged["time_limit_s"]
    if not isinstance(merged.get("objective", {}), Mapping):
        raise PlacementConfigError("cluster.solver.objective must map term names to integer weights")
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not 0 < limit <= MAX_TIME_LIMIT_S:
        raise PlacementConfigError(f"solver time_limit_s must be a number of seconds in (0, {MAX_TIME_LIMIT_S}], not {limit!r}")
    positive_int(merged["num_workers"], "solver num_workers", maximum=64)
    positive_int(merged["seed"], "solver seed", allow_zero=True, maximum=2**31 - 1)
    return merged


def _run(ctx: ModelContext, options: Mapping[str, Any], **extra: Any) -> tuple[cp_model.CpSolver, int]:
    solver = cp_model.CpSolver()
    params = solver.parameters
    deadline = options.get("deadline")
    remaining = float(options["time_limit_s"]) if deadline is None else deadline - time.perf_counter()
    params.max_time_in_seconds = max(MIN_RUN_S, remaining)
    params.random_seed = int(options["seed"])
    params.num_workers = int(options["num_workers"])
    params.interleave_search = params.num_workers > 1  # same answer whatever the worker count
    params.symmetry_level = 0  # symmetry is broken explicitly; detection costs seconds at scale
    for key, value in extra.items():
        setattr(params, key, value)
    status = solver.solve(ctx.model)
    if status == cp_model.MODEL_INVALID:
        raise PlacementError(f"internal error: the CP-SAT model is invalid: {ctx.model.validate()}")
    return solver, status


def _polished(ctx: ModelContext, options: Mapping[str, Any]) -> tuple[cp_model.CpSolver, int]:
    """Solve; when an objective has tied optima, pick among them deterministically.

    Different worker counts may stop at different optimal solutions. Fixing the objective to
    the optimum and re-solving with one worker (no hint, so nothing of the first run leaks in)
    gives the same placement whatever ``num_workers`` is.
    """
    solver, status = _run(ctx, options)
    if status != cp_model.OPTIMAL or not ctx.model.has_objective():
        return solver, status
    best = int(round(solver.objective_value))
    objective = ctx.model.proto.objective
    expression = sum(coef * ctx.model.get_int_var_from_proto_index(var) for var, coef in zip(objective.vars, objective.coeffs))
    ctx.model.add(expression + int(objective.offset) == best)
    polish, polished = _run(ctx, {**options, "num_workers": 1})
    return (polish, polished) if polished == cp_model.OPTIMAL else (solver, status)


def _infeasible(conflicts: list[str]) -> InfeasiblePlacementError:
    if len(conflicts) == 1:
        return InfeasiblePlacementError(f"no placement exists: {conflicts[0]}", conflicts)
    listed = "\n  - ".join(conflicts)
    return InfeasiblePlacementError(f"no placement exists; these statements conflict:\n  - {listed}", conflicts)


def _not_solved(status: int, options: Mapping[str, Any], tried: Sequence[str]) -> PlacementError:
    if status == cp_model.UNKNOWN:
        return SolverTimeoutError(
            f"the solver found no placement within time_limit_s={options['time_limit_s']} s and could not prove "
            f"there is none (tried: {'; '.join(tried)}); raise cluster.solver.time_limit_s or narrow the declarative components"
        )
    return PlacementError(f"the solver stopped with status {status}")