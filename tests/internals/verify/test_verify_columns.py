"""The verifier's array tests (``_verify/columns.py``) only ever accept: on every model and on
every corruption of one record, the verifier says exactly what its record-by-record checks say."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT

from solver_placement import PlacementError, VerificationError, solve, verify
from solver_placement._records import Placement
from solver_placement._specification.placement_spec import PlacementSpec
from solver_placement._verify import placed as placed_module

#: Every valid model but the larger copies of ``synthetic_16x8`` (minutes of corruptions, no new shape).
LARGER = {"synthetic_128x8.yaml", "synthetic_1024x8.yaml"}
MODELS = sorted(
    path for path in (ROOT / "models").rglob("*.yaml") if "invalid" not in path.parts and "infeasible" not in path.parts and path.name not in LARGER
)

#: One change of one record per field a check reads, each worth a violation on some model.
CHANGES: tuple[dict[str, Any], ...] = (
    {"rank": 5},
    {"cluster_node_rank": 1},
    {"local_rank": 3},
    {"local_world_size": 9},
    {"placement_node_rank": 2},
    {"local_accelerator_rank": 5},
    {"accelerator_type": "AMD_GPU"},
    {"visible_accelerators": ["7"]},
    {"visible_accelerators": ("0",)},
    {"isolate_accelerator": False},
    {"local_hardware_ranks": [1]},
    {"local_hardware_ranks": [3, 3]},
    {"local_hardware_ranks": []},
    {"local_hardware_ranks": [99]},
    {"hardware_type": "node"},
    {"hardware_metadata": ({"ip": "x"},)},
    {"env": {"NUMA_NODES": "0"}},
)


def violations(spec: PlacementSpec, records: dict[str, list[Placement]]) -> list[str]:
    try:
        verify(spec, records)
    except VerificationError as error:
        return list(error.violations)
    return []


def record_by_record(spec: PlacementSpec, records: dict[str, list[Placement]], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The verifier with no component read as columns: every check runs its loop."""
    with monkeypatch.context() as patched:
        patched.setattr(placed_module, "read_columns", lambda cluster, index, records: None)
        return violations(spec, records)


@pytest.mark.parametrize("path", MODELS, ids=lambda path: str(path.relative_to(ROOT / "models")))
def test_the_array_tests_agree_with_the_loops_on_every_corruption(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        solution = solve(path)
    except PlacementError:
        pytest.skip("no placement to corrupt")
    records = solution.placements_by_component()
    assert violations(solution.spec, records) == record_by_record(solution.spec, records, monkeypatch) == []
    for name in solution.components:
        for index in {0, len(records[name]) - 1}:
            for change in CHANGES:
                corrupted = {**records, name: [*records[name]]}
                corrupted[name][index] = replace(records[name][index], **change)
                found = violations(solution.spec, corrupted)
                assert found == record_by_record(solution.spec, corrupted, monkeypatch), (name, index, change)
