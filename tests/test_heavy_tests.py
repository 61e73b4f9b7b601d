"""The fast tier's list of heavy tests: read from pytest's durations report, phases added up."""

from __future__ import annotations

from conftest import HEAVY
from heavy_tests import heavy

REPORT = [
    "============================= slowest durations =============================",
    "0.12s call     tests/a.py::test_one[x y]",
    "0.05s setup    tests/a.py::test_one[x y]",
    "0.20s call     tests/b.py::test_two",
    "0.14s call     tests/b.py::test_three",
    "(12 durations < 0.005s hidden.  Use -vv to show these durations.)",
]


def test_a_test_is_heavy_by_its_phases_together_and_ids_keep_their_spaces() -> None:
    assert heavy(REPORT, 0.15) == ["tests/a.py::test_one[x y]", "tests/b.py::test_two"]
    assert heavy(REPORT, 0.2) == []


def test_the_list_names_tests_and_no_comment() -> None:
    assert HEAVY and all(node.startswith("tests/") and "::" in node for node in HEAVY)
