"""The layout figure: which hardware item holds which rank of which component.

Nodes are rows of hardware cells (GPUs, robots or other custom hardware, and the node itself for
node-only processes), one colour per component. Collocated components stack in lanes inside a
cell; each box is labelled with the process ranks on it; a process holding several adjacent items
is one joined box, and a strided process (GPUs 0 and 2) is joined by a bracket under its boxes.
A bracket over the boxes groups a tensor-parallel group, or, for components placed from
verl-style resource pools (``pools=``), one entry of the pool's ``process_on_nodes``, in a colour
and line style of the pool's own, which the legend names with the pool's components (roles).
Node groups are labelled bands on the left. Up to ``max_rows`` rows (128 by default) every node
gets a row, wrapped into side by side columns of at most 32 rows; beyond that, runs of like nodes
are drawn as one row each (:mod:`~solver_placement._plot.aggregate`), and ``nodes=`` picks a slice
of a larger cluster.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from matplotlib.figure import Figure

from solver_placement._cluster.cluster import Cluster
from solver_placement._cluster.ranks import format_ranks
from solver_placement._errors import agreeing, counted
from solver_placement._plot.aggregate import wants_aggregate
from solver_placement._plot.captions import LegendEntry, draw_header, draw_notes
from solver_placement._plot.labels import kinds_word
from solver_placement._plot.row_drawing import draw_rows
from solver_placement._plot.rows import Row, layout_rows, occupancy
from solver_placement._plot.scene import Scene
from solver_placement._plot.source import Drawn, LayoutSource, drawn_from, select_nodes
from solver_placement._plot.style import BRACKET_COLOR, TP_MARK, Mark, component_colors, pool_mark
from solver_placement._replica_groups import ReplicaGroup, replica_groups


class ComponentPool(Protocol):
    """What the layout reads of the verl-style resource pool a component was placed from (a
    ``spec.pools.PoolGroup``): the pool's name and the GPUs per node of one pool entry."""

    @property
    def pool(self) -> str: ...

    @property
    def entry(self) -> int: ...


def plot_layout(
    source: LayoutSource,
    *,
    cluster: Cluster | None = None,
    components: Sequence[str] | None = None,
    nodes: str | Iterable[int] | None = None,
    mode: str = "auto",
    max_rows: int = 128,
    title: str | None = None,
    pools: Mapping[str, ComponentPool] | None = None,
) -> Figure:
    """Draw where every process runs: one row of hardware cells per node, one colour per component.

    ``source`` is a solved layout: a ``Solution``, a framework's ``Prediction`` (``predict``), an
    RLinf ``ComponentPlacement`` already built, or placement records (a ``{component: [Placement]}``
    mapping or a flat list). Drawing never solves: a config, a path or a spec is refused; solve it
    first (``plot_layout(solve(path))``).
    ``cluster`` completes bare records with the hardware no process uses.
    ``components`` restricts (and orders) the components drawn; colours stay those of the full
    job, so figures of one job agree. ``nodes`` selects nodes (``"0-15"`` or ints). ``mode``:
    ``cells`` draws every node, ``aggregate`` draws runs of like nodes as one row, ``auto`` picks
    ``cells`` up to ``max_rows`` nodes. Rows past ``max_rows`` are left out, with a note.
    ``pools`` maps components to the verl-style resource pool they were placed from (as
    :func:`~solver_placement._frontends.verl.resource_pools.pool_groups` returns them): their groups are drawn as
    pool entries, each pool with its own mark.
    """
    drawn = drawn_from(source, cluster, "plot_layout")
    shown = drawn.select(components)
    node_list = select_nodes(nodes, drawn)
    aggregate = wants_aggregate(mode, len(node_list), max_rows)
    all_rows = layout_rows(drawn, shown, node_list, occupancy(drawn, shown, node_list), aggregate)
    rows, omitted = all_rows[:max_rows], all_rows[max_rows:]
    pooled = {name: group for name, group in (pools or {}).items() if name in shown}
    groups = {name: pooled[name].entry if name in pooled else drawn.tensor_parallel_size(name) for name in shown}
    groups = {name: size for name, size in groups.items() if size > 1 or name in pooled}
    marks = _pool_marks(pools or {})
    colors = component_colors(drawn.names)
    scene = Scene()
    legend = _legend(drawn, shown, rows, colors, groups, pooled, marks)
    top = draw_header(scene, title or "Layout", _summary(drawn, shown), legend)
    bottom = draw_rows(scene, drawn, rows, colors, groups, top, {name: marks[group.pool] for name, group in pooled.items()})
    draw_notes(scene, _notes(rows, omitted), bottom)
    return scene.figure()


