"""The walk that prices a node's patterns visits one strided class's ids residue by residue
(``counts/local_costs.visit_order``): a layout's cost is a sum over its GPUs whatever order they
are chosen in, so it lists the same patterns at the same least costs as the search that lays a
pattern out GPU by GPU in id order (``contiguity.Local``), with one open run where id order keeps
one per residue. On 72-GPU nodes (five GPUs three apart beside two exclusive classes) the walk
in id order passed its state limit and the count model declined."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace

import numpy as np
import pytest

from solver_placement._solver.counts.contiguity import Local
from solver_placement._solver.counts.local_costs import MAX_WALK_STATES, NodeWalk, least_layout, node_patterns, visit_order
from solver_placement._solver.counts.strided import progressions_of


def _no_budget(stage: str) -> None:
    """Budget checks of a test: never out of time."""


def strided_walk(rng: random.Random) -> NodeWalk:
    """A node of 4-8 GPUs, class 0 in progressions of 2-3 ids 2-3 apart (groups of one or two),
    one or two classes of any GPU beside it, random exclusions, members, GPUs kept off and classes not
    allowed."""
    size, capacity = rng.randint(2, 3), rng.randint(4, 8)
    apart = {(a, b) for a in range(size) for b in range(a + 1, size) if rng.random() < 0.5}
    stacks = tuple(s for r in range(1, size + 1) for s in itertools.combinations(range(size), r)
                   if not any((a, b) in apart for a, b in itertools.combinations(s, 2)))  # fmt: skip
    run, step = rng.choice((2, 3)), rng.choice((2, 3))
    return NodeWalk(
        capacity,
        tuple(rng.randint(1, 3) for _ in range(size)),
        (run * rng.choice((1, 1, 2)), *(rng.choice((1, 1, 2)) for _ in range(size - 1))),
        (True, *(rng.random() < 0.9 for _ in range(size - 1))),
        tuple(tuple(sorted(rng.sample(range(capacity), rng.choice((0, 0, 0, 1))))) for _ in range(size)),
        (run, *(1,) * (size - 1)),
        stacks,
        steps=(step, *(1,) * (size - 1)),
    )


@pytest.mark.parametrize("seed", range(4))
def test_residue_order_prices_every_pattern_as_the_search_in_id_order(seed: int) -> None:
    rng = random.Random(seed)
    compared = 0
    for _ in range(15):
        walk = strided_walk(rng)
        assert visit_order(walk) != list(range(walk.capacity))  # residue by residue
        patterns, costs = node_patterns(walk, _no_budget)
        listed = {tuple(p): c for p, c in zip(patterns.tolist(), costs.tolist(), strict=True)}
        search = Local(walk.weights, walk.stacks, walk.capacity, walk.kept_off, walk.runs, _no_budget, steps=walk.steps)
        most = [walk.capacity // width if allowed else 0 for width, allowed in zip(walk.widths, walk.allowed, strict=True)]
        for groups in itertools.product(*(range(m + 1) for m in most)):
            demand = tuple(g * w for g, w in zip(groups, walk.widths, strict=True))
            least = search._best(0, demand, (0,) * sum(walk.steps)) if any(demand) else 0.0
            assert listed.get(groups, float("inf")) == least, (walk, groups)
            compared += least != float("inf")
    assert compared > 100


def test_a_runs_class_beside_the_strided_one_keeps_id_order() -> None:
    """Another class of consecutive runs needs its ids adjacent: the walk stays in id order."""
    walk = NodeWalk(6, (1, 1), (2, 2), (True, True), ((), ()), (2, 2), ((0,), (1,)), steps=(2, 1))
    assert visit_order(walk) == list(range(6))


def test_wide_strided_nodes_are_priced_within_the_walks_states() -> None:
    """The node the count model declined: 72 GPUs, five GPUs three apart, a class kept off them
    and a third kept off that one. Every pattern is priced (each class alone at its least ids:
    the progressions' lowest, the others from id 0)."""
    walk = NodeWalk(72, (1, 1, 1), (5, 1, 1), (True, True, True), ((), (), ()), (5, 1, 1), ((0,), (1,), (2,), (0, 2)), steps=(3, 1, 1))
    patterns, costs = node_patterns(walk, _no_budget)
    listed = {tuple(p): c for p, c in zip(patterns.tolist(), costs.tolist(), strict=True)}
    assert max(p[0] for p in listed) == 12  # four progressions per residue's chain of 24 ids
    assert listed[(1, 0, 0)] == 0 + 3 + 6 + 9 + 12
    assert listed[(0, 72, 0)] == 71 * 72 // 2
    assert listed[(12, 0, 72)] == sum(range(72)) + sum(range(60))  # the reward on every id, the actor sharing ids 0-59 (its 12 progressions)
    assert len(listed) < MAX_WALK_STATES


@pytest.mark.parametrize("seed", range(2))
def test_a_class_capped_at_its_groups_loses_only_the_patterns_above_them(seed: int) -> None:
    """``NodeWalk.most`` (each class's GPUs over all its groups, ``ranked_runs.py``): the walk
    lists the patterns it lists without it that give no class more, at the same costs; a
    pattern above a class's groups is one no answer uses (its groups are counted exactly)."""
    rng = random.Random(seed)
    for _ in range(15):
        walk = strided_walk(rng)
        most = tuple(width * rng.randint(0, walk.capacity // width) for width in walk.widths)
        patterns, costs = node_patterns(walk, _no_budget)
        within = (patterns * np.array(walk.widths) <= np.array(most)).all(axis=1)
        capped, capped_costs = node_patterns(replace(walk, most=most), _no_budget)
        assert capped.tolist() == patterns[within].tolist()
        assert capped_costs.tolist() == costs[within].tolist()


@pytest.mark.parametrize("seed", range(2))
def test_the_walk_traced_back_lays_out_each_pattern_at_its_least_cost(seed: int) -> None:
    """``least_layout`` (what the layout of a weighed ``contiguity`` uses where a class takes
    progressions): for every demand the search in id order can lay out, a layout of that least
    cost whose GPUs hold stacks they admit, every class its demand, the strided one in whole
    progressions; a demand no layout holds is refused."""
    rng = random.Random(seed)
    laid = 0
    for _ in range(6):
        drawn = strided_walk(rng)
        walk = replace(drawn, widths=(1,) * len(drawn.weights), allowed=(True,) * len(drawn.weights))  # demands in GPUs, as the layout asks
        search = Local(walk.weights, walk.stacks, walk.capacity, walk.kept_off, walk.runs, _no_budget, steps=walk.steps)
        for demand in itertools.product(*(range(0, walk.capacity + 1, run) for run in walk.runs)):
            least = search._best(0, demand, (0,) * sum(walk.steps))
            if least == float("inf"):
                with pytest.raises(ValueError):
                    least_layout(walk, demand, _no_budget)
                continue
            layout = least_layout(walk, demand, _no_budget)
            assert sum(gpu * sum(walk.weights[k] for k in stack) for gpu, stack in enumerate(layout)) == least
            assert all(not stack or (stack in walk.stacks and all(gpu not in walk.kept_off[k] for k in stack)) for gpu, stack in enumerate(layout))
            held = [np.array([gpu for gpu, stack in enumerate(layout) if k in stack], dtype=np.int64) for k in range(len(demand))]
            assert [ids.size for ids in held] == list(demand)
            assert progressions_of(held[0], walk.runs[0], walk.steps[0], demand[0]) is not None
            laid += 1
    assert laid > 40
