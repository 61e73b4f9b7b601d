"""The typed node's patterns over one array (``counts/typed_grid.py``) are exactly those the
search per pattern (``typed.TypedCovers``) holds, in the walk's order: ``runs.typed_patterns``
takes the array where it fits ``MAX_GRID_CELLS``, so the two must agree on every node (GPU
types from classes kept off GPUs at random, stacks at random, blocks no GPU joins)."""

from __future__ import annotations

import itertools
import random

import pytest

from solver_placement._solver.counts import typed_grid
from solver_placement._solver.counts.runs import typed_patterns
from solver_placement._solver.counts.typed import TypedCovers, gpu_types, independent_blocks
from solver_placement._solver.counts.typed_grid import grid_patterns, reached


def _no_budget(stage: str) -> None:
    """Budget checks of a test: never out of time."""


def _random_node(rng: random.Random) -> tuple[int, tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...], list[int]]:
    """A node of 1-10 GPUs, 1-4 classes each kept off a random set of its GPUs (sometimes all),
    the classes' stacks (random sets, some sharing classes) and widths 1-2."""
    capacity, size = rng.randint(1, 10), rng.randint(1, 4)
    keep_off = tuple(tuple(sorted(rng.sample(range(capacity), rng.choice((0, rng.randint(0, capacity), capacity))))) for _ in range(size))
    stacks = tuple(sorted({tuple(sorted(rng.sample(range(size), rng.randint(1, size)))) for _ in range(rng.randint(1, 4))}))
    return capacity, keep_off, stacks, [rng.choice((1, 1, 2)) for _ in range(size)]


@pytest.mark.parametrize("seed", range(300))
def test_a_cell_is_reached_exactly_when_the_types_cover_its_demand(seed: int) -> None:
    rng = random.Random(seed)
    capacity, keep_off, stacks, _ = _random_node(rng)
    covers = TypedCovers(stacks, gpu_types(capacity, keep_off)[0])
    units = [rng.randint(0, capacity) for _ in keep_off]
    reach = reached(covers, units)
    for demand in itertools.product(*(range(u + 1) for u in units)):
        assert bool(reach[demand]) == (covers.cover(demand) is not None), demand


@pytest.mark.parametrize("seed", range(300))
def test_the_grid_lists_the_walks_patterns_in_its_order(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    capacity, keep_off, stacks, widths = _random_node(rng)
    mask = [len(off) < capacity for off in keep_off]
    runs = (1,) * len(keep_off)
    listed = list(typed_patterns(widths, mask, stacks, capacity, keep_off, runs, 10**6, _no_budget))
    monkeypatch.setattr("solver_placement._solver.counts.runs.grid_patterns", lambda *args: None)  # the walk, pattern by pattern
    walked = list(typed_patterns(widths, mask, stacks, capacity, keep_off, runs, 10**6, _no_budget))
    assert listed == walked
    assert listed[0] == (0,) * len(widths)


def test_blocks_judge_the_demand_of_their_own_classes() -> None:
    """GPU classes and robot classes on one node (``kinds.py``): each block holds its own."""
    keep_off = ((4, 5), (4, 5), (0, 1, 2, 3))  # two GPU classes on GPUs 0-3, a robot class on items 4-5
    stacks = ((0, 2), (1, 2))
    blocks = [(tuple(k in mine for k in range(3)), TypedCovers(stacks, gpu_types(size, off)[0])) for mine, off, _, size in independent_blocks(keep_off, 6)]
    found = [tuple(row) for row in grid_patterns(blocks, [4, 4, 2], [1, 1, 1], _no_budget).tolist()]
    expected = [(a, b, c) for a in range(5) for b in range(5) for c in range(3) if a + b <= 4]
    assert found == expected


def test_a_grid_past_its_cells_is_left_to_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(typed_grid, "MAX_GRID_CELLS", 8)
    covers = TypedCovers(((0, 1),), gpu_types(2, ((), ()))[0])
    assert grid_patterns([((True, True), covers)], [2, 2], [1, 1], _no_budget) is None
    assert grid_patterns([((True, True), covers)], [1, 1], [1, 1], _no_budget) is not None
