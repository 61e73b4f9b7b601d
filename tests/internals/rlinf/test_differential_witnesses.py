"""Each documented difference of the differential tests shown on one hand-made case, and the
spellings RLinf accepts with what we decided for each (the generated run only counts them)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from rlinf_builders import rlinf_cluster
from rlinf_cases import Case
from rlinf_differences import DIFFERENCE_NAMES, DIFFERENCES, compare, quiet, rl, run

import solver_placement as ours_api


def _case(gpus: tuple[int, ...], kind: str = "components", args: tuple = (), isolate: bool = True, **section: Any) -> Case:
    return Case({"num_nodes": len(gpus), "component_placement": {}, **section}, gpus, kind, args, isolate)


TWO_GROUPS = [{"label": "a", "node_ranks": 1}, {"label": "b", "node_ranks": 0}]
#: One hand-made case per documented difference, so each one is shown to exist (the generated run
#: counts how often they occur).
WITNESSES = {
    "flexible_over_node_groups": _case((0,), "flexible", ([[0]], None)),
    "no_gpu_local_accelerator_rank": _case((2,), component_placement={"env": {"node_group": "node", "placement": "0"}}),
    "isolate_false_local_accelerator_rank": _case((2,), isolate=False, component_placement={"actor": "0-1"}),
    "placements_must_be_sorted_by_node": _case(
        (1, 1), node_groups=TWO_GROUPS, component_placement={"actor": {"node_group": "a,b", "placement": "0-1"}}
    ),
    "process_ranks_start_anywhere": _case((2,), component_placement={"actor": "0-1:1-2"}),
    "mixed_node_and_hardware_groups": _case(
        (0, 2),
        node_groups=[{"label": "cpu", "node_ranks": 0, "ignore_hardware": True}, {"label": "gpu", "node_ranks": 1}],
        component_placement={"agent": {"node_group": "cpu,gpu", "placement": "0-1"}},
    ),
    "packed_bogus_local_ranks": _case((3, 3), "packed", (2, 5, 2, 1, None)),
    "same_gpu_twice_in_a_process": _case((1,), "flexible", ([[0, 1]], ["a", "cluster"]), node_groups=[{"label": "a", "node_ranks": 0}]),
    "node_group_yaml_list": _case(
        (1, 1), node_groups=TWO_GROUPS[::-1], component_placement={"actor": {"node_group": ["b", "a"], "placement": "0-1"}}
    ),
    "node_ranks_yaml_list": _case((1, 1), node_groups=[{"label": "a", "node_ranks": [0, 1]}]),
    "packed_revisits_node": _case(
        (1, 1), "packed", (0, 2, 1, 1, ["a", "b"]), node_groups=[{"label": "a", "node_ranks": "0-1"}, {"label": "b", "node_ranks": 0}]
    ),
}


@pytest.mark.parametrize("name", [difference.name for difference in DIFFERENCES])
def test_each_documented_difference_occurs(name: str) -> None:
    tally: Counter = Counter()
    compare(WITNESSES[name], tally)
    assert tally["differed"] == 1 and [n for n in DIFFERENCE_NAMES if tally[n]] == [name]


#: Spellings RLinf accepts, and what we decided (docs/rlinf.md, "Differences from RLinf"): the
#: placement text, whether RLinf places it, whether we do.
SPELLINGS = [
    ("0-1,,2-3,", True, True),  # stray commas: empty segments skipped, as RLinf does
    (" 0 - 1 , 2-3 ", True, True),  # blanks around ranks and segments
    (" , ", False, False),  # nothing but commas names no ranks (both refuse)
    ("+0-1", True, False),  # int("+0") is 0 for RLinf; a sign in a rank is a slip here
    ("0-1_0", True, False),  # int("1_0") is 10 for RLinf; refused here
]


@pytest.mark.parametrize(("text", "rlinf_places", "we_place"), SPELLINGS)
def test_spelling_decisions(text: str, rlinf_places: bool, we_place: bool) -> None:
    case = _case((16,), component_placement={"actor": text})
    with quiet():
        cluster = rlinf_cluster(rl, case.section, case.gpus)
        theirs, mine = run(case, rl, cluster), run(case, ours_api, cluster)
    assert (theirs.error is None, mine.error is None) == (rlinf_places, we_place), (theirs.error, mine.error)
    if rlinf_places and we_place:
        assert mine.results == theirs.results


def test_an_empty_component_name_is_refused() -> None:
    """RLinf reads the key "actor," as components "actor" and "" (sharing one placement); a
    component without a name is a slip, so it is refused here."""
    case = _case((2,), component_placement={"actor,": "0-1"})
    with quiet():
        cluster = rlinf_cluster(rl, case.section, case.gpus)
        theirs, mine = run(case, rl, cluster), run(case, ours_api, cluster)
    assert theirs.error is None and theirs.components == ["actor", ""]
    assert "empty component name" in str(mine.error)
