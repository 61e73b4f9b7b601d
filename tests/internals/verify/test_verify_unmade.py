"""An answer's records are verified before they are made, from the arrays they will be made from
(``PlacementRecords``, ``RecordColumns.plain``): on every model, and on every corruption of one of
those arrays, the verifier says of the records not made yet exactly what it says of the same
records made and read one by one, and reading them never makes them where the arrays suffice."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT, config

from solver_placement import PlacementError, Solution, VerificationError, solve, verify
from solver_placement._records import Placement, PlacementRecords, RecordColumns
from solver_placement._verify.columns import unmade

#: Every valid model but the larger copies of ``synthetic_16x8`` (no new shape).
LARGER = {"synthetic_128x8.yaml", "synthetic_1024x8.yaml"}
MODELS = sorted(
    path for path in (ROOT / "models").rglob("*.yaml") if "invalid" not in path.parts and "infeasible" not in path.parts and path.name not in LARGER
)


def _bump(values: np.ndarray, at: int) -> None:
    values[at] += 1


#: One change of one process's value in the arrays a record is made from, each worth a violation
#: on some model (the cached fields are computed first, then changed, as a bug there would be).
CORRUPTIONS: dict[str, Callable[[RecordColumns, int], None]] = {
    "node": lambda columns, at: columns.nodes.__setitem__(at, (columns.nodes[at] + 1) % columns.cluster.num_nodes),  # a node that exists
    "item": lambda columns, at: _bump(columns.local, int(columns.indptr[at])),
    "placement_node_rank": lambda columns, at: _bump(columns.placement_node_rank, at),
    "local_rank": lambda columns, at: _bump(columns.positions[0], at),
    "local_world_size": lambda columns, at: _bump(columns.positions[1], at),
    "local_accelerator_rank": lambda columns, at: _bump(columns.first_gpu, at),
    # a robot's metadata is made from the items themselves, its other fields from their node and index
    "hardware": lambda columns, at: columns.hardware.__setitem__(int(columns.indptr[at]), (columns.hardware[columns.indptr[at]] + 1) % columns.cluster.num_hardware),
    "kind": lambda columns, at: columns.kinds.__setitem__(at, (columns.kinds[at] + 1) % len(columns.cluster.kinds)),
}


def violations(solution: Solution, records: Mapping[str, Sequence[Placement]]) -> list[str]:
    try:
        verify(solution.spec, records)
    except VerificationError as error:
        return list(error.violations)
    return []


def fresh(solution: Solution) -> dict[str, PlacementRecords]:
    """The solution's records as an answer has them before anything reads them: not made."""
    return dataclasses.replace(solution).placement_records()


@pytest.mark.parametrize("path", MODELS, ids=lambda path: str(path.relative_to(ROOT / "models")))
def test_records_not_made_are_verified_as_the_made_ones(path: Path) -> None:
    try:
        solution = solve(path)
    except PlacementError:
        pytest.skip("no placement to check")
    assert_verified_as_made(solution)


def assert_verified_as_made(solution: Solution) -> list[str]:
    """The solution's records not made yet verify as the made ones do, untouched and under every
    corruption, and verifying them made none of those the arrays state; the names of those."""
    records = fresh(solution)
    assert violations(solution, records) == []
    plain = [name for name, found in records.items() if unmade(found) is not None]
    assert all(not records[name].is_made for name in plain), "the verifier made records it could read from their arrays"
    for name in plain:
        for at in {0, len(records[name]) - 1}:
            for corruption, change in CORRUPTIONS.items():
                corrupted = fresh(solution)
                arrays = corrupted[name].columns
                arrays.positions, arrays.placement_node_rank, arrays.first_gpu  # noqa: B018  # computed before the change
                arrays.nodes, arrays.local, arrays.kinds = arrays.nodes.copy(), arrays.local.copy(), arrays.kinds.copy()
                arrays.hardware = arrays.hardware.copy()  # the assignment's own tables stay intact
                change(arrays, at)
                found = violations(solution, corrupted)
                made = {key: list(value) for key, value in fresh(solution).items()}
                made[name] = PlacementRecords(name, arrays).made()  # the same arrays, made into records and read one by one
                assert found == violations(solution, made), (name, at, corruption)
    return plain


@pytest.mark.parametrize("hide", [False, True])
def test_robots_and_node_processes_are_verified_from_their_arrays(hide: bool) -> None:
    """Robots (on nodes with GPUs and without) and node-only processes: their records follow from
    the arrays too (what they see: their node's GPUs, or none with ``hide_accelerators``; a
    robot's metadata: its items' configs), so they are verified unmade, as the made ones are."""
    robots = {"type": "robot", "configs": [{"node_rank": node, "robot_ip": f"10.0.{node}.{r}"} for node in (0, 1, 2) for r in range(2)]}
    placement = {
        "gpu": "0-3",
        "arm": {"node_group": "arms", "placement": "0-1", "hide_accelerators": hide},
        "pair": {"node_group": "arms", "processes": 2, "hardware_per_process": 2, "exclusive_with": ["arm"], "hide_accelerators": hide},
        "agent": {"node_group": "node", "placement": "0-2", "hide_accelerators": hide},
    }
    groups = [{"label": "arms", "node_ranks": "0-2", "hardware": robots}]
    solution = solve(config(3, [2, 2, 0], placement, node_groups=groups))
    assert set(assert_verified_as_made(solution)) >= {"arm", "agent"}


def test_records_handed_out_are_the_ones_verified() -> None:
    """The answer loop verifies the records before they exist; ``placements`` then makes them from
    the same arrays, once: every later call gets the same objects."""
    solution = solve(config(2, 4, {"actor": {"processes": 4}, "rollout": {"processes": 2, "hardware_per_process": 2, "exclusive_with": ["actor"]}}))
    records = solution.placement_records()
    assert not any(found.is_made for found in records.values())
    first = solution.placements("actor")
    assert records["actor"].is_made and all(a is b for a, b in zip(first, solution.placements("actor"), strict=True))
    assert len(records["rollout"]) == 2 and not records["rollout"].is_made


def test_records_the_arrays_cannot_state_are_made_and_read_one_by_one() -> None:
    """Processes that see every GPU of their node (``isolate_accelerator=False``) are not plain:
    the verifier reads their records, made for it."""
    solution = solve(config(1, 4, {"a": "0-3"}))
    records = solution.placement_records(isolate_accelerator=False)
    assert unmade(records["a"]) is None
    verify(solution.spec, records)
    assert records["a"].is_made
