import numpy as np
import pytest

from solver_placement.errors import PlacementConfigError, PlacementSyntaxError
from solver_placement.cluster.ranks import MAX_RANK, RankRange, parse_range, parse_rank_list


@pytest.mark.parametrize(
    ("text", "expected"), [("0", (0, 0)), ("3-5", (3, 5)), (" 2 - 7 ", (2, 7)), ("0-0", (0, 0))]
)
def test_parse_range(text: str, expected: tuple[int, int]) -> None:
    assert parse_range(text, "ranks", "x") == RankRange(*expected)


@pytest.mark.parametrize("text", ["", "-1", "a-b", "1-2-3", "0--3", "1.5", "٣", "0x3"])
def test_parse_range_rejects_bad_syntax(text: str) -> None:
    with pytest.raises(PlacementSyntaxError, match="not a rank range"):
        parse_range(text, "ranks", "actor")


def test_backwards_range_is_rejected() -> None:
    with pytest.raises(PlacementSyntaxError, match='"5-3" runs backwards'):
        parse_range("5-3", "ranks", "actor")


def test_absurd_range_is_rejected_before_allocation() -> None:
    with pytest.raises(PlacementConfigError, match=str(MAX_RANK)):
        parse_range("0-999999999", "ranks", "actor")


@pytest.mark.parametrize(
    ("value", "expected"),
    [("0-3,5", [0, 1, 2, 3, 5]), (2, [2]), ([0, 2], [0, 2]), (["0-1", 3], [0, 1, 3]), ("all", list(range(6)))],
)
def test_parse_rank_list(value: object, expected: list[int]) -> None:
    assert parse_rank_list(value, "node_ranks", "g", available=6).tolist() == expected


def test_rank_list_rejects_duplicates_and_out_of_range() -> None:
    with pytest.raises(PlacementConfigError, match="more than once"):
        parse_rank_list("0-3,2", "node_ranks", "g", available=8)
    with pytest.raises(PlacementConfigError, match='"4-5" is out of range; valid ranks are 0-3'):
        parse_rank_list("0,4-5", "node_ranks", "g", available=4)


@pytest.mark.parametrize("value", [True, 1.5, None, {"a": 1}])
def test_rank_list_rejects_wrong_types(value: object) -> None:
    with pytest.raises(PlacementConfigError):
        parse_rank_list(value, "node_ranks", "g", available=4)


def test_all_needs_known_ranks() -> None:
    with pytest.raises(PlacementSyntaxError, match="cannot be \"all\""):
        parse_rank_list("ALL", "node_ranks", "g")


def test_range_to_array() -> None:
    assert np.array_equal(RankRange(2, 4).to_array(), [2, 3, 4]) and len(RankRange(2, 4)) == 3
