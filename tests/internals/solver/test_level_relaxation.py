"""A peak level's linear relaxation (``counts/level_relaxation.py``) held against every answer
of small levels, enumerated: its bound is a real bound (and meets the optimum where it can), its
rounded answer is an answer of the value it states, and reduced-cost fixing keeps every pattern
of every answer at most the cap. The count path through it is held against the flat model by
``test_count_balance.py`` (the per-node form kept out: every level is ``level_model.py``)."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from solver_placement._solver.counts.level_relaxation import LevelBounds, LevelColumns, relax_level


def _never(stage: str) -> None:
    """A budget that never runs out (these levels take milliseconds)."""


def _level(rng: random.Random) -> tuple[list[LevelColumns], list[int], list[np.ndarray]]:
    """1-2 shapes of 1-3 nodes over 2 classes, the empty pattern and 2-5 others (0-2 groups of
    each class), costs as the ``nodes`` term has them (weight times the classes present), groups
    asked drawn from what a random answer places (so most levels are feasible), a random mask."""
    shapes, placed = [], np.zeros(2, dtype=np.int64)
    weight = rng.choice([1, 10, 10_000])
    for _ in range(rng.randint(1, 2)):
        others = {tuple(rng.randint(0, 2) for _ in range(2)) for _ in range(rng.randint(2, 5))} - {(0, 0)}
        patterns = np.array([(0, 0), *sorted(others)], dtype=np.int64)
        nodes = rng.randint(1, 3)
        costs = weight * (patterns > 0).sum(axis=1)
        shapes.append(LevelColumns((0, 1), patterns, costs, patterns.sum(axis=1), nodes))
        for _ in range(nodes):
            placed += patterns[rng.randrange(len(patterns))]
    allowed = []
    for shape in shapes:
        mask = np.array([True] + [rng.random() < 0.8 for _ in range(len(shape.patterns) - 1)])
        allowed.append(mask)
    return shapes, placed.tolist(), allowed


def _answers(shapes: list[LevelColumns], groups: list[int], allowed: list[np.ndarray]) -> list[tuple[int, tuple[np.ndarray, ...]]]:
    """Every answer of the level (nodes per allowed pattern, summing to each shape's nodes and
    to each class's groups) with its value."""
    per_shape = []
    for shape, mask in zip(shapes, allowed):
        options = []
        for chosen in itertools.combinations_with_replacement(np.flatnonzero(mask).tolist(), shape.nodes):
            counts = np.bincount(np.array(chosen, dtype=np.int64), minlength=len(shape.patterns))
            options.append(counts)
        per_shape.append(options)
    found = []
    for combination in itertools.product(*per_shape):
        held = sum((counts @ shape.patterns for counts, shape in zip(combination, shapes)), np.zeros(2, dtype=np.int64))
        if held.tolist() == groups:
            found.append((sum(int(counts @ shape.costs) for counts, shape in zip(combination, shapes)), combination))
    return found


@pytest.mark.parametrize("seed", range(300))
def test_the_bound_holds_and_the_rounding_is_an_answer(seed: int) -> None:
    rng = random.Random(seed)
    shapes, groups, allowed = _level(rng)
    relaxed = relax_level(shapes, groups, allowed, None, _never)
    assert relaxed is not None
    answers = _answers(shapes, groups, allowed)
    if not answers:  # no answer at this level: the rounding finds none either
        assert relaxed.answer is None
        return
    best = min(value for value, _ in answers)
    assert relaxed.bound <= best
    if relaxed.answer is not None:
        assert relaxed.value >= best
        assert any(value == relaxed.value and all((a == b).all() for a, b in zip(counts, relaxed.answer)) for value, counts in answers)
    for cap in {best, best + 1, max(value for value, _ in answers)}:
        needed = relaxed.needed(cap)
        for value, counts in answers:
            if value <= cap:
                assert all(needed[s][np.flatnonzero(c)].all() for s, c in enumerate(counts))


def test_a_tight_bound_proves_the_rounding_with_no_search() -> None:
    """Two classes that never share a node: the relaxation's optimum is whole, so its rounding
    meets its bound: the level is answered without CP-SAT (``LevelModel.solve``), and a cap at
    that value (``below=40``) is proven empty by the bound alone."""
    patterns = np.array([(0, 0), (1, 0), (2, 0), (0, 1), (0, 2)], dtype=np.int64)
    shape = LevelColumns((0, 1), patterns, 10 * (patterns > 0).sum(axis=1), patterns.sum(axis=1), 4)
    relaxed = relax_level([shape], [4, 3], [np.ones(5, dtype=bool)], None, _never)
    assert relaxed is not None and relaxed.answer is not None
    assert relaxed.bound == relaxed.value == 40  # two nodes of two groups each, two for three groups
    assert (relaxed.answer[0] @ patterns).tolist() == [4, 3]


def test_a_shape_that_allows_no_pattern_is_left_to_the_search() -> None:
    """Components placed first load a shape's nodes above the peak, so none of its patterns is
    allowed (not even the empty one): no relaxation is stated, CP-SAT decides (the fast tier's
    hypothesis found this: two nodes, a filled window and a component kept off it)."""
    patterns = np.array([(0,), (1,)], dtype=np.int64)
    shape = LevelColumns((0,), patterns, np.array([0, 1]), np.array([3, 4]), 1)
    assert relax_level([shape], [1], [np.zeros(2, dtype=bool)], None, _never) is None


def test_no_shape_at_all_is_left_to_the_search() -> None:
    """Every node taken by what is placed first leaves no shape: no relaxation is stated (the
    slow tier's hypothesis found this: one node of two GPUs filled by a rank string, one
    component kept off it, ``balance`` weighed)."""
    assert relax_level([], [1], [], None, _never) is None


@pytest.mark.parametrize("seed", range(40))
def test_bounds_kept_from_level_to_level_are_each_levels_bound(seed: int) -> None:
    """One program asked level after level (``LevelBounds``: masks in turn, columns and basis
    kept) bounds each level that has an answer as the level's own program does: the same
    number, never above the best answer. (A level with none has no bound to meet: both
    programs then price their artificial room, each on its own scale.)"""
    rng = random.Random(seed)
    shapes, groups, _ = _level(rng)
    kept = LevelBounds(shapes, groups)
    for _ in range(6):
        allowed = [np.array([True] + [rng.random() < 0.85 for _ in range(len(shape.patterns) - 1)]) for shape in shapes]
        bound = kept.bound(allowed, _never)
        answers = _answers(shapes, groups, allowed)
        if not answers:
            continue
        own = relax_level(shapes, groups, allowed, -(2**62), _never)
        assert own is not None and bound == own.bound
        assert bound <= min(value for value, _ in answers)
    assert kept.bound([np.zeros(len(shape.patterns), dtype=bool) for shape in shapes], _never) is None


def test_bounds_kept_from_level_to_level_cut_by_the_patterns_allowed() -> None:
    """The fewest-nodes cut of a level is that of its own patterns: three groups on nodes of
    one, two or four (costing 10, 11 and 12), the four not allowed at the second level; there
    two nodes are the fewest (a bound of 21, the optimum: a node of two and a node of one),
    where the cut of every pattern would say one (16.5, so 17)."""
    patterns = np.array([[0], [1], [2], [4]], dtype=np.int64)
    shape = LevelColumns((0,), patterns, np.array([0, 10, 11, 12]), patterns[:, 0], 3)
    kept = LevelBounds([shape], [3])
    assert kept.bound([np.ones(4, dtype=bool)], _never) == relax_level([shape], [3], [np.ones(4, dtype=bool)], -(2**62), _never).bound
    without_four = [np.array([True, True, True, False])]
    assert kept.bound(without_four, _never) == 21 == relax_level([shape], [3], without_four, -(2**62), _never).bound
