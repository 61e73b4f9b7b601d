"""The model of rank strings is built in bulk: one layout literal per rank-based request, no
per-pair variables and no statement text unless an explanation asks for them."""

from __future__ import annotations

import pytest
from helpers import config, solved

from solver_placement import PlacementSpec, explain, solve
from solver_placement._errors import InfeasiblePlacementError
from solver_placement._solver.build import build_model
from solver_placement._specification.candidates import expand_all

RANK_STRINGS = {"actor,rollout": "0-15", "env": "0-15:0-31", "reward": {"placement": [[0, 1], [2, 3]]}, "cpu": {"node_group": "node", "placement": "0-1:0-5"}}


def spec_of(placement: dict, num_nodes: int = 2, gpus: int = 8) -> PlacementSpec:
    return PlacementSpec.from_config(config(num_nodes, gpus, placement))


def test_rank_strings_cost_one_variable_per_request_and_no_statements() -> None:
    spec = spec_of(RANK_STRINGS)
    ctx = build_model(spec, expand_all(spec.requests))
    assert len(ctx.model.proto.variables) == len(spec.requests) == 4
    assert ctx.statements == {} and ctx.conflicts == []
    assert all(len(set(map(id, ctx.x[name]))) == 1 for name in spec.requests)


def test_explaining_gives_every_pair_its_literal_and_every_segment_its_statement() -> None:
    spec = spec_of({"a": "0-1:0-1,2-5:2-3"})
    ctx = build_model(spec, expand_all(spec.requests), explain=True)
    pairs = int(spec.requests["a"].cand_hw.size)
    assert len(ctx.x["a"]) == pairs and len(set(map(id, ctx.x["a"]))) == pairs
    assert sorted(s.text for s in ctx.statements if "segment" in s.text) == ['a: segment "0-1:0-1" fixes its GPUs', 'a: segment "2-5:2-3" fixes its GPUs']


def test_rank_strings_solve_to_their_layout() -> None:
    s = solved(2, 8, RANK_STRINGS)
    assert [p.local_hardware_ranks for p in s.placements("reward")] == [[0, 1], [2, 3]]
    assert [(p.cluster_node_rank, p.local_hardware_ranks) for p in s.placements("env")][::8] == [(0, [0]), (0, [4]), (1, [0]), (1, [4])]
    assert [p.cluster_node_rank for p in s.placements("cpu")] == [0, 0, 0, 1, 1, 1]


def test_rank_strings_next_to_declarative_components() -> None:
    # the layout literal stands for every pair where rules read a rank string's literals
    s = solved(1, 8, {"actor": {"processes": 4}, "rollout": {"placement": "0-3", "collocate_with": "actor"}, "reward": {"processes": 2, "exclusive_with": ["rollout"]}})
    assert [p.local_hardware_ranks for p in s.placements("actor")] == [[0], [1], [2], [3]]
    assert [p.local_hardware_ranks for p in s.placements("reward")] == [[4], [5]]


def test_a_conflict_still_names_the_statements() -> None:
    placement = {"a": "0-3", "b": {"placement": "2-5", "exclusive_with": ["a"]}}
    with pytest.raises(InfeasiblePlacementError, match="b is exclusive with a"):
        solve(config(1, 8, placement))
    assert explain(spec_of(placement, 1)) != []
