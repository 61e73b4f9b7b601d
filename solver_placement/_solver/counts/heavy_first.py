"""A first answer for the count model over whole-node patterns: node by node, the pattern that
covers the most GPUs still asked (first fit over patterns, heaviest first).

Why: where only ``nodes`` is weighed, the answer's order among equal optima is whatever CP-SAT
reaches first, and the low-ranks run cannot change it when every node shape starts at one rank
(``model.solve_counts``). Started here, CP-SAT keeps the heavy patterns of this answer where
they are optimal, and the layout puts heavier nodes first, so GPUs stay at low ranks; and the
search starts from an answer instead of looking for one (the relaxed path over 8,960 patterns on
201 nodes: 0.36 -> 0.06 s CPU). ``level_model.LevelModel`` starts its model from the same
answer; the two give the same placements on the benchmark's cycles of exclusions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from solver_placement._solver.counts.patterns import Shape
from solver_placement._solver.counts.problem import CountProblem


def heavy_first(problem: CountProblem, shapes: Sequence[Shape]) -> dict[tuple[int, int, int], int] | None:
    """Nodes per (shape, table 0, pattern) of the greedy answer over ``shapes`` (one table of
    whole-node patterns each), those used; None when it leaves groups unplaced (no answer to
    start from: the model finds its own)."""
    left = np.array([c.groups for c in problem.classes], dtype=np.int64)
    per_group = np.array([c.width * len(c.members) for c in problem.classes], dtype=np.int64)
    chosen: dict[tuple[int, int, int], int] = {}
    for s, shape in enumerate(shapes):
        table = shape.tables[0]
        patterns = np.array(table.patterns, dtype=np.int64).reshape(len(table.patterns), len(table.columns))
        index = np.array([shape.part[k] for k in table.columns], dtype=np.int64)
        weight = patterns @ per_group[index]
        nodes = int(shape.nodes.size)
        while nodes:
            fits = (patterns <= left[index]).all(axis=1)
            best = int(np.argmax(np.where(fits, weight, -1)))  # the empty pattern always fits
            asked = patterns[best] > 0
            times = min(nodes, int((left[index][asked] // patterns[best][asked]).min())) if asked.any() else nodes  # as often as it fits
            chosen[s, 0, best] = chosen.get((s, 0, best), 0) + times
            left[index] -= times * patterns[best]
            nodes -= times
    return None if left.any() else chosen
