"""A node shape's whole-node patterns listed in arrays by the walk over its GPUs
(``runs.walked_patterns``) are the vectors the search one vector at a time lists
(``runs.searched_patterns``), in the same order: the count model reads the same tables, so its
answers do not move (issue 34, other hardware on 331 nodes: 0.5 s of listing became 0.03)."""

from __future__ import annotations

import itertools
import random

import pytest

from solver_placement._solver.counts.fixed_loads import FixedLoad
from solver_placement._solver.counts.runs import searched_patterns, typed_patterns, walked_patterns

#: Vectors the search may list before it gives up (the tests' nodes hold far fewer).
LIMIT = 100_000


def _no_check(_: str) -> None:
    """The budget's check, never out of time here."""


def random_node(rng: random.Random) -> dict:
    """Two to four classes on 2-9 GPUs: some pairs kept apart (the stacks: the maximal sets with
    no such pair; now and then only pairs, as memory that fits in pairs only), some GPUs kept
    off per class, a class or two not allowed, runs of 1-3 ids 1-3 apart with groups of whole
    runs, and now and then a GPU with a fixed load that admits one class at most beside it."""
    classes, capacity = rng.randint(2, 4), rng.randint(2, 9)
    pairs = {(a, b) for a in range(classes) for b in range(a + 1, classes) if rng.random() < 0.4}
    most = 2 if rng.random() < 0.2 else classes
    apart = [stack for size in range(min(classes, most), 0, -1) for stack in itertools.combinations(range(classes), size)
             if not any((a, b) in pairs for a, b in itertools.combinations(stack, 2))]  # fmt: skip
    stacks = tuple(sorted(s for s in apart if not any(set(s) < set(t) for t in apart)))
    runs = tuple(rng.choice((1, 1, 2, 3)) for _ in range(classes))
    steps = tuple(rng.choice((1, 1, 2, 3)) if run > 1 else 1 for run in runs)
    widths = tuple(run * rng.randint(1, 2) for run in runs)
    mask = tuple(rng.random() < 0.85 for _ in range(classes))
    keep_off = tuple(tuple(sorted(rng.sample(range(capacity), rng.randint(0, capacity // 2)))) if allowed else tuple(range(capacity)) for allowed in mask)
    loaded = rng.random() < 0.3
    loads = tuple(FixedLoad(1, 2, (), None) if loaded and rng.random() < 0.4 else None for _ in range(capacity)) if loaded else ()
    return {"widths": widths, "mask": mask, "stacks": stacks, "capacity": capacity, "keep_off": keep_off, "runs": runs,
            "loads": loads, "fits": (lambda load, stack: len(stack) <= 1) if loaded else None, "steps": steps}  # fmt: skip


@pytest.mark.parametrize("seed", range(6))
def test_the_walk_lists_what_the_search_lists(seed: int) -> None:
    """On random small nodes the two listings agree vector for vector, and ``typed_patterns``
    (which takes the walk) lists them too."""
    rng = random.Random(seed)
    for _ in range(40):
        node = random_node(rng)
        args = (node["widths"], node["mask"], node["stacks"], node["capacity"], node["keep_off"], node["runs"])
        rest = (node["loads"], node["fits"], node["steps"])
        walked = walked_patterns(*args, _no_check, *rest)
        assert walked is not None, node
        searched = list(searched_patterns(*args, LIMIT, _no_check, *rest))
        assert [tuple(row) for row in walked.tolist()] == searched, node
        assert list(typed_patterns(*args, LIMIT, _no_check, *rest)) == searched


def test_groups_not_whole_runs_are_left_to_the_search() -> None:
    """A class whose groups are not whole runs (a group of 3 GPUs, runs of 2) is not the walk's:
    ``walked_patterns`` says so, and ``typed_patterns`` still lists its vectors by the search."""
    args = ((3, 1), (True, True), ((0, 1),), 8, ((), ()), (2, 1))
    assert walked_patterns(*args, _no_check) is None
    assert list(typed_patterns(*args, LIMIT, _no_check)) == list(searched_patterns(*args, LIMIT, _no_check))


def test_past_the_limit_the_walk_overflows_as_the_search_does() -> None:
    """More vectors than the caller's limit: both raise ``OverflowError`` (``patterns.shapes``
    reads it as too many patterns)."""
    args = ((1, 1, 1), (True, True, True), ((0, 1, 2),), 8, ((0,), (), ()), (1, 2, 1))
    total = len(list(searched_patterns(*args, LIMIT, _no_check)))
    with pytest.raises(OverflowError):
        list(typed_patterns(*args, total - 1, _no_check))
    with pytest.raises(OverflowError):
        list(searched_patterns(*args, total - 1, _no_check))
    assert len(list(typed_patterns(*args, total, _no_check))) == total
