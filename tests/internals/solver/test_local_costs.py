"""The walk over a node's GPUs (``counts/local_costs.py``) lists exactly the patterns the
per-pattern search (``contiguity.Local``) can lay out, each at the same least sum of local ids:
the weighed-contiguity count model prices its patterns with the walk and lays out its nodes with
the search, so the two must agree on every pattern, with GPUs kept off, runs of consecutive
GPUs, classes not allowed and any graph of classes kept apart."""

from __future__ import annotations

import itertools
import random

import pytest

from solver_placement._solver.counts.contiguity import Local
from solver_placement._solver.counts.local_costs import MAX_WALK_STATES, NodeWalk, TooManyWalkStates, node_patterns


def _no_budget(stage: str) -> None:
    """Budget checks of a test: never out of time."""


def random_walk(rng: random.Random) -> NodeWalk:
    """A node of 2-8 GPUs, 1-4 classes with random exclusions, members, runs, widths, GPUs kept
    off and classes not allowed."""
    size, capacity = rng.randint(1, 4), rng.choice((2, 4, 6, 8))
    apart = {(a, b) for a in range(size) for b in range(a + 1, size) if rng.random() < 0.5}
    stacks = tuple(s for r in range(1, size + 1) for s in itertools.combinations(range(size), r)
                   if not any((a, b) in apart for a, b in itertools.combinations(s, 2)))  # fmt: skip
    runs = tuple(rng.choice((1, 1, 2)) for _ in range(size))
    return NodeWalk(
        capacity,
        tuple(rng.randint(1, 3) for _ in range(size)),
        tuple(run * rng.choice((1, 2)) for run in runs),
        tuple(rng.random() < 0.9 for _ in range(size)),
        tuple(tuple(sorted(rng.sample(range(capacity), rng.choice((0, 0, 1, 2))))) for _ in range(size)),
        runs,
        stacks,
    )


@pytest.mark.parametrize("seed", range(4))
def test_the_walk_prices_every_pattern_as_the_search_does(seed: int) -> None:
    rng = random.Random(seed)
    compared = 0
    for _ in range(60):
        walk = random_walk(rng)
        patterns, costs = node_patterns(walk, _no_budget)
        assert patterns[0].tolist() == [0] * len(walk.weights)  # the empty pattern first
        listed = {tuple(p): c for p, c in zip(patterns.tolist(), costs.tolist(), strict=True)}
        search = Local(walk.weights, walk.stacks, walk.capacity, walk.kept_off, walk.runs, _no_budget)
        most = [walk.capacity // width if allowed else 0 for width, allowed in zip(walk.widths, walk.allowed, strict=True)]
        for groups in itertools.product(*(range(m + 1) for m in most)):
            demand = tuple(g * w for g, w in zip(groups, walk.widths, strict=True))
            least = search._best(0, demand, (0,) * len(demand)) if any(demand) else 0.0
            assert listed.get(groups, float("inf")) == least, (walk, groups)
            compared += least != float("inf")
    assert compared > 1_000


def test_a_walk_past_its_states_says_so() -> None:
    walk = NodeWalk(64, (1,) * 12, (1,) * 12, (True,) * 12, ((),) * 12, (1,) * 12, tuple((k,) for k in range(12)))
    with pytest.raises(TooManyWalkStates):
        node_patterns(walk, _no_budget)
    assert MAX_WALK_STATES < 65**12
