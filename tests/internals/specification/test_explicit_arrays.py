"""Explicit rank lists checked by arrays (``_specification/explicit.py``) read exactly as the
process-by-process reading does: on seeded random lists of one length or many, as lists and as
integer arrays, the same processes in the same order; anything odd is refused with the message
that names the process and the rule broken, whatever form it came in."""

from __future__ import annotations

import random

import numpy as np
import pytest
from helpers import config

from solver_placement import PlacementConfigError, PlacementSpec, solve
from solver_placement._cluster.ranks import MAX_RANK
from solver_placement._specification.explicit import parse_explicit


def read_one_by_one(value: list[list[int]]) -> list[list[int]]:
    """RLinf's documented reading, written out: ranks sorted within a process, processes ordered
    by their first rank, stably."""
    return sorted((sorted(ranks) for ranks in value), key=lambda ranks: ranks[0])


def as_lists(value: list[list[int]]) -> list[list[int]]:
    explicit = parse_explicit(value, "a")
    return [explicit.of(process) for process in range(explicit.num_processes)]


@pytest.mark.parametrize("seed", range(20))
def test_lists_and_arrays_read_as_the_loop_reads_them(seed: int) -> None:
    rng = random.Random(seed)
    width = rng.choice([1, 2, 3])
    value = [rng.sample(range(12), width if rng.random() < 0.7 else rng.randint(1, 3)) for _ in range(rng.randint(1, 9))]
    expected = read_one_by_one(value)
    assert as_lists(value) == expected, seed
    if len({len(ranks) for ranks in value}) == 1:  # a table: an array too, of either integer width
        for dtype in (np.int64, np.int32, np.uint16):
            explicit = parse_explicit(np.array(value, dtype=dtype), "a")
            assert [explicit.of(p) for p in range(explicit.num_processes)] == expected, (seed, dtype)
        assert parse_explicit(np.array(value), "a") == parse_explicit(value, "a")


def test_one_rank_per_process_as_a_flat_list_or_array() -> None:
    assert as_lists([3, 1, 2]) == [[1], [2], [3]]
    explicit = parse_explicit(np.array([3, 1, 2]), "a")
    assert explicit == parse_explicit([[3], [1], [2]], "a") and explicit.num_processes == 3


ODD = [
    ([[0, 1], [2, 2]], "process 1 lists a rank twice"),
    ([[0, -1]], "process 0 needs a non-empty list of non-negative integer ranks"),
    ([[True, 1]], "process 0 needs a non-empty list of non-negative integer ranks"),
    ([[]], "process 0 needs a non-empty list of non-negative integer ranks"),
    ([[0], [MAX_RANK + 1]], f"exceeds the largest supported rank {MAX_RANK}"),
    ([[0], [2**70]], "exceeds the largest supported rank"),
]


@pytest.mark.parametrize(("value", "message"), ODD, ids=[message.split(" (")[0] for _, message in ODD])
def test_odd_lists_and_arrays_name_the_process_and_the_rule(value: list[list[int]], message: str) -> None:
    with pytest.raises(PlacementConfigError, match=message.replace("(", r"\(")):
        parse_explicit(value, "a")
    if all(isinstance(rank, int) and not isinstance(rank, bool) and -(2**63) <= rank < 2**63 for ranks in value for rank in ranks) and value[0]:
        with pytest.raises(PlacementConfigError, match=message):
            parse_explicit(np.array(value, dtype=np.int64), "a")


@pytest.mark.parametrize("array", [np.array([[0.0, 1.0]]), np.array([[True, False]]), np.zeros((1, 1, 1), dtype=np.int64)], ids=["float", "bool", "3-d"])
def test_arrays_of_other_types_or_shapes_are_refused(array: np.ndarray) -> None:
    with pytest.raises(PlacementConfigError, match="component 'a': placement .*process 0"):
        parse_explicit(array, "a")


def test_an_array_placement_is_solved_like_its_lists() -> None:
    """``placement:`` given as an integer array (what a re-plan writes for its survivors) places
    the same processes on the same GPUs as the lists it holds."""
    lists = [[4, 5], [0, 1], [2, 3]]
    by_lists = solve(config(2, 4, {"a": {"placement": lists}}))
    spec = PlacementSpec.build(by_lists.cluster, {"a": {"placement": np.array(lists)}})
    by_array = solve(spec)
    assert [p.hardware_ranks for p in by_array.placements("a")] == [p.hardware_ranks for p in by_lists.placements("a")] == [[0, 1], [2, 3], [4, 5]]
    assert by_array.spec.components["a"].text == str(lists)
