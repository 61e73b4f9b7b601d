"""The shared array helpers (``_arrays.py``) give what the Python they replace gives: on seeded
random arrays, the same values, and for dictionaries the same keys in the same order."""

from __future__ import annotations

import random

import numpy as np
import pytest

from solver_placement._arrays import distinct, sorted_by_key


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
