"""Why a spec has no placement: the fewest user statements that cannot hold together.

Three steps, cheapest first. Counting (``bounds``) answers most impossible specs in
milliseconds, with the arithmetic as the reason. Otherwise each component is tried alone with
its own rules, so a component impossible by itself is blamed alone, not whatever shares its
nodes. Otherwise the model is built once more with one assumption literal guarding each
statement (see ``ModelContext.guard``); CP-SAT names a set of assumptions that is infeasible on
its own, which is shrunk to a minimal one by re-solving without chunks of it, then without each
statement (statements that hold in every layout drop out here). Every run shares one budget;
when it runs out, the set found so far is returned (still conflicting, perhaps not minimal).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from ortools.sat.python import cp_model

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import InfeasiblePlacementError, SolverTimeoutError, Statement, counted
from solver_placement._solver.build import build_model
from solver_placement._solver.context import ModelContext
from solver_placement._solver.counting import counting_conflicts
from solver_placement._solver.exact import check_build_fits, run_exact, spec_options
from solver_placement._solver.options import Budget, SolverOptions
from solver_placement._specification.candidates import expand_all
from solver_placement._specification.placement_spec import PlacementSpec, SpecSource, spec_of

log = logging.getLogger(__name__)

#: The conflict named when CP-SAT proves a spec infeasible without naming fewer statements.
WHOLE_SPEC = Statement("the spec as a whole (CP-SAT found no smaller conflicting set)")
#: CP-SAT parameters of the first explanation run (finds small cores sooner).
EXPLAIN_PARAMETERS = {"linearization_level": 2}


def explain(
    source: SpecSource,
    *,
    cluster: Cluster | None = None,
    time_limit_s: float | None = None,
    num_workers: int | None = None,
    seed: int | None = None,
) -> list[Statement]:
    """The user statements of ``source`` (what :func:`~solver_placement.solve` takes: a spec, a job,
    a path, ``YamlText``, a mapping or a ``DictConfig``, on ``cluster`` when given) that cannot hold
    together; empty when it has a placement or the time limit ran out before a conflict was found.
    The keyword arguments override the config's ``cluster.solver`` options, as in ``solve``.
    For a framework whose own code places the job (OpenRLHF, slime, ...), ``predict(...).explain()``
    says why each rank lands where it does instead."""
    spec = spec_of(source, cluster)
    return explain_spec(spec, spec_options(spec, time_limit_s=time_limit_s, num_workers=num_workers, seed=seed))


def explain_spec(spec: PlacementSpec, options: SolverOptions | None = None, budget: Budget | None = None) -> list[Statement]:
    """The user statements that cannot hold together (empty if the spec is feasible or the
    budget ran out before a conflict was found).

    ``options`` default to the spec's ``cluster.solver`` section; ``budget`` (default: a fresh
    one of ``options.time_limit_s``) bounds every step of the explanation together.
    """
    options = spec_options(spec) if options is None else options
    budget = options.start() if budget is None else budget
    try:
        by_counting = counting_conflicts(spec, budget)
        if by_counting:
            log.info("explained by the counting bounds: %s", counted(len(by_counting), "statement"))
            return by_counting
        for alone in _each_component_alone(spec):
            own = _core(alone, options, budget)
            if own:
                log.info("explained by %s's own rules: %s", next(iter(alone.components)), counted(len(own), "statement"))
                return own
        whole = _core(spec, options, budget)
        log.info("explained by the whole spec's assumption core: %s", counted(len(whole), "statement"))
        return whole
    except SolverTimeoutError:
        log.info("the time limit ran out before a conflict was named")
        return []


def infeasible_error(conflicts: Sequence[Statement]) -> InfeasiblePlacementError:
    """The error that lists the conflicting statements (one line when there is one)."""
    if len(conflicts) == 1:
        return InfeasiblePlacementError(f"no placement exists: {conflicts[0].text}", conflicts)
    listed = "\n  - ".join(c.text for c in conflicts)
    return InfeasiblePlacementError(f"no placement exists; these statements conflict:\n  - {listed}", conflicts)


def _each_component_alone(spec: PlacementSpec) -> list[PlacementSpec]:
    """One spec per component that owns its rule and relates to no other component: itself,
    without ``exclusive_with`` (which names others). Specs with only one such component give
    nothing new, so none is returned for them."""
    if len(spec.components) < 2:
        return []
    lone = [c for c in spec.components.values() if c.shares_rule_with is None and c.constraints.collocate_with is None]
    lone = [c for c in lone if not any(o.shares_rule_with == c.name for o in spec.components.values())]
    return [spec.with_rules({c.name: replace(c, constraints=replace(c.constraints, exclusive_with=()))}) for c in lone]


def _core(spec: PlacementSpec, options: SolverOptions, budget: Budget) -> list[Statement]:
    """A minimal conflicting set of the exact model's statements ([] if none was found)."""
    budget.check("explaining the conflict")
    check_build_fits(spec.requests, budget)
    ctx = build_model(spec, expand_all(spec.requests), explain=True, check=budget.check)
    if ctx.conflicts:
        return ctx.conflicts
    ctx.model.add_assumptions(list(ctx.statements.values()))
    one_worker = options.with_workers(1)
    solver, status = run_exact(ctx, one_worker, budget, **EXPLAIN_PARAMETERS)
    if status != cp_model.INFEASIBLE:
        return []
    named = {literal.index: statement for statement, literal in ctx.statements.items()}
    core = [named[index] for index in solver.sufficient_assumptions_for_infeasibility() if index in named]
    log.debug("assumption core: %d of %s, minimizing", len(core), counted(len(ctx.statements), "statement"))
    if not core:
        return [WHOLE_SPEC]
    return _minimize_core(ctx, core, one_worker, budget)


def _minimize_core(ctx: ModelContext, core: list[Statement], options: SolverOptions, budget: Budget) -> list[Statement]:
    """Drop every statement the conflict does not need: first halves, quarters, ... of it
    (many statements of a large core are usually irrelevant), then each one in turn.

    CP-SAT's set is sufficient, not minimal; a short core names only what the user must change.
    A run that ends without a verdict (budget spent) keeps what it tried to drop.
    """
    needed = list(core)
    chunk = len(needed) // 2
    while chunk >= 1 and budget.remaining() > 0:
        start = 0
        while start < len(needed) and budget.remaining() > 0:
            trial = needed[:start] + needed[start + chunk:]
            if trial and _still_infeasible(ctx, trial, options, budget):
                needed = trial
            else:
                start += chunk
        chunk //= 2
    return needed


def _still_infeasible(ctx: ModelContext, statements: list[Statement], options: SolverOptions, budget: Budget) -> bool:
    ctx.model.clear_assumptions()
    ctx.model.add_assumptions([ctx.statements[s] for s in statements])
    return run_exact(ctx, options, budget)[1] == cp_model.INFEASIBLE
