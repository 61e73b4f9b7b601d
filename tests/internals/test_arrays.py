"""The shared array helpers (``_arrays.py``) give what the Python they replace gives: on seeded
random arrays, the same values, and for dictionaries the same keys in the same order."""

from __future__ import annotations

import random

import numpy as np
import pytest

from solver_placement._arrays import distinct, distinct_pairs, distinct_rows, row_groups, sorted_by_key, sorted_row_groups, unique_rows
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


@pytest.mark.parametrize("seed", range(40))
def test_distinct_pairs_is_the_set_of_pairs(seed: int) -> None:
    """Ascending units, their values ascending within each unit (the one-pass case) or not."""
    rng = np.random.default_rng(seed)
    units = np.sort(rng.integers(0, 6, size=int(rng.integers(0, 30))))
    values = rng.integers(0, 4, size=units.size)
    if seed % 2:  # each unit's values in order: a layout numbered domain by domain
        values = values[np.lexsort((values, units))]
    assert distinct_pairs(units, values) == len(set(zip(units.tolist(), values.tolist(), strict=True))), seed


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


def wide_rows(seed: int) -> np.ndarray:
    """Rows whose columns span more than one integer holds together (values to 2**40 in three or
    four columns, repeats drawn from a few such rows): sorted column by column, not packed."""
    rng = np.random.default_rng(seed)
    few = rng.integers(-(2**40), 2**40, size=(int(rng.integers(1, 6)), int(rng.integers(3, 5))))
    return few[rng.integers(0, few.shape[0], size=int(rng.integers(1, 40)))]


@pytest.mark.parametrize("seed", range(40))
def test_unique_rows_is_numpys_unique_by_rows(seed: int) -> None:
    """``unique_rows`` gives ``np.unique(axis=0)``'s rows in its order and each row's position
    among them, for rows packed into one integer each and for rows too wide for that."""
    rows = random_rows(seed) if seed % 2 else wide_rows(seed)
    found, inverse = unique_rows(rows)
    expected, expected_inverse = np.unique(rows, axis=0, return_inverse=True)
    assert found.tolist() == expected.tolist(), seed
    assert inverse.tolist() == expected_inverse.reshape(-1).tolist(), seed


def test_rows_at_the_ends_of_int64_are_sorted_without_overflow() -> None:
    """A column spanning the whole int64 range (a limit left unset as its largest value beside
    -1) is sorted column by column, its span never computed in int64."""
    top, bottom = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    rows = np.array([[top, -1], [bottom, 2], [top, -1], [0, 0], [bottom, 2]], dtype=np.int64)
    found, inverse = unique_rows(rows)
    expected, expected_inverse = np.unique(rows, axis=0, return_inverse=True)
    assert found.tolist() == expected.tolist() and inverse.tolist() == expected_inverse.reshape(-1).tolist()


@pytest.mark.parametrize("seed", range(20))
def test_wide_rows_group_as_narrow_ones_do(seed: int) -> None:
    """Both ways of sorting rows (packed, column by column) group them alike: ``row_groups`` and
    ``sorted_row_groups`` of wide rows are those of their ranks per column, which pack."""
    rows = wide_rows(seed)
    ranks = np.stack([np.unique(column, return_inverse=True)[1].reshape(-1) for column in rows.T], axis=1)
    assert [group.tolist() for group in row_groups(rows)] == [group.tolist() for group in row_groups(ranks)], seed
    assert [group.tolist() for group in sorted_row_groups(rows)] == [group.tolist() for group in sorted_row_groups(ranks)], seed


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
