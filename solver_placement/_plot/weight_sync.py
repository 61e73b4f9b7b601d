"""The weight-sync figure: every rollout process linked to the actor ranks on its GPUs.

One panel per node: the actor row (one box per GPU, labelled with the actor ranks on it, the
actor's tensor-parallel groups bracketed above), the rollout row (one box per process, naming its
GPUs) and a link from each rollout GPU to the actor rank it pairs with. A rollout GPU with no
actor rank gets a dashed link to an empty cell: its weights must come over the network.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure

from solver_placement._cluster.cluster import Cluster
from solver_placement._cluster.ranks import format_ranks
from solver_placement._errors import agreeing, counted
from solver_placement._plot.aggregate import wants_aggregate
from solver_placement._plot.captions import LegendEntry, draw_header, draw_notes
from solver_placement._plot.labels import nodes_name
from solver_placement._plot.scene import BOX_PAD, CELL_W, HEADER_H, LABEL_W, MARGIN, Scene
from solver_placement._plot.source import LayoutSource, drawn_from
from solver_placement._plot.style import (
    BRACKET_COLOR,
    EMPTY_EDGE,
    HEADER_TEXT,
    LINK_COLORS,
    MUTED_TEXT,
    PANEL_EDGE,
    PANEL_FACE,
    UNPAIRED_LINK,
    component_colors,
    darker,
    fit_text,
    text_color,
)
from solver_placement._plot.sync_links import (
    ModelParallelPlacement,
    Panel,
    WeightSyncLink,
    links_from_records,
    links_from_sync_map,
    sync_panels,
    uses_sync_map,
)

# Weight-sync geometry, in inches: actor and rollout rows, the links between them, the TP brackets above.
SYNC_ROW_H = 0.3
SYNC_LINK_H = 0.75
SYNC_BRACKET_H = 0.24
PANEL_GAP = 0.25
CELLS_X = MARGIN + LABEL_W  # left edge of GPU 0 in every panel


def plot_weight_sync(
    source: LayoutSource,
    *,
    actor: str = "actor",
    rollout: str = "rollout",
    cluster: Cluster | None = None,
    mode: str = "auto",
    max_rows: int = 8,
    title: str | None = None,
) -> Figure:
    """Draw the CUDA IPC weight-sync pairing: each rollout process and the actor ranks on its GPUs.

    In collocated mode every GPU of a rollout process also holds an actor rank, which hands its
    weight shard over CUDA IPC without a copy; a strided rollout engine links to every
    ``stride``-th rank of one actor tensor-parallel group (bracketed above the actor row). A
    rollout GPU with no actor rank (disaggregated mode) gets a dashed link to an empty cell: its
    weights must come over the network. One panel per node; like nodes are merged when there are
    more than ``max_rows`` of them (``mode`` as in :func:`plot_layout`). ``source`` is anything
    :func:`plot_layout` takes (a solved layout: drawing never solves); for a
    ``ModelParallelComponentPlacement`` in collocated mode its own ``weight_sync_map`` gives the
    pairing.
    """
    drawn = drawn_from(source, cluster, "plot_weight_sync")
    drawn.select([actor, rollout])
    links = links_from_sync_map(source) if uses_sync_map(source, actor, rollout) else links_from_records(drawn, actor, rollout)
    actor_tp = source.actor_tp_size if isinstance(source, ModelParallelPlacement) else drawn.tensor_parallel_size(actor)
    aggregate = wants_aggregate(mode, len({link.node for link in links}), max_rows)
    all_panels = sync_panels(drawn, actor, links, aggregate)
    panels, omitted = all_panels[:max_rows], all_panels[max_rows:]
    colors = component_colors(drawn.names)
    legend = [LegendEntry(colors[actor], f"{actor} rank on the GPU"), LegendEntry(colors[rollout], f"{rollout} process")]
    if actor_tp > 1 and any(panel.actor_ranks for panel in panels):
        legend.append(LegendEntry(BRACKET_COLOR, f"{actor} tensor-parallel group of {actor_tp}", "tp"))
    scene = Scene()
    top = draw_header(scene, title or f"Weight sync {actor} -> {rollout}", _summary(links, actor, rollout), legend)
    y = top
    for panel in panels:
        y = _draw_panel(scene, panel, colors, actor, rollout, actor_tp, y) + PANEL_GAP
    draw_notes(scene, _notes(panels, omitted), y)
    return scene.figure()


def _summary(links: Sequence[WeightSyncLink], actor: str, rollout: str) -> str:
    paired = sum(1 for link in links if link.actor_ranks)
    rollouts = len({link.rollout_rank for link in links})
    verdict = (
        "every rollout GPU holds an actor rank: weights go over CUDA IPC"
        if paired == len(links)
        else f"{counted(len(links) - paired, 'rollout GPU')} {agreeing(len(links) - paired, 'holds', 'hold')} no actor rank: their weights must go over the network"
    )
    return f"{counted(rollouts, f'{rollout} process', f'{rollout} processes')} on {counted(len(links), 'GPU')}, {paired} paired with {actor} ranks · {verdict}"


def _notes(panels: Sequence[Panel], omitted: Sequence[Panel]) -> list[str]:
    notes = []
    if any(len(panel.nodes) > 1 for panel in panels):
        notes.append("A panel 'nodes a-b' stands for nodes with the same pairing; its ranks are those of node a.")
    if omitted:
        left_out = format_ranks(node for panel in omitted for node in panel.nodes)
        notes.append(f"{counted(len(omitted), 'more panel')} not drawn ({agreeing(len(omitted), 'node')} {left_out}).")
    return notes


def _column(gpu: int) -> float:
    return CELLS_X + gpu * CELL_W


def _draw_panel(scene: Scene, panel: Panel, colors: Mapping[str, str], actor: str, rollout: str, actor_tp: int, y0: float) -> float:
    """One node's panel from ``y0`` down; returns its bottom."""
    bracket = SYNC_BRACKET_H if actor_tp > 1 or len(panel.nodes) > 1 else 0.0  # the strip also holds "xN alike"
    actor_y = y0 + HEADER_H + bracket
    rollout_y = actor_y + SYNC_ROW_H + SYNC_LINK_H
    bottom = rollout_y + SYNC_ROW_H
    scene.rect(MARGIN - 0.05, y0 - 0.05, LABEL_W + panel.gpus * CELL_W + 0.15, bottom - y0 + 0.1, PANEL_FACE, PANEL_EDGE, 0.6, z=0)
    scene.text(MARGIN + 0.02, y0 + HEADER_H / 2, nodes_name(panel.nodes), 7.5, ha="left", weight="bold")
    if len(panel.nodes) > 1:
        scene.text(MARGIN + 0.02, y0 + HEADER_H / 2 + 0.17, f"×{len(panel.nodes)} alike", 6.0, ha="left", color=MUTED_TEXT)
    for name, y in ((actor, actor_y), (rollout, rollout_y)):
        text, size = fit_text(name, LABEL_W - 0.1, SYNC_ROW_H, 7.0)
        scene.text(MARGIN + 0.02, y + SYNC_ROW_H / 2, text, size, ha="left", color=darker(colors[name], 0.75), weight="bold")
    for gpu in range(panel.gpus):
        scene.text(_column(gpu) + CELL_W / 2, y0 + HEADER_H / 2, f"GPU {gpu}", 6.0, color=HEADER_TEXT)
    _draw_actor_row(scene, panel, colors[actor], actor_y)
    if actor_tp > 1:
        _draw_tp_brackets(scene, panel, actor_tp, actor_y)
    _draw_rollouts(scene, panel, colors[rollout], rollout_y, actor_y + SYNC_ROW_H)
    return bottom


