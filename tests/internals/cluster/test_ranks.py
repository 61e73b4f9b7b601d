import numpy as np
import pytest

from solver_placement._cluster.ranks import MAX_RANK, RankRange, parse_range, parse_rank_list
from solver_placement._errors import PlacementConfigError, PlacementSyntaxError


@pytest.mark.parametrize(
    ("text", "expected"), [("0", (0, 0)), ("3-5", (3, 5)), (" 2 - 7 ", (2, 7)), ("0-0", (0, 0))]
)
def test_parse_range(text: str, expected: tuple[int, int]) -> None:
    assert parse_range(text, "ranks", "x") == RankRange(*expected)


@pytest.mark.parametrize("text", ["", "-1", "a-b", "1-2-3", "0--3", "1.5", "٣", "0x3", "+1", "1_0"])
def test_parse_range_rejects_bad_syntax(text: str) -> None:
    """RLinf's int() would take "+1", "1_0" and "٣"; they look like slips, so they are refused."""
    with pytest.raises(PlacementSyntaxError, match="not a rank range") as caught:
        parse_range(text, "ranks", "actor")
    assert "(Invalid rank format)" in str(caught.value)  # RLinf's phrase for the rule


def test_backwards_range_is_rejected() -> None:
    with pytest.raises(PlacementSyntaxError, match='"5-3" runs backwards') as caught:
        parse_range("5-3", "ranks", "actor")
    assert "Start rank 5 must be less than or equal to end rank 3" in str(caught.value)


def test_absurd_range_is_rejected_before_allocation() -> None:
    with pytest.raises(PlacementConfigError, match=str(MAX_RANK)):
        parse_range("0-999999999", "ranks", "actor")


@pytest.mark.parametrize(
    ("value", "expected"),
    [("0-3,5", [0, 1, 2, 3, 5]), (2, [2]), ([0, 2], [0, 2]), (["0-1", 3], [0, 1, 3]), ("all", list(range(6)))],
)
def test_parse_rank_list(value: object, expected: list[int]) -> None:
    assert parse_rank_list(value, "node_ranks", "g", available=6).tolist() == expected


def test_rank_list_is_a_set_like_rlinfs() -> None:
    """RLinf's parse_rank_config merges overlapping pieces and skips empty ones; so does a rank list."""
    assert parse_rank_list("0-3,2", "node_ranks", "g", available=8).tolist() == [0, 1, 2, 3]
    assert parse_rank_list(" 0-1 ,, 3 ,", "node_ranks", "g", available=8).tolist() == [0, 1, 3]
    assert parse_rank_list([3, "0-1", 1], "node_ranks", "g").tolist() == [0, 1, 3]


def test_rank_list_rejects_out_of_range_and_empty() -> None:
    with pytest.raises(PlacementConfigError, match='"4-5" is out of range; valid ranks are 0-3') as caught:
        parse_rank_list("0,4-5", "node_ranks", "g", available=4)
    assert "must be within the available ranks" in str(caught.value)
    with pytest.raises(PlacementConfigError, match="selects no ranks"):
        parse_rank_list(" , ", "node_ranks", "g", available=4)


@pytest.mark.parametrize("value", [True, 1.5, None, {"a": 1}])
def test_rank_list_rejects_wrong_types(value: object) -> None:
    with pytest.raises(PlacementConfigError):
        parse_rank_list(value, "node_ranks", "g", available=4)


def test_all_needs_known_ranks() -> None:
    with pytest.raises(PlacementSyntaxError, match="cannot be \"all\""):
        parse_rank_list("ALL", "node_ranks", "g")


def test_range_to_array() -> None:
    assert np.array_equal(RankRange(2, 4).to_array(), [2, 3, 4]) and len(RankRange(2, 4)) == 3
