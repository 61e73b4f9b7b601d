"""Merging runs of like nodes, so a 1,000-node cluster draws as a handful of rows.

Consecutive nodes merge when they look the same once each component's ranks are shifted to
start at zero, and those starting ranks advance by one constant step per node (node 1 holds
actor ranks 8-15 where node 0 holds 0-7). The merged row is drawn with the first node's ranks
and the steps.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeAlias

from solver_placement._errors import PlacementConfigError

MODES = ("auto", "cells", "aggregate")

#: Consecutive nodes drawn as one, and the per-component rank step from one to the next.
Run: TypeAlias = tuple[list[int], dict[str, int]]


def wants_aggregate(mode: str, count: int, max_rows: int) -> bool:
    """Whether to merge like nodes: always (``aggregate``), never (``cells``) or, for ``auto``,
    when ``count`` nodes would not fit in ``max_rows`` rows. Checks both arguments."""
    if mode not in MODES:
        raise PlacementConfigError(f"plot mode must be one of {', '.join(MODES)}, not {mode!r}")
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
        raise PlacementConfigError(f"plot max_rows must be a positive integer, not {max_rows!r}")
    return mode == "aggregate" or (mode == "auto" and count > max_rows)


def like_node_runs(
    nodes: Sequence[int], signature: Callable[[int], Hashable], bases: Callable[[int], dict[str, int]], aggregate: bool = True
) -> list[Run]:
    """Group consecutive node ids with equal signatures whose ranks advance by a constant step per node.

    ``signature`` describes a node with its ranks made relative to ``bases`` (each component's
    first rank on it). Without ``aggregate`` every node is a run of its own.
    """
    if not aggregate:
        return [([node], {}) for node in nodes]
    runs: list[Run] = []
    previous_signature: Hashable = None
    for node in nodes:
        sig, base = signature(node), bases(node)
        if runs and node == runs[-1][0][-1] + 1 and sig == previous_signature:
            run_nodes, steps = runs[-1]
            last = bases(run_nodes[-1])
            step = {name: base[name] - last[name] for name in base}
            if len(run_nodes) == 1 or step == steps:
                run_nodes.append(node)
                runs[-1] = (run_nodes, step)
                continue
        runs.append(([node], {}))
        previous_signature = sig
    return runs
