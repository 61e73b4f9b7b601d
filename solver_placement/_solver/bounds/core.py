"""The fewest statements a guarded model cannot satisfy together, one component's own first.

A *guarded* model has one literal per user statement, enforcing that statement's constraints
(the counting model). CP-SAT names a set of literals that
is infeasible on its own; deleting each statement in turn and re-solving shrinks it to a
minimal one. Before that, each component is tried with only its own statements, so when a
component is impossible by itself the answer blames it alone, not whatever shares its nodes.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ortools.sat.python import cp_model

from solver_placement._errors import Statement
from solver_placement._solver.options import Budget, SolverOptions, Status, solve_model

#: Seconds one run may take: the models are small, so a longer run means "no proof".
RUN_LIMIT_S = 2.0
#: Up to this many statements the core is shrunk from all of them, not from CP-SAT's set, so
#: which of several minimal cores is named follows the deletion order alone.
SHRINK_ALL_UP_TO = 60
#: One worker and a fixed seed: the named statements must not depend on the machine.
CORE_OPTIONS = SolverOptions(time_limit_s=RUN_LIMIT_S, num_workers=1, seed=0)
#: With assumptions CP-SAT skips most presolve; without the LP's guidance its default search
#: can spend seconds on a tiny but loose count (a free component of thousands of GPUs).
CORE_PARAMETERS = {"linearization_level": 2}
#: The first run, all statements assumed, looks for an answer without presolve and within this
#: much of CP-SAT's deterministic work (the same on any machine); where it finds none, the run
#: with ``CORE_PARAMETERS`` decides as before. Why: almost every spec holds, and that run's
#: presolve was most of its work: the 12 counting models of the ``other hardware`` benchmark
#: (up to 1,433 variables) took 2.3-99 ms of CPU each, 1.3-73 ms without it (331 nodes:
#: 44 -> 12 ms), their work at most 0.0113 of this limit. A spec that does not hold pays that
#: run first, a fraction of a millisecond on the ``infeasible`` benchmark's (0.2-2.9 ms). Each
#: trial of the shrink runs it first too: most trials hold (the statement dropped was needed),
#: and the full run took 5-6 ms for each on 3 nodes (``infeasible:3:98``: 19 runs, 0.14 ->
#: 0.08 s; the family's p95 over 40 cases 0.05 / 0.05 / 0.09 -> 0.03 / 0.02 / 0.06 s by size).
FEASIBLE_FIRST = {**CORE_PARAMETERS, "cp_model_presolve": False, "max_deterministic_time": 0.05}
#: The runs tried in turn on one set of statements, until one decides (an answer, or a proof
#: of none): each proof is as good as any other, so a proof of none by the first run is not
#: run again in full (9 ms of ``infeasible:7:15``'s 0.05 s). Tried and left out: a first run
#: at CP-SAT's default linear relaxation (level 1), 3-5 times cheaper on small models that it
#: decides, but undecided on the loose counts level 2 is for (``infeasible:769:11``), so the
#: family's 60 cases at seeds 0, 60 and 240 took 0.76 s in all against 0.70 s without it.
TIERS = (FEASIBLE_FIRST, CORE_PARAMETERS)


@dataclass(frozen=True)
class Guarded:
    """A model whose statements are literals. ``needs`` are the components' own statements in
    config order, ``singles`` the statements of each component alone (tried first)."""

    model: cp_model.CpModel
    literal: Mapping[Statement, cp_model.IntVar]
    needs: Sequence[Statement]
    singles: Sequence[Sequence[Statement]]


def minimal_core(guarded: Guarded, budget: Budget) -> list[Statement] | None:
    """A minimal set of statements that cannot hold together, or None if the model finds none
    (or could not tell within ``RUN_LIMIT_S`` per run).

    Every subset of statements that hold together holds too, so one run with all of them answers
    a spec that fits, and one with every component's own statements rules out all the
    components at once: a spec of 150 components used to pay 150 runs (3 s) before any answer.
    """
    everything = list(guarded.literal)
    solver, status = _decided(guarded, everything, budget)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    own_statements = [statement for own in guarded.singles for statement in own]
    if len(guarded.singles) == 1 or not _holds(guarded, own_statements, budget):
        for own in guarded.singles:
            if _infeasible(guarded, own, budget):
                return _shrink(guarded, own, budget)
    if status != cp_model.INFEASIBLE:
        return None
    if len(everything) <= SHRINK_ALL_UP_TO:  # deleting in a fixed order picks the same core every time
        return _shrink(guarded, everything, budget)
    by_index = {literal.index: text for text, literal in guarded.literal.items()}
    blamed = {by_index[i] for i in solver.sufficient_assumptions_for_infeasibility() if i in by_index}
    return _shrink(guarded, [s for s in everything if s in blamed] or everything, budget)


def _shrink(guarded: Guarded, core: Sequence[Statement], budget: Budget) -> list[Statement]:
    """Drop every statement the conflict does not need; relations are tried before needs, and
    later components before earlier ones, so a conflict keeps the components' own statements
    (the first components' where there is a choice) and only the relations it cannot do without."""
    order = [s for s in core if s not in guarded.needs] + [s for s in reversed(guarded.needs) if s in core]
    kept = list(core)
    for statement in order:
        trial = [s for s in kept if s != statement]
        if trial and _infeasible(guarded, trial, budget):
            kept = trial
    return kept


def _infeasible(guarded: Guarded, statements: Sequence[Statement], budget: Budget) -> bool:
    """Proven infeasible (most trials of a shrink hold, which the light run of ``TIERS`` finds in
    a fraction of the full run's time)."""
    return _decided(guarded, statements, budget)[1] == cp_model.INFEASIBLE


def _holds(guarded: Guarded, statements: Sequence[Statement], budget: Budget) -> bool:
    """Proven to hold together (not merely "not proven infeasible" within ``RUN_LIMIT_S``)."""
    return _decided(guarded, statements, budget)[1] in (cp_model.OPTIMAL, cp_model.FEASIBLE)


def _decided(guarded: Guarded, statements: Sequence[Statement], budget: Budget) -> tuple[cp_model.CpSolver, Status]:
    """The first of the runs of ``TIERS`` that decides ``statements`` (the last one's status
    where none does: no proof within ``RUN_LIMIT_S``)."""
    for parameters in TIERS:
        solver, status = _run(guarded, statements, budget, parameters)
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.INFEASIBLE):
            break
    return solver, status


def _run(guarded: Guarded, statements: Sequence[Statement], budget: Budget, parameters: Mapping[str, object] = CORE_PARAMETERS) -> tuple[cp_model.CpSolver, Status]:
    """One run with exactly ``statements`` assumed, at most ``RUN_LIMIT_S`` of the budget
    (``parameters``: CP-SAT's, ``CORE_PARAMETERS`` unless the first run's)."""
    budget.check("naming the conflicting statements")
    model = guarded.model
    model.clear_assumptions()
    model.add_assumptions([guarded.literal[s] for s in statements])
    short = Budget(min(budget.deadline, time.perf_counter() + RUN_LIMIT_S), budget.limit_s)
    return solve_model(model, CORE_OPTIONS, short, **parameters)
