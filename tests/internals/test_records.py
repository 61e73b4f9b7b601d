"""Placement records: RLinf's fields and meaning, with the documented differences."""

import pickle
from dataclasses import FrozenInstanceError, asdict, fields, replace

import pytest
from helpers import solved

from solver_placement import Cluster, Placement, PlacementSpec, solve, verify
from solver_placement._records import UnfrozenPlacement


def test_fields_of_a_two_node_layout() -> None:
    s = solved(2, 4, {"a": "2-5:0-1", "b": "0-7:0-3"})
    p0, p1 = s.placements("a")
    assert (p0.cluster_node_rank, p0.local_hardware_ranks, p0.visible_accelerators) == (0, [2, 3], ["2", "3"])
    assert (p1.cluster_node_rank, p1.local_hardware_ranks, p1.visible_accelerators) == (1, [0, 1], ["0", "1"])
    assert (p0.placement_node_rank, p1.placement_node_rank) == (0, 1)
    assert (p0.local_rank, p0.local_world_size, p1.local_rank, p1.local_world_size) == (0, 1, 0, 1)
    assert p0.local_accelerator_rank == 2 and p1.local_accelerator_rank == 0
    assert p0.accelerator_type == "NV_GPU" and p0.node_group_label == "cluster" and p0.component == "a"
    assert p0.hardware_ranks == [2, 3] and p1.hardware_ranks == [4, 5]
    assert [(p.local_rank, p.local_world_size) for p in s.placements("b")] == [(0, 2), (1, 2), (0, 2), (1, 2)]


def test_isolate_false_shows_all_node_gpus_but_keeps_own_first_gpu() -> None:
    s = solved(1, 4, {"a": "1-3"})
    records = s.placements("a", isolate_accelerator=False)
    assert [p.visible_accelerators for p in records] == [["0", "1", "2", "3"]] * 3
    assert [p.local_accelerator_rank for p in records] == [1, 2, 3]  # RLinf gives 0 for all
    assert all(not p.isolate_accelerator for p in records)


def test_node_and_robot_processes_hold_no_gpu() -> None:
    cluster = Cluster(2, [2, 0], node_groups=[
        {"label": "arm", "node_ranks": "0-1", "hardware": {"type": "arm", "configs": [{"node_rank": 0}, {"node_rank": 1}]}}])
    s = solve(PlacementSpec.build(cluster, {"env": {"node_group": "arm", "placement": "0-1"}, "cpu": {"node_group": "node", "placement": "1"}}))
    robot0, robot1 = s.placements("env")
    assert (robot0.hardware_type, robot0.local_hardware_ranks, robot0.local_accelerator_rank) == ("arm", [0], -1)
    assert robot0.visible_accelerators == ["0", "1"] and robot1.visible_accelerators == []
    assert robot1.accelerator_type == "NO_ACCEL" and robot0.node_group_label == "arm"
    (cpu,) = s.placements("cpu")
    assert (cpu.cluster_node_rank, cpu.local_hardware_ranks, cpu.local_accelerator_rank, cpu.hardware_type) == (1, [], -1, "node")


def test_group_label_follows_the_first_item() -> None:
    groups = [{"label": "a800", "node_ranks": 0}, {"label": "4090", "node_ranks": 1}]
    s = solved(2, 2, {"a": {"node_group": ["a800", "4090"], "placement": "0-3"}}, cluster={"node_groups": groups, "accelerator_model": ["A800", "RTX4090"]})
    assert [p.node_group_label for p in s.placements("a")] == ["a800", "a800", "4090", "4090"]
    assert [p.accelerator_model for p in s.placements("a")] == ["A800", "A800", "RTX4090", "RTX4090"]


def test_placement_node_rank_orders_nodes_by_first_appearance() -> None:
    groups = [{"label": "hi", "node_ranks": 1}, {"label": "lo", "node_ranks": 0}]
    s = solved(2, 2, {"a": {"node_group": "hi,lo", "placement": "0-3"}}, cluster={"node_groups": groups})
    assert [(p.cluster_node_rank, p.placement_node_rank) for p in s.placements("a")] == [(1, 0), (1, 0), (0, 1), (0, 1)]


def test_records_are_frozen_placements_equal_to_constructed_ones() -> None:
    # records are made as an unfrozen twin and switched to Placement: they must be Placements in every way
    (record, *_) = solved(1, 2, {"a": "0-1"}).placements("a")
    assert type(record) is Placement and UnfrozenPlacement.__slots__ == Placement.__slots__
    assert record == Placement(**{f.name: getattr(record, f.name) for f in fields(Placement)})
    with pytest.raises(FrozenInstanceError):
        record.rank = 5  # type: ignore[misc]
    assert replace(record, rank=5).rank == 5 and asdict(record)["rank"] == 0
    assert pickle.loads(pickle.dumps(record)) == record


def test_records_are_built_once_per_isolate_flag() -> None:
    s = solved(1, 4, {"a": "0-3"})
    assert all(a is b for a, b in zip(s.placements("a"), s.placements("a"), strict=True))
    assert s.placements("a", False)[0] is s.placements("a", False)[0] and s.placements("a", False) != s.placements("a")


def test_a_callers_list_is_its_own() -> None:
    s = solved(1, 4, {"a": "0-3"})
    mine = s.placements("a")
    mine.reverse()
    mine.append(mine[0])
    assert [p.rank for p in s.placements("a")] == [0, 1, 2, 3]


def test_every_record_has_lists_of_its_own() -> None:
    # one process per GPU takes the fast path that wraps each value in a list: no list may be shared
    records = solved(1, 4, {"a": "0-3:0-7"}).placements("a", isolate_accelerator=False)
    lists = [id(lst) for p in records for lst in (p.visible_accelerators, p.local_hardware_ranks, p.hardware_ranks)]
    assert len(set(lists)) == len(lists)


ROBOTS = [{"label": "arm", "node_ranks": "0-1", "hardware": {"type": "arm", "configs": [
    {"node_rank": 0, "robot_ip": "10.0.0.1", "camera_serials": ["A1", "A2"]},
    {"node_rank": 1, "robot_ip": "10.0.0.2"},
    {"node_rank": 1, "robot_ip": "10.0.0.3"}]}}]  # fmt: skip


@pytest.mark.unverified_solutions  # the point is a poisoned answer
def test_robot_processes_carry_their_items_configs() -> None:
    cluster = Cluster(2, [2, 2], node_groups=ROBOTS)
    s = solve(PlacementSpec.build(cluster, {"env": {"node_group": "arm", "placement": "0:0,1-2:1"}, "gpu": "0-3", "cpu": {"node_group": "node", "placement": "0"}}))
    first, second = s.placements("env")
    assert first.hardware_metadata == ({"robot_ip": "10.0.0.1", "camera_serials": ["A1", "A2"]},)
    assert second.hardware_metadata == ({"robot_ip": "10.0.0.2"}, {"robot_ip": "10.0.0.3"})
    assert all(p.hardware_metadata == () for name in ("gpu", "cpu") for p in s.placements(name))
    verify(s.spec, s.placements_by_component())
    first.hardware_metadata[0]["robot_ip"] = "changed"  # a record's copy: the cluster keeps its config
    assert s.placements("env", isolate_accelerator=False)[0].hardware_metadata[0]["robot_ip"] == "10.0.0.1"


def test_clusters_without_hardware_configs_give_empty_metadata() -> None:
    assert {p.hardware_metadata for p in solved(2, 4, {"a": "0-7:0-15"}).placements("a")} == {()}
