"""The memory check's array pass (``_crowded``) only ever leaves out GPUs whose every mix fits:
on random mixes near the GPUs' size, moved onto random GPUs, the verifier says exactly what
its record-by-record loop says."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest
from helpers import config, solved

from solver_placement import Cluster, PlacementSpec, VerificationError, verify
from solver_placement._records import Placement
from solver_placement._verify import placed as placed_module


def violations(spec: PlacementSpec, records: dict[str, list[Placement]]) -> list[str]:
    try:
        verify(spec, records)
    except VerificationError as error:
        return list(error.violations)
    return []


def record_by_record(spec: PlacementSpec, records: dict[str, list[Placement]], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The verifier with no component read as columns: the memory check weighs every GPU."""
    with monkeypatch.context() as patched:
        patched.setattr(placed_module, "read_columns", lambda cluster, index, records: None)
        return violations(spec, records)


def placement(rng: random.Random) -> dict[str, Any]:
    """Three components, two collocated, with memory that sums close to the GPU sizes below."""
    actor = {"weights": rng.choice([10, 20.5, 30]), "activations": rng.choice([0, 9.75, 20])}
    return {
        "actor": {"processes": 4, "memory_gb": actor, **({"offload_weight": True} if rng.random() < 0.5 else {})},
        "rollout": {"processes": 4, "collocate_with": "actor", "memory_gb": rng.choice([10, 29.5, 40])},
        "reward": {"processes": rng.choice([1, 2, 4]), "memory_gb": rng.choice([20, 50, 60.25])},
    }


@pytest.mark.parametrize("seed", range(12))
def test_the_array_pass_agrees_with_the_loop(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    body = placement(rng)
    roomy = solved(2, 4, body, cluster={"gpu_memory_gb": 1000})
    records = roomy.placements_by_component()
    for size in (40, 50.5, 60, 70.25, 80, 100, [60, 90]):
        spec = PlacementSpec.build(Cluster.from_config(config(2, 4, body, gpu_memory_gb=size)), body)
        moved = {name: [*recs] for name, recs in records.items()}
        for _ in range(rng.randint(0, 4)):  # crowd a random GPU with a random process
            name = rng.choice(sorted(moved))
            index = rng.randrange(len(moved[name]))
            moved[name][index] = replace(moved[name][index], cluster_node_rank=rng.randrange(2), local_hardware_ranks=[rng.randrange(4)])
        for case in (records, moved):
            assert violations(spec, case) == record_by_record(spec, case, monkeypatch), (seed, size)