def _draw_actor_row(scene: Scene, panel: Panel, color: str, y: float) -> None:
    """A box per GPU with the actor ranks on it; a dashed empty cell where there are none."""
    width = CELL_W - 2 * BOX_PAD
    for gpu in range(panel.gpus):
        x = _column(gpu) + BOX_PAD
        ranks = panel.actor_ranks.get(gpu)
        if not ranks:
            scene.rect(x, y, width, SYNC_ROW_H, "white", EMPTY_EDGE, 0.6, z=2, style="dashed")
            continue
        scene.rect(x, y, width, SYNC_ROW_H, color, darker(color), 0.5, z=2)
        text, size = fit_text(format_ranks(ranks), width, SYNC_ROW_H)
        scene.text(_column(gpu) + CELL_W / 2, y + SYNC_ROW_H / 2, text, size, color=text_color(color))


def _draw_tp_brackets(scene: Scene, panel: Panel, actor_tp: int, actor_y: float) -> None:
    """A labelled bracket over the GPUs of each actor tensor-parallel group in the panel."""
    groups: dict[int, list[int]] = defaultdict(list)
    for gpu, ranks in panel.actor_ranks.items():
        for rank in ranks:
            groups[rank // actor_tp].append(gpu)
    for group, gpus in sorted(groups.items()):
        left, right = _column(min(gpus)) + 0.06, _column(max(gpus)) + CELL_W - 0.06
        y = actor_y - 0.06
        scene.line([(left, y + 0.04), (left, y), (right, y), (right, y + 0.04)], BRACKET_COLOR, 0.9)
        text, size = fit_text(f"TP group {group}", right - left, 0.16, 6.0)
        scene.text((left + right) / 2, y - 0.08, text, size, color=BRACKET_COLOR)


def _draw_rollouts(scene: Scene, panel: Panel, color: str, y: float, actor_bottom: float) -> None:
    """A box per rollout process, spread evenly under the GPUs, linked to each GPU it holds."""
    processes: dict[int, list[WeightSyncLink]] = defaultdict(list)
    for link in panel.links:
        processes[link.rollout_rank].append(link)
    slot = panel.gpus * CELL_W / max(len(processes), 1)
    for position, (rank, links) in enumerate(sorted(processes.items())):
        width = min(slot - 0.12, 1.4)
        left = CELLS_X + position * slot + 0.06 + (slot - 0.12 - width) / 2
        link_color = LINK_COLORS[position % len(LINK_COLORS)]
        scene.rect(left, y, width, SYNC_ROW_H, color, link_color, 1.6, z=2)
        text, size = fit_text(f"{rank} · GPU {format_ranks(link.gpu for link in links)}", width, SYNC_ROW_H)
        scene.text(left + width / 2, y + SYNC_ROW_H / 2, text, size, color=text_color(color))
        for i, link in enumerate(links):
            start = (left + width * (i + 1) / (len(links) + 1), y)
            end = (_column(link.gpu) + CELL_W / 2, actor_bottom)
            scene.line([start, end], link_color if link.actor_ranks else UNPAIRED_LINK, 1.4, "solid" if link.actor_ranks else "dashed")
