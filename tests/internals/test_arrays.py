"""The shared array helpers (``_arrays.py``) give what the Python they replace gives: on seeded
random arrays, the same values, and for dictionaries the same keys in the same order."""

from __future__ import annotations

import random

import numpy as np
import pytest

from solver_placement._arrays import distinct, distinct_rows, row_groups, sorted_by_key
from solver_placement._solver.counts.problem import LocalsOff


@pytest.mark.parametrize("seed", range(50))
def test_sorted_by_key_is_the_loop_it_replaces(seed: int) -> None:
    rng = random.Random(seed)
    size = rng.randint(0, 40)
    keys = np.array([rng.randint(0, 7) for _ in range(size)], dtype=np.int64)
    values = np.array([rng.randint(0, 5) for _ in range(size)], dtype=np.int64)
    grown: dict[int, list[int]] = {}
    for key, value in zip(keys.tolist(), values.tolist(), strict=True):
        grown.setdefault(key, []).append(value)
    expected = {key: tuple(sorted(found)) for key, found in grown.items()}
    found = sorted_by_key(keys, values)
    assert found == expected and list(found) == list(expected), seed


@pytest.mark.parametrize("seed", range(20))
def test_distinct_is_numpys_unique(seed: int) -> None:
    values = np.random.default_rng(seed).integers(0, 9, size=seed * 3)
    assert np.array_equal(distinct(values), np.unique(values))


def random_rows(seed: int) -> np.ndarray:
    """A small table with repeated rows (few values per column), some tables empty or of one column."""
    rng = np.random.default_rng(seed)
    return rng.integers(-2, 3, size=(int(rng.integers(0, 40)), int(rng.integers(1, 4))))


@pytest.mark.parametrize("seed", range(30))
def test_row_groups_group_rows_as_a_dict_of_them_does(seed: int) -> None:
    rows = random_rows(seed)
    grown: dict[tuple[int, ...], list[int]] = {}
    for position, row in enumerate(rows.tolist()):
        grown.setdefault(tuple(row), []).append(position)
    assert [group.tolist() for group in row_groups(rows)] == list(grown.values()), seed


@pytest.mark.parametrize("seed", range(30))
def test_distinct_rows_is_numpys_unique_over_rows(seed: int) -> None:
    rows = random_rows(seed)
    first, counts = distinct_rows(rows)
    if rows.shape[0]:
        _, expected_first, expected_counts = np.unique(rows, axis=0, return_index=True, return_counts=True)
        assert np.array_equal(first, expected_first) and np.array_equal(counts, expected_counts), seed
    else:
        assert first.size == counts.size == 0


@pytest.mark.parametrize("seed", range(20))
def test_locals_off_reads_masks_as_the_ids_by_node(seed: int) -> None:
    rng = random.Random(seed)
    held = {node: tuple(sorted(rng.sample(range(52), rng.randint(1, 4)))) for node in rng.sample(range(12), rng.randint(0, 6))}
    masks = np.zeros(12, dtype=np.int64)
    for node, ids in held.items():
        masks[node] = sum(1 << gpu for gpu in ids)
    found = LocalsOff(masks)
    assert dict(found) == held and list(found) == sorted(held) and len(found) == len(held), seed
    assert all(found.get(node, ()) == held.get(node, ()) for node in range(-1, 13)), seed
