"""The ``changes`` term by arrays (``evaluate._changes``) counts what the per-process sets it
replaced counted: one-item and several-item previous sets, strided and not, on seeded random
previous placements, given as lists and as the ``HeldSets`` arrays ``previous_hardware`` gives."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import pytest
from helpers import config

from solver_placement import solve
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.evaluate import _changes
from solver_placement._solver.previous import as_held_sets
from solver_placement._solver.rules.stride import enforced_stride
from solver_placement._specification.candidates import ComponentRequest


def changes_by_sets(free: Sequence[ComponentRequest], taken: Mapping[str, Assignment], previous: Mapping[str, Sequence[Sequence[int]]]) -> int:
    """The per-process reading the arrays replaced."""
    lost = 0
    for request in free:
        held = previous.get(request.name, ())
        assignment = taken[request.name]
        items = set(assignment.hardware.tolist())
        sets = {tuple(sorted(assignment.of(p).tolist())) for p in range(assignment.num_processes)}
        strided = enforced_stride(request) is not None
        for old in held:
            key = tuple(sorted(old))
            lost += 0 if (key[0] in items if len(key) == 1 else (strided and key in sets)) else 1
    return lost


@pytest.mark.parametrize("as_arrays", [False, True], ids=["lists", "held_sets"])
@pytest.mark.parametrize("seed", range(8))
def test_changes_by_arrays_matches_the_sets(seed: int, as_arrays: bool) -> None:
    rng = random.Random(seed)
    placement = {
        "single": {"processes": rng.randint(1, 6)},
        "strided": {"processes": rng.randint(1, 3), "hardware_per_process": 2, "stride": 1},
        "wide": {"processes": 1, "hardware_per_process": rng.choice([2, 3])},
    }
    solution = solve(config(3, 4, placement))
    free = [request for request in solution.spec.requests.values() if not request.determined]
    taken = {request.name: solution.assignment(request.name) for request in free}
    gpus = solution.cluster.num_accelerators
    previous: dict[str, list[list[int]]] = {}
    for request in free:
        own = [taken[request.name].of(p).tolist() for p in range(taken[request.name].num_processes)]
        drawn = [sorted(rng.sample(range(gpus), rng.choice([1, 2, 3]))) for _ in range(rng.randint(0, 4))]
        previous[request.name] = [*rng.sample(own, rng.randint(0, len(own))), *drawn]
    read = {name: as_held_sets(sets) for name, sets in previous.items()} if as_arrays else previous
    assert _changes(free, taken, read) == changes_by_sets(free, taken, previous), seed
