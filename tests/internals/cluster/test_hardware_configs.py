"""Hardware configs (``node_groups[*].hardware.configs``, one per robot) are read in time
proportional to their number: duplicates are found by a fingerprint that agrees with the JSON
text they were always compared by, and the node each names is looked up, not searched for."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver_placement import Cluster, PlacementConfigError

#: Values JSON tells apart though Python calls them equal (1, 1.0, true; 0.0, -0.0), a NaN (equal
#: to itself as JSON text), and containers, which take the JSON path.
VALUES = [1, 1.0, True, 0, 0.0, -0.0, False, math.nan, math.inf, "1", "nan", None, 2**70, [1], [1.0], {"a": 1}, {"a": True}]


def robots(*configs: dict[str, Any]) -> Cluster:
    return Cluster(num_nodes=2, num_gpus_per_node=0, node_groups=[{"label": "arms", "node_ranks": "0-1", "hardware": {"type": "robot", "configs": list(configs)}}])


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(VALUES), st.sampled_from(VALUES), st.sampled_from(["ip", "serial"]), st.sampled_from(["ip", "serial"]))
def test_two_configs_are_duplicates_exactly_when_their_json_text_is_equal(first: Any, second: Any, key: str, other_key: str) -> None:
    a, b = {"node_rank": 0, key: first}, {"node_rank": 0, other_key: second}
    if json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True):
        with pytest.raises(PlacementConfigError, match=r"node group 'arms': hardware.configs\[1\] duplicates an earlier config"):
            robots(a, b)
    else:
        assert [items.metadata(i) for items in [robots(a, b).layout.groups[0].items] for i in range(len(items))] == [{key: first}, {other_key: second}]


def test_a_config_on_a_node_outside_the_group_is_named_by_its_position() -> None:
    with pytest.raises(PlacementConfigError, match=r"node group 'arms': hardware.configs\[2\] names node_rank 5, which is not in the group's node_ranks"):
        robots({"node_rank": 0}, {"node_rank": 1}, {"node_rank": 5})