def _summary(drawn: Drawn, shown: Sequence[str]) -> str:
    used = {p.cluster_node_rank for name in shown for p in drawn.placements[name]}
    processes = sum(len(drawn.placements[name]) for name in shown)
    return f"{counted(len(drawn.nodes), 'node')}, {len(used)} in use · {counted(processes, 'process', 'processes')} · labels are process ranks · collocated components stack in lanes"


def _legend(
    drawn: Drawn,
    shown: Sequence[str],
    rows: Sequence[Row],
    colors: dict[str, str],
    groups: dict[str, int],
    pools: Mapping[str, ComponentPool],
    marks: Mapping[str, Mark],
) -> list[LegendEntry]:
    """A colour per drawn component (with its process count; replicas of one component share
    one entry and colour); bracket glyphs only when drawn,
    worded with the hardware they join (GPUs, robots, nodes) and what their group is; a pool's
    glyph in its own mark, with its components (roles joined by ``+`` share one worker)."""
    legend = [LegendEntry(colors[group.members[0]], _legend_label(drawn, group)) for group in replica_groups(shown)]
    joined = [join.kind for row in rows for join in row.joins]
    if joined:
        legend.append(LegendEntry(BRACKET_COLOR, f"one process on several {kinds_word(joined)}", "bracket"))
    if any(name not in pools for name in groups):
        legend.append(LegendEntry(TP_MARK.color, "tensor-parallel group", "tp"))
    by_pool: dict[str, list[str]] = {}
    for name, group in pools.items():
        by_pool.setdefault(group.pool, []).append(name)
    for pool, names in by_pool.items():
        text = f"resource pool {pool} ({', '.join(names)}): {pools[names[0]].entry} GPUs per node entry"
        legend.append(LegendEntry(marks[pool].color, text, "tp", marks[pool].style))
    return legend


def _legend_label(drawn: Drawn, group: ReplicaGroup) -> str:
    """``actor (16)``: a component and its process count; replicas of one component as one entry,
    ``reward_0-31, 32 replicas (32)``, so 32 replicas do not make a legend 32 entries long."""
    processes = sum(len(drawn.placements[name]) for name in group.members)
    return f"{group.label} ({processes})" if group.replicas == 1 else f"{group.label}, {counted(group.replicas, 'replica')} ({processes})"


def _pool_marks(pools: Mapping[str, ComponentPool]) -> dict[str, Mark]:
    """One mark per pool, by the pool's position in the whole job, so a figure of some of its
    components marks each pool as the full figure does."""
    names = list(dict.fromkeys(group.pool for group in pools.values()))
    return {name: pool_mark(index) for index, name in enumerate(names)}


def _notes(rows: Sequence[Row], omitted: Sequence[Row]) -> list[str]:
    notes = []
    if any(len(row.nodes) > 1 for row in rows):
        notes.append(
            "A row 'nodes a-b' stands for a run of nodes with the same layout; its labels are the ranks on node a, "
            "and each further node adds the per-node step shown on the right."
        )
    if omitted:
        left_out = format_ranks(node for row in omitted for node in row.nodes)
        notes.append(f"{counted(len(omitted), 'more row')} ({agreeing(len(omitted), 'node')} {left_out}) not drawn; pass nodes= (CLI: --nodes) to draw a slice.")
    return notes
