"""The answer loop: the solver's paths tried in order, the best answer kept, every answer verified.

The order and its rules: the count model first (exact by construction, with its share of the
time limit); when it proves its answer optimal, that is the answer. Otherwise first fit builds a
placement in milliseconds. When neither has a placement the verifier accepts, the counting
bounds may refuse the spec (``Paths.refuse``) before any search: a placement proves the spec
feasible, so a spec either path places pays nothing for them (they took 16% of the benchmark's
default run, and up to 0.09 s of 0.14 on ``other hardware:107:1``, when they ran first for
every spec, and a call whose count model ran out of its share had too little time left to
count and then place by first fit), while one neither places is refused as before, after their
few milliseconds (at most 0.04 s over the ``infeasible`` family's 20 cases on 2-1,024 nodes).
Without a count answer, a first-fit placement that meets the counting bound (or comes within
``ACCEPTED_GAP`` of it) is the answer with no search. Then the flat exact model, started from
first fit's placement; first fit's is kept when it is better, or when the search runs out of
time.

Every answer goes through the independent verifier (``_verify``) before it leaves. An answer of
the count model or the exact model that the verifier rejects is a bug of the
library: :class:`VerificationError` names the path. First fit's construction does not model every
rule, so a placement of its that the verifier rejects is noted and not used.

The notes of every answer say which path answered and how: the count model's names the exact
model that counted it and why that one (``Answer.model``), first fit's why no search followed or
why it was kept, the exact model's what it is; before them, why a path before it declined.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from solver_placement._errors import InternalError, SolverTimeoutError, VerificationError, with_context
from solver_placement._solver.answer import Answer, Declined, PathName
from solver_placement._solver.bounds.objective import objective_lower_bound
from solver_placement._solver.call import SolveCall, log
from solver_placement._solver.options import SolveStatus
from solver_placement._solver.solution import Method, Solution
from solver_placement._verify import verify

#: A first-fit placement within this fraction of the counting bound is the answer when the
#: count model declines: the flat model rarely improves it within a person's wait, and the
#: answer says its gap.
ACCEPTED_GAP = 0.01


@dataclass(frozen=True)
class Paths:
    """The solver's paths, in the order the loop tries them. Each returns an :class:`Answer` or
    a :class:`Declined`, except the exact model, the last resort, which answers or raises; it
    takes first fit's answer (its hint) and the paths tried before it (for a timeout's message).
    ``refuse`` raises when counting alone proves the spec infeasible; the loop calls it only
    when neither the count model nor first fit has a placement."""

    counts: Callable[[SolveCall], Answer | Declined]
    refuse: Callable[[SolveCall], None]
    first_fit: Callable[[SolveCall], Answer | Declined]
    exact: Callable[[SolveCall, Answer | None, list[str]], Answer]


def answer_loop(call: SolveCall, paths: Paths, timings: dict[str, float]) -> Solution:
    """The best verified answer of ``paths`` for ``call`` (``timings``: the stages before the
    loop, carried by every answer with the call's clock)."""
    path = paths.counts(call)
    counted = _from_counts(call, path, timings)
    if counted is not None and counted.status == SolveStatus.OPTIMAL:
        return counted
    built = paths.first_fit(call)
    first = _FirstFit(call, built if isinstance(built, Answer) else None, timings)
    if counted is None and not first.holds():  # no placement proves the spec feasible: counting may refuse it
        paths.refuse(call)
    bound = None if call.held_before or call.weighs_contiguity else objective_lower_bound(call.spec, call.weights)
    if bound is not None and isinstance(path, Declined) and path.bound is not None:  # what the count model proved before it declined
        bound = max(bound, path.bound)
    if counted is None and first.answer is not None and bound is not None:
        for gap in (0.0, ACCEPTED_GAP):  # meets the counting bound: proven best; within the accepted gap: no search
            why = f"is within {gap:.0%} of the counting bound {bound:,}: no search" if gap else f"meets the counting bound {bound:,}: proven optimal"
            if first.answer.known("primary") <= (1 + gap) * bound and (close := first.solution(bound, against_bound=True, why=why)) is not None:
                log.info("first fit's placement %s the counting bound %d: no search", f"is within {gap:.0%} of" if gap else "meets", bound)
                return close
    try:
        found = counted or _search(call, paths, built, timings)
    except SolverTimeoutError as timeout:
        log.info("the search ran out of time; first fit's placement is the answer if there is one")
        return _better(first, None, timeout, bound, "is kept: the search found nothing better before the time limit")
    return _better(first, found)


def _from_counts(call: SolveCall, counted: Answer | Declined, timings: dict[str, float]) -> Solution | None:
    """The count model's verified answer, or None when it declined; either way its note (why it
    declined, or which model counted and whether it is proven) goes in the call's notes, which
    every later answer carries."""
    if isinstance(counted, Declined):
        log.info("the count model declined: %s", counted.reason)
        call.notes.append(f"{counted.path} (declined: {counted.reason})")
        return None
    proven = "optimal" if counted.status == SolveStatus.OPTIMAL else f"unproven: {counted.known('objective'):,}, its bound {counted.known('bound'):,}"
    call.notes.append(f"{counted.path} ({proven}): {'; then '.join(counted.model)}")
    return _accept(call, counted, timings, notes=tuple(call.notes))


def _search(call: SolveCall, paths: Paths, built: Answer | Declined, timings: dict[str, float]) -> Solution:
    """The exact model's verified answer, started from first fit's placement when there is one."""
    tried = [*call.notes, *([f"{built.path} ({built.reason})"] if isinstance(built, Declined) else [])]
    hint = built if isinstance(built, Answer) else None
    answer = paths.exact(call, hint, tried)
    start = "started from first fit's placement" if hint is not None else "with no placement to start from"
    return _accept(call, answer, timings, (*call.notes, f"{answer.path} ({answer.status.lower()}): one boolean per process and candidate GPU, {start}"))


def _accept(call: SolveCall, answer: Answer, timings: dict[str, float], notes: tuple[str, ...]) -> Solution:
    """``answer`` as a solution, once the independent verifier accepts it: a placement of the
    count model or the exact model that breaks a rule is the library's bug."""
    solution = _solution(call, answer, timings, notes)
    if call.verified_by_caller or answer.verified_for is call.spec:
        return solution  # part of the caller's answer, which it verifies whole; or verified by its path
    try:
        verify(call.spec, solution.placement_records())
    except VerificationError as error:
        raise with_context(error, f"{answer.path}'s answer breaks a rule of the spec (a bug of solver_placement)") from None
    return solution


def _solution(call: SolveCall, answer: Answer, timings: dict[str, float], notes: tuple[str, ...]) -> Solution:
    """A path's answer as a solution, its timings read now: the stages so far and the clock."""
    spec = call.spec
    return Solution(
        spec, spec.requests, answer.assignments, answer.status, answer.objective, {**timings, **call.clock},
        bound=answer.bound, method=answer.method, notes=notes,
    )  # fmt: skip


class _FirstFit:
    """First fit's placement as a candidate answer, verified once, the first time it is used or
    asked whether it holds: once the verifier rejects it, it is noted and never offered again (it
    stays the search's hint)."""

    def __init__(self, call: SolveCall, answer: Answer | None, timings: dict[str, float]) -> None:
        self.call = call
        self.answer = answer
        self.timings = timings
        self.verified: Solution | bool | None = None  # None until verified; then the solution checked (its records made), or False

    def holds(self) -> bool:
        """Whether there is a placement and the verifier accepts it."""
        if self.answer is None:
            return False
        if self.verified is None:
            spec = self.call.spec
            checked = Solution(spec, spec.requests, self.answer.assignments, SolveStatus.FEASIBLE, None, method=Method.FIRST_FIT)  # restated when chosen
            try:
                verify(self.call.spec, checked.placement_records())
                self.verified = checked
            except VerificationError:
                log.info("first fit's placement breaks a rule the construction does not model: not used")
                self.call.notes.append(f"{PathName.FIRST_FIT} (its placement breaks a rule the construction does not model)")
                self.verified = False
        return self.verified is not False

    def solution(self, bound: float | None, against_bound: bool, why: str) -> Solution | None:
        """The placement as the answer, proven optimal only when it meets ``bound``; None when
        there is none or the verifier rejects it. Against the counting bound (``against_bound``)
        it is measured without contiguity, a tie-break there. ``why`` it is the answer, for the
        notes."""
        if self.answer is None or not self.holds() or not isinstance(self.verified, Solution):
            return None
        value = self.answer.known("primary") if against_bound else self.answer.objective
        status = SolveStatus.OPTIMAL if bound is not None and value is not None and value <= bound else SolveStatus.FEASIBLE
        notes = (*self.call.notes, f"{PathName.FIRST_FIT} (its placement {why})")
        return self.verified.restated(status, value, bound, {**self.timings, **self.call.clock}, notes)  # its records as verified


def _better(first: _FirstFit, found: Solution | None, timeout: SolverTimeoutError | None = None, bound: int | None = None, why: str = "") -> Solution:
    """The better of the search's answer and first fit's (never worse than first fit, whose
    placement is used only once verified). Raises ``timeout`` when neither exists. ``bound`` is
    the counting bound on the weighted terms, when first fit is measured against it; ``why``
    first fit's is the answer when there is no other."""
    if first.answer is not None and (found is None or (found.objective or 0) > _comparable(found, first.answer, first.call.weighs_contiguity)):
        against = bound is not None if found is None else _without_contiguity(found, first.call.weighs_contiguity)  # a count answer's bound: on its scale
        reason = why if found is None else f"is better than {'the count model' if found.method == Method.COUNTS else 'the search'}'s"
        kept = first.solution(bound if found is None else found.bound, against_bound=against, why=reason)
        if kept is not None:
            if found is not None:
                log.info("first fit's placement (objective %d) is better than the search's (%s): kept", _comparable(found, first.answer, first.call.weighs_contiguity), found.objective)
            return kept
    if found is None:
        raise timeout or InternalError("no answer and no timeout")
    return found


def _comparable(found: Solution, first: Answer, weighs_contiguity: bool) -> int:
    """First fit's value on the found answer's scale (the count model leaves contiguity out,
    unless the call weighs it)."""
    return first.known("primary") if _without_contiguity(found, weighs_contiguity) else first.known("objective")


def _without_contiguity(found: Solution, weighs_contiguity: bool) -> bool:
    """Whether ``found`` is on the scale without contiguity (the count model's, unless the call
    weighs it), so first fit is held against it, and against its bound, by its ``primary``: a
    first fit at a count answer's bound is then proven (``topology:516:102``)."""
    return found.method == Method.COUNTS and not weighs_contiguity
