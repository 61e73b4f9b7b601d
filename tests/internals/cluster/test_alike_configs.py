"""A group's alike hardware configs are read as columns (``alike_configs``), every other group's
one by one: both readings must give the same items, and a config the one-by-one reading refuses
must send the group to it, so each refusal keeps its message."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver_placement import Cluster, PlacementConfigError
from solver_placement._cluster.alike_configs import alike_configs
from solver_placement._cluster.layout import HardwareItems
from solver_placement._cluster.schema_groups import _items_one_by_one

WHERE = "node group 'arms'"
MEMBERS = frozenset({0, 1, 2})

#: Values a robot's config holds; ints and floats JSON tells apart, a NaN, a subclass of str.
VALUES = st.sampled_from([0, 1, 1.0, True, -0.0, 0.0, math.nan, "10.0.0.1", "10.0.0.2", None, [1], type("Ip", (str,), {})("x")])
#: node_rank values: on the group, off it, not ints.
RANKS = st.sampled_from([0, 1, 2, 5, True, 1.0, "1", None])
CONFIGS = st.lists(
    st.one_of(
        st.fixed_dictionaries({"node_rank": RANKS, "ip": VALUES}),
        st.fixed_dictionaries({"ip": VALUES, "node_rank": RANKS}),  # the same keys in another order
        st.fixed_dictionaries({"node_rank": RANKS}, optional={"ip": VALUES, "serial": VALUES}),
        st.sampled_from([None, "robot"]),
    ),
    min_size=1,
    max_size=6,
)


def one_by_one(configs: list[Any]) -> HardwareItems | str:
    """What the one-by-one reading gives: the items, or its refusal's message."""
    try:
        return _items_one_by_one(configs, MEMBERS, WHERE)
    except PlacementConfigError as error:
        return str(error)


def as_read(items: HardwareItems | str) -> Any:
    """Items compared with their metadata's key order (and NaN equal to NaN: the same object)."""
    return items if isinstance(items, str) else [(node, list(items.metadata(i).items())) for i, node in enumerate(items.node_ranks)]


@settings(max_examples=100, deadline=None)
@given(CONFIGS)
def test_alike_configs_give_the_one_by_one_items_and_decline_every_config_it_refuses(configs: list[Any]) -> None:
    expected = one_by_one(configs)
    read = alike_configs(configs, MEMBERS, WHERE)
    if isinstance(expected, str):
        assert read is None
    elif read is not None:
        assert as_read(read) == as_read(expected)


def test_a_robot_group_is_read_as_columns() -> None:
    configs = [{"node_rank": node % 3, "robot_ip": f"10.0.0.{node}", "port": 9000 + node, "weight": 0.5} for node in range(9)]
    read = alike_configs(configs, MEMBERS, WHERE)
    assert read is not None and as_read(read) == as_read(one_by_one(configs))


@pytest.mark.parametrize(
    ("configs", "message"),
    [
        ([{"node_rank": 0, "ip": "a"}, {"node_rank": 1, "ip": "b"}, {"node_rank": 0, "ip": "a"}], r"hardware.configs\[2\] duplicates an earlier config"),
        ([{"node_rank": 0, "ip": -0.0}, {"node_rank": 0, "ip": 0.0}, {"node_rank": 0, "ip": math.nan}, {"node_rank": 0, "ip": math.nan}], r"hardware.configs\[3\] duplicates"),
        ([{"node_rank": 0, "ip": "a"}, {"node_rank": 5, "ip": "b"}], r"hardware.configs\[1\] names node_rank 5, which is not in the group's node_ranks"),
        ([{"node_rank": 0, "ip": "a"}, {"node_rank": True, "ip": "b"}], r"hardware.configs\[1\] needs an integer node_rank"),
        ([{"node_rank": 0, "ip": "a"}, ["node_rank", 1]], r"hardware.configs\[1\] must be a mapping"),
    ],
)
def test_a_group_of_robots_keeps_each_refusal_of_its_first_wrong_config(configs: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(PlacementConfigError, match=rf"node group 'arms': {message}"):
        Cluster(num_nodes=3, num_gpus_per_node=0, node_groups=[{"label": "arms", "node_ranks": "0-2", "hardware": {"type": "robot", "configs": configs}}])


def test_the_hardware_table_orders_items_by_kind_node_and_config_and_numbers_them_on_each_node() -> None:
    arms = [{"node_rank": 1, "id": "a0"}, {"node_rank": 0, "id": "a1"}, {"node_rank": 1, "id": "a2"}]
    cams = [{"node_rank": 2, "id": "c0"}, {"node_rank": 0, "id": "c1"}, {"node_rank": 0, "id": "c2"}]
    cluster = Cluster(
        num_nodes=3,
        num_gpus_per_node=[1, 0, 2],
        node_groups=[
            {"label": "arms", "node_ranks": "0-2", "hardware": {"type": "arm", "configs": arms}},
            {"label": "cams", "node_ranks": "0-2", "hardware": {"type": "camera", "configs": cams}},
        ],
    )
    assert cluster.kinds == ("Accelerator", "arm", "camera", "node")
    custom = slice(3, 9)  # after the 3 GPUs, before the 3 nodes
    assert cluster.hw_node[custom].tolist() == [0, 1, 1, 0, 0, 2]
    assert cluster.hw_kind[custom].tolist() == [1, 1, 1, 2, 2, 2]
    assert cluster.hw_local[custom].tolist() == [0, 0, 1, 0, 1, 0]
    assert [cluster.hw_metadata[hw]["id"] for hw in range(3, 9)] == ["a1", "a0", "a2", "c1", "c2", "c0"]
    assert np.array_equal(cluster.items_per_node("arm"), [1, 2, 0])


def test_hardware_declared_by_two_groups_names_the_first_node_of_the_later_group_that_meets() -> None:
    groups = [
        {"label": "a", "node_ranks": "0-3", "hardware": {"type": "r", "configs": [{"node_rank": 1}, {"node_rank": 3}]}},
        {"label": "b", "node_ranks": "0-3", "hardware": {"type": "r", "configs": [{"node_rank": 2}, {"node_rank": 3, "x": 1}, {"node_rank": 1, "x": 1}]}},
    ]
    with pytest.raises(PlacementConfigError, match=r"node group 'b': r hardware on node 3 is already declared by group 'a'"):
        Cluster(num_nodes=4, num_gpus_per_node=0, node_groups=groups)
