"""The words on the figures: hardware cells, node runs and per-node rank steps.

Rank sets are written by :func:`~solver_placement._cluster.ranks.format_ranks`, so a label reads
as the user would type it in a placement string.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from solver_placement._cluster.ranks import format_ranks
from solver_placement._constants import ACCELERATOR, NODE

#: A hardware cell of a node: (hardware kind, local index on the node).
Cell = tuple[str, int]


def cell_name(cell: Cell) -> str:
    """``GPU 3``, ``robot 1``, or ``node`` for the node used as one resource."""
    kind, index = cell
    if kind == ACCELERATOR:
        return f"GPU {index}"
    return "node" if kind == NODE else f"{kind} {index}"


def nodes_name(nodes: Sequence[int]) -> str:
    """``node 3`` or ``nodes 0-767`` for a run of like nodes drawn as one row or panel."""
    return f"node {nodes[0]}" if len(nodes) == 1 else f"nodes {format_ranks(nodes)}"


def steps_text(steps: Mapping[str, int]) -> str:
    """How the ranks of an aggregated row advance from one node of the run to the next."""
    return "per node: " + ", ".join(f"{name} +{step}" for name, step in steps.items())


def kind_word(kind: str) -> str:
    """The hardware kind in the plural, as a legend says it: ``GPUs``, ``nodes``, ``robots``."""
    if kind == ACCELERATOR:
        return "GPUs"
    return "nodes" if kind == NODE else f"{kind}s"


def kinds_word(kinds: Iterable[str]) -> str:
    """The plural words of several kinds (config order kept, each once): ``GPUs`` or ``GPUs/robots``."""
    return "/".join(kind_word(kind) for kind in dict.fromkeys(kinds))
