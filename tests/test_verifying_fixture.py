"""The fixture that verifies every Solution a test builds (``conftest.py``, ``solution_check.py``)
finds a wrong answer, skips answers beyond the fast tier's budget, and does not hold against a test
the candidates the library checked, refused and replaced itself."""

from __future__ import annotations

import pytest
from solution_check import BUILT, REFUSED, distinct, failures, refused_records

from solver_placement import InfeasiblePlacementError, Solution, VerificationError, solve, verify


def _one_node(placement: dict[str, object]) -> dict[str, object]:
    """A config of one 4-GPU node with this component_placement."""
    return {"cluster": {"num_nodes": 1, "num_gpus_per_node": 4, "component_placement": placement}}


@pytest.mark.unverified_solutions  # the point is a wrong answer
def test_a_wrong_answer_is_found_and_a_large_one_left_to_the_slow_tier() -> None:
    right = solve(_one_node({"a": "0-1"}))
    elsewhere = solve(_one_node({"a": "2-3"}))
    wrong = Solution(right.spec, right.requests, elsewhere.assignments, right.status, right.objective)  # "0-1" written, GPUs 2-3 held
    assert BUILT[-3:] == [right, elsewhere, wrong]
    found = failures(distinct([right, wrong, wrong]), set(), None)
    assert len(found) == 1 and "a rank 0: holds [2], the placement string gives [0]" in found[0], found
    assert failures([wrong], set(), 1) == []  # 2 processes over a budget of 1: the slow tier's


def test_a_candidate_the_library_refused_is_not_held_against_the_test() -> None:
    """Pairs at stride 3 cannot cover GPUs 0-3 evenly: first fit builds a candidate that breaks the window
    rule, the library's own verify refuses it, and the answer is that no placement exists."""
    with pytest.raises(InfeasiblePlacementError):
        solve(_one_node({"r": {"resources": "0-3", "hardware_per_process": 2, "stride": 3}}))
    built = distinct(BUILT)
    refused = [s for s in built if _refused(s)]
    assert refused and REFUSED, "the library no longer checks first fit through a Solution: revisit solution_check.REFUSED"
    assert failures(built, refused_records(REFUSED), None) == []


def _refused(solution: Solution) -> bool:
    """Whether ``verify`` refuses this Solution's placements."""
    try:
        verify(solution.spec, solution.placements_by_component())
    except VerificationError:
        return True
    return False
