"""The verifier checks each record's ``hardware_metadata`` against the cluster's item configs."""

from dataclasses import replace

import pytest

from solver_placement import Cluster, PlacementSpec, VerificationError, solve, verify

ROBOTS = {"type": "franka", "configs": [{"node_rank": 1, "robot_ip": "10.0.0.7"}, {"node_rank": 1, "robot_ip": "10.0.0.8"}]}


@pytest.fixture(scope="module")
def solved():
    cluster = Cluster(2, [2, 0], node_groups=[{"label": "arm", "node_ranks": 1, "hardware": ROBOTS}])
    return solve(PlacementSpec.build(cluster, {"gpu": "0-1", "robot": {"node_group": "arm", "placement": "0-1"}}))


def edited(solution, component: str, rank: int, metadata) -> dict:
    records = {name: list(pls) for name, pls in solution.placements_by_component().items()}
    records[component][rank] = replace(records[component][rank], hardware_metadata=metadata)
    return records


def test_the_solvers_records_carry_their_items_configs(solved) -> None:
    verify(solved.spec, solved.placements_by_component())
    assert [p.hardware_metadata for p in solved.placements("robot")] == [({"robot_ip": "10.0.0.7"},), ({"robot_ip": "10.0.0.8"},)]


@pytest.mark.parametrize(
    ("component", "rank", "metadata", "words"),
    [
        ("robot", 0, ({"robot_ip": "10.0.0.8"},), r"robot rank 0: hardware_metadata .*10\.0\.0\.8.*expected .*10\.0\.0\.7"),
        ("robot", 1, (), "robot rank 1: hardware_metadata"),
        ("robot", 1, None, "robot rank 1: hardware_metadata None"),
        ("gpu", 0, ({"robot_ip": "10.0.0.7"},), r"gpu rank 0: hardware_metadata .*expected the items' hardware.configs \[\]"),
    ],
)
def test_metadata_that_is_not_the_items_configs_is_caught(solved, component, rank, metadata, words) -> None:
    with pytest.raises(VerificationError, match=words):
        verify(solved.spec, edited(solved, component, rank, metadata))
