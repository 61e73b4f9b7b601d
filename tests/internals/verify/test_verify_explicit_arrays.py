"""The layout check's array test of explicit rank lists only ever accepts: on seeded random
explicit layouts and random changes of their records, the verifier says exactly what its
record-by-record loop says."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest
from helpers import config

from solver_placement import PlacementSpec, VerificationError, solve, verify
from solver_placement._records import Placement
from solver_placement._verify import placed as placed_module


def violations(spec: PlacementSpec, records: dict[str, list[Placement]]) -> list[str]:
    try:
        verify(spec, records)
    except VerificationError as error:
        return list(error.violations)
    return []


def record_by_record(spec: PlacementSpec, records: dict[str, list[Placement]], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    with monkeypatch.context() as patched:
        patched.setattr(placed_module, "read_columns", lambda cluster, index, records: None)
        return violations(spec, records)


#: One change of one record, each a layout the explicit lists do not give (or do, by chance).
CHANGES: tuple[dict[str, Any], ...] = (
    {"local_hardware_ranks": [0]},
    {"local_hardware_ranks": [3, 2]},
    {"cluster_node_rank": 2},
    {"cluster_node_rank": 0},
)


@pytest.mark.parametrize("seed", range(10))
def test_explicit_lists_by_arrays_agree_with_the_loop(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    ranks = rng.sample(range(12), 12)
    lists: list[list[int]] = []
    while ranks:
        size = rng.choice([1, 2])
        lists.append(sorted(ranks[:size]))
        ranks = ranks[size:]
    lists = [process for process in lists if len(process) == 1 or process[0] // 4 == process[1] // 4][: rng.randint(1, 8)]
    solution = solve(config(3, 4, {"pinned": {"placement": lists}}))
    records = solution.placements_by_component()
    assert violations(solution.spec, records) == record_by_record(solution.spec, records, monkeypatch) == []
    for _ in range(6):
        index = rng.randrange(len(records["pinned"]))
        changed = {"pinned": [*records["pinned"]]}
        changed["pinned"][index] = replace(changed["pinned"][index], **rng.choice(CHANGES))
        assert violations(solution.spec, changed) == record_by_record(solution.spec, changed, monkeypatch), seed
