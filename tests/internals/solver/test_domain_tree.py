"""``domain_fill.domain_tree`` nests nodes by domain as grouping level by level does: on seeded
random labels (repeated values under different parents, nodes given out of id order, empty
input), the same leaves in the same order at every depth."""

from __future__ import annotations

import numpy as np
import pytest

from solver_placement._solver.counts.domain_fill import Domain, Leaf, domain_tree


def grouped(nodes: list[int], levels: list[list[int]], depth: int = 0) -> list:
    """The tree by the definition: the nodes grouped by their domain at ``depth`` (groups in
    order of their first node, nodes in the order given), each group again at the next depth."""
    groups: dict[int, list[int]] = {}
    for node in nodes:
        groups.setdefault(levels[depth][node], []).append(node)
    if depth == len(levels) - 1:
        return list(groups.values())
    return [grouped(group, levels, depth + 1) for group in groups.values()]


def plain(tree: list[Domain]) -> list:
    """The tree with its leaves as lists of nodes."""
    return [domain.nodes.tolist() if isinstance(domain, Leaf) else plain(domain) for domain in tree]


@pytest.mark.parametrize("seed", range(60))
def test_domain_tree_nests_as_grouping_level_by_level(seed: int) -> None:
    rng = np.random.default_rng(seed)
    size, depth = int(rng.integers(0, 30)), int(rng.integers(1, 4))
    levels = [rng.integers(0, int(rng.integers(1, 5)), size=size) for _ in range(depth)]  # few values: repeats under other parents
    nodes = rng.permutation(size)[: int(rng.integers(0, size + 1))]
    expected = grouped(nodes.tolist(), [level.tolist() for level in levels]) if nodes.size else []
    assert plain(domain_tree(nodes.astype(np.int64), levels)) == expected, seed
