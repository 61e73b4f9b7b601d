"""The walked runs group nodes alike by one sort of their rows (``ranked_runs._alike``): the
groups are those a key per node gives, first node first, each node once, a node set apart (kept
off ids no mask holds, or loaded by a rank string) in a group of its own (its key reads both),
so the runs, and every answer, are those of the loop node by node."""

from __future__ import annotations

import random

import numpy as np
import pytest

from solver_placement._solver.counts.ranked_runs import _alike


@pytest.mark.parametrize("seed", range(30))
def test_nodes_are_grouped_as_by_a_key_per_node(seed: int) -> None:
    rng = random.Random(seed)
    nodes = rng.randint(1, 60)
    gpus = np.array([rng.choice((4, 8)) for _ in range(nodes)], dtype=np.int64)
    allowed = np.array([[rng.random() < 0.8 for _ in range(nodes)] for _ in range(rng.randint(1, 3))], dtype=bool)
    depth = rng.randint(0, 2)  # the domain levels of a class: none, or one or two per node
    levels = np.array([[rng.randint(0, 2) for _ in range(depth)] for _ in range(nodes)], dtype=np.int64).reshape(nodes, depth)
    kept = [{n: (0,) for n in range(nodes) if rng.random() < 0.1} for _ in range(allowed.shape[0])]
    loads = {(n, 0): "load" for n in range(nodes) if rng.random() < 0.1}
    candidates = np.flatnonzero(allowed.any(axis=0))
    apart = {n for held in kept for n in held} | {n for n, _ in loads}
    found = _alike(candidates, apart, [gpus, allowed.T, levels])
    keyed: dict[tuple[object, ...], list[int]] = {}
    for n in candidates.tolist():  # the loop it replaces: one key per node, set-apart nodes each their own
        apart = any(n in held for held in kept) or (n, 0) in loads
        keyed.setdefault(("apart", n) if apart else (int(gpus[n]), tuple(allowed[:, n].tolist()), tuple(levels[n].tolist())), []).append(n)
    assert [(first, group.tolist()) for first, group in found] == [(group[0], group) for group in keyed.values()]
