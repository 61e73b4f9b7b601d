"""Processes must form whole tensor-parallel groups, in every form a component is written in."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import config

from solver_placement import PlacementConfigError, solve


@pytest.mark.parametrize(("body", "message"), [
    ({"processes": 16, "tensor_parallel_size": 3}, "a: processes 16 is not a multiple of tensor_parallel_size 3"),
    ({"placement": "0-11", "tensor_parallel_size": 8}, 'a: placement "0-11" gives 12 processes; 12 is not a multiple of tensor_parallel_size 8'),
    ({"placement": [[0], [1], [2]], "tensor_parallel_size": 2}, "3 is not a multiple of tensor_parallel_size 2"),
    ({"resources": "0-5", "hardware_per_process": 2, "tensor_parallel_size": 2}, "a: processes 3 is not a multiple of tensor_parallel_size 2"),
])
def test_a_remainder_group_is_refused_naming_both_numbers(body: dict[str, Any], message: str) -> None:
    with pytest.raises(PlacementConfigError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        solve(config(2, 8, {"a": body}))


def test_whole_groups_are_placed_one_node_each() -> None:
    solution = solve(config(2, 8, {"a": {"placement": "0-15", "tensor_parallel_size": 8}}))
    assert [p.cluster_node_rank for p in solution.placements("a")] == [0] * 8 + [1] * 8
