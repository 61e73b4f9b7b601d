"""A cluster in one short line (``repr(cluster)``): its nodes as runs of like nodes, and its groups.

Why a module of its own: a cluster is printed in logs, tracebacks and interactive sessions, where
a dump of its tables (thousands of nodes) is unreadable. The line is deterministic and bounded:
at most :data:`MAX_RUNS` runs of nodes and :data:`MAX_GROUPS` groups are named, each with its
ranks cut to a count when they do not fit in :data:`MAX_RANKS_CHARS` characters.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from solver_placement._cluster.layout import NodeGroup
from solver_placement._cluster.ranks import format_ranks
from solver_placement._constants import ACCELERATOR
from solver_placement._errors import counted, cut

#: Runs of like nodes named before the rest are counted.
MAX_RUNS = 4
#: Node groups named before the rest are counted.
MAX_GROUPS = 4
#: Longest rank list shown; a longer one is shown as its number of nodes.
MAX_RANKS_CHARS = 24
#: Longest label or type name shown (its middle elided past this).
MAX_NAME_CHARS = 32


def describe_cluster(
    gpus: Sequence[int],
    models: Sequence[str | None],
    types: Sequence[str],
    items: Sequence[tuple[str, np.ndarray]],
    groups: Sequence[NodeGroup],
    free_gpus_only: bool,
) -> str:
    """``Cluster(2 nodes x 8 NV_GPU H100; groups: ...)``: per node its GPUs (count, type, model)
    and custom items (``items``: each type with its count per node), runs of like nodes merged."""
    shapes = [_shape(node, gpus, models, types, items) for node in range(len(gpus))]
    runs: list[tuple[int, int, str]] = []
    for node, shape in enumerate(shapes):
        if runs and runs[-1][2] == shape:
            runs[-1] = (runs[-1][0], node, shape)
        else:
            runs.append((node, node, shape))
    nodes = counted(len(gpus), "node")
    if len(runs) == 1:
        text = f"{nodes} x {runs[0][2]}"
    else:
        shown = [f"{first if first == last else f'{first}-{last}'} x {shape}" for first, last, shape in runs[:MAX_RUNS]]
        text = f"{nodes}: " + ", ".join(shown) + _more(len(runs) - MAX_RUNS, "runs")
    if groups:
        named = [f"{cut(group.label, MAX_NAME_CHARS)} {_ranks(group.node_ranks)}{_kind(group)}" for group in groups[:MAX_GROUPS]]
        text += "; groups: " + ", ".join(named) + _more(len(groups) - MAX_GROUPS, "groups")
    return f"Cluster({text}{'; free GPUs only' if free_gpus_only else ''})"


def _shape(node: int, gpus: Sequence[int], models: Sequence[str | None], types: Sequence[str], items: Sequence[tuple[str, np.ndarray]]) -> str:
    """One node's hardware: ``8 NV_GPU H100``, ``0 GPUs``, then ``+2 Franka`` per custom type."""
    accelerators = f"{gpus[node]} {' '.join(cut(name, MAX_NAME_CHARS) for name in (types[node], models[node]) if name)}" if gpus[node] else "0 GPUs"
    custom = "".join(f" +{int(counts[node])} {cut(kind, MAX_NAME_CHARS)}" for kind, counts in items if counts[node])
    return accelerators + custom


def _ranks(ranks: Sequence[int]) -> str:
    """A group's nodes as a rank list, or their number when the list is long."""
    text = format_ranks(ranks)
    return text if len(text) <= MAX_RANKS_CHARS else f"({len(ranks)} nodes)"


def _kind(group: NodeGroup) -> str:
    """What a group counts, when it is neither GPUs nor nodes: its custom hardware type."""
    return f" ({cut(group.hardware_type, MAX_NAME_CHARS)})" if group.hardware_type not in (None, ACCELERATOR) else ""


def _more(hidden: int, noun: str) -> str:
    """How many were left unnamed, if any."""
    return f", +{hidden} more {noun}" if hidden > 0 else ""
