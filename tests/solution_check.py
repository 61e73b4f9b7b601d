"""What ``conftest.py``'s ``verify_solutions`` fixture checks, apart from pytest so a test can run it:
the Solutions built during a test, the placements the library itself refused, and the check.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from solver_placement import Placement, Solution, VerificationError, verify

#: The fast tier verifies a test's Solutions, in the order built, while their processes add up to
#: at most this many (about a second of the verifier's plain Python); the others, from the tests
#: of scale, are verified in the slow tier (CI), where every Solution is.
FAST_TIER_PROCESSES = 50_000
#: Every Solution built since the last test ended, in the order they were built.
BUILT: list[Solution] = []
#: The placements the library's own calls of ``verify`` refused since the last test ended (first
#: fit's candidate, checked before it may be the answer): the library discarded those answers.
REFUSED: list[Mapping[str, Sequence[Placement]]] = []


def distinct(solutions: Iterable[Solution]) -> list[Solution]:
    """One Solution per (spec, assignments): ``dataclasses.replace`` copies (new notes, timings)
    hold the same placements and need no second check."""
    found: dict[tuple[int, ...], Solution] = {}
    for solution in solutions:
        found.setdefault((id(solution.spec), *(id(a) for a in solution.assignments.values())), solution)
    return list(found.values())


def processes(solution: Solution) -> int:
    """How many processes the verifier would read: its cost grows with them."""
    return sum(assignment.num_processes for assignment in solution.assignments.values())


def refused_records(refused: Iterable[Mapping[str, Sequence[Placement]]]) -> set[int]:
    """The ids of every record the library refused; valid while ``refused`` holds them alive."""
    return {id(p) for placements in refused for records in placements.values() for p in records}


def failures(solutions: Iterable[Solution], refused: set[int], budget: int | None) -> list[str]:
    """What ``verify`` says of each Solution, skipping those whose records the library refused
    itself and, once ``budget`` processes were read (None: no budget), the rest."""
    found = []
    for solution in solutions:
        if budget is not None:
            if processes(solution) > budget:
                continue
            budget -= processes(solution)
        placements = solution.placements_by_component()  # built once per Solution: the very records the library checked
        if any(id(p) in refused for records in placements.values() for p in records):
            continue  # the library verified this candidate itself, refused it and answered otherwise
        try:
            verify(solution.spec, placements)
        except VerificationError as error:
            found.append(f"{solution.components} ({solution.method}, {solution.status}): {error}")
    return found
