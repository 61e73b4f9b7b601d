"""The answer loop verifies every answer before it leaves: a path's answer that breaks a rule is
caught and named (first fit's is noted and not used), and each path's answer goes through the
independent verifier exactly when the loop returns it."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest
from flat_model import counts_kept_out

from solver_placement import Cluster, PlacementSpec, VerificationError, solve, verify
from solver_placement._solver import loop
from solver_placement._solver.answer import Answer, Declined, PathName
from solver_placement._solver.options import SolveStatus
from solver_placement._solver.solution import Method

#: The module of the paths (``solver_placement._solver.solve`` the attribute is the function).
solve_module = importlib.import_module("solver_placement._solver.solve")
#: Two declarative components that may not share a GPU: the count model answers it exactly.
APART = {"a": {"processes": 4}, "b": {"processes": 4, "exclusive_with": ["a"]}}
#: A rank string with ``memory_gb`` and a component kept off it: with the count model kept out
#: (``counts_kept_out``), first fit's placement meets the counting bound.
WEIGHED = {"a": {"placement": "0-3", "memory_gb": 10}, "b": {"processes": 4, "exclusive_with": ["a"]}}
#: Contiguity weighed as a term: no counting bound is used, so with the count model kept out
#: (``counts_kept_out``) the search (the exact model) answers.
SEARCHED = {"contiguity": 1}


def poisoned(answer: Answer | Declined) -> Answer | Declined:
    """``answer`` with ``b`` on exactly ``a``'s GPUs: a layout that breaks ``exclusive_with``."""
    if isinstance(answer, Declined):
        return answer
    return replace(answer, assignments={**answer.assignments, "b": answer.assignments["a"]})


def poison(monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    """Make ``solve.py``'s path ``path`` answer a poisoned layout (the loop reads the paths anew on every call)."""
    real: Callable[..., Any] = getattr(solve_module, path)
    monkeypatch.setattr(solve_module, path, lambda *args: poisoned(real(*args)))


def spec_of(placement: dict[str, Any]) -> PlacementSpec:
    return PlacementSpec.build(Cluster(2, 8), placement)


@pytest.mark.parametrize(
    ("path", "placement", "objective", "name"),
    [
        ("_count_answer", APART, None, PathName.COUNTS),
        ("_exact_answer", APART, SEARCHED, PathName.EXACT),
    ],
)
def test_a_poisoned_answer_of_a_model_is_a_verification_error_naming_its_path(
    path: str, placement: dict[str, Any], objective: dict[str, int] | None, name: PathName, monkeypatch: pytest.MonkeyPatch
) -> None:
    if objective is SEARCHED:
        counts_kept_out(monkeypatch)
    poison(monkeypatch, path)
    with pytest.raises(VerificationError, match=f"^{name}'s answer breaks a rule of the spec") as caught:
        solve(spec_of(placement), objective=objective)
    assert any("exclusive_with" in violation for violation in caught.value.violations)


def test_a_poisoned_first_fit_placement_is_noted_and_the_search_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    counts_kept_out(monkeypatch)
    clean = solve(spec_of(WEIGHED))
    assert (clean.method, clean.status) == (Method.FIRST_FIT, SolveStatus.OPTIMAL)
    poison(monkeypatch, "_first_fit_answer")
    solution = solve(spec_of(WEIGHED))
    assert solution.method == Method.SEARCH and solution.status == SolveStatus.OPTIMAL
    assert solution.notes == (
        "the count model (declined: kept out by the test)",
        "first fit (its placement breaks a rule the construction does not model)",
        "the exact model (optimal): one boolean per process and candidate GPU, started from first fit's placement",
    )
    verify(solution.spec, solution.placements_by_component())


@pytest.fixture
def verified(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """Every layout the loop hands the verifier, in order."""
    seen: list[dict[str, Any]] = []

    def counting(spec: PlacementSpec, placements: dict[str, Any]) -> None:
        seen.append(placements)
        verify(spec, placements)

    monkeypatch.setattr(loop, "verify", counting)
    yield seen


@pytest.mark.parametrize(
    ("placement", "objective", "method"),
    [
        (APART, None, Method.COUNTS),
        (WEIGHED, None, Method.FIRST_FIT),
        (APART, SEARCHED, Method.SEARCH),  # the exact model
    ],
)
def test_every_paths_answer_is_verified_once_and_is_what_leaves(
    placement: dict[str, Any],
    objective: dict[str, int] | None,
    method: Method,
    verified: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if objective is SEARCHED or placement is WEIGHED:
        counts_kept_out(monkeypatch)
    solution = solve(spec_of(placement), objective=objective)
    assert solution.method == method
    # without a count answer, first fit's placement is verified before the search: a placement
    # the verifier accepts proves the spec feasible, so the counting bounds are not asked
    assert len(verified) == (2 if method == Method.SEARCH else 1)
    assert verified[-1] == solution.placements_by_component()


def test_status_and_method_are_enums_that_read_as_their_text() -> None:
    solution = solve(spec_of(APART))
    assert solution.status is SolveStatus.OPTIMAL and solution.method is Method.COUNTS
    assert (solution.status, solution.method, f"{solution.method}: {solution.status}") == ("OPTIMAL", "counts", "counts: OPTIMAL")


def test_a_restated_solution_keeps_the_records_already_made() -> None:
    """First fit's placement is verified before it is chosen; the answer restates it with its
    status and bound and hands out the records the verifier read, not a second making of them."""
    checked = solve(spec_of(APART))
    records = checked.placement_records()
    answer = checked.restated(SolveStatus.FEASIBLE, 7.0, 5.0, {"parse": 0.1}, ("a note",))
    assert (answer.status, answer.objective, answer.bound, answer.notes) == (SolveStatus.FEASIBLE, 7.0, 5.0, ("a note",))
    assert all(answer.placement_records()[name] is made for name, made in records.items())
    assert answer.placements_by_component() == checked.placements_by_component()
