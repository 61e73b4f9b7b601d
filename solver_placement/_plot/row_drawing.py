"""Drawing the layout figure's body: rows of hardware cells in columns, with node-group bands.

Each row has a node label on the left, its cells (named above when they differ from the row
above), one lane of coloured boxes per set of collocated components, brackets joining the boxes
of one strided process below a lane, brackets over tensor-parallel groups above it, and (merged
rows) the per-node rank steps on the right.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from solver_placement._cluster.ranks import format_ranks
from solver_placement._plot.labels import Cell, cell_name, nodes_name, steps_text
from solver_placement._plot.row_geometry import (
    BAND_W,
    COLUMN_GAP,
    LANE_H,
    ROW_GAP,
    ROWS_PER_COLUMN,
    TP_H,
    TRACK_H,
    RowGeometry,
    band_tracks,
    cell_x,
    cells_width,
    row_geometry,
)
from solver_placement._plot.rows import Row
from solver_placement._plot.scene import BOX_PAD, CELL_W, HEADER_H, LABEL_W, MARGIN, Scene
from solver_placement._plot.source import Drawn
from solver_placement._plot.style import (
    BAND_COLORS,
    BAND_EDGE,
    BAND_TEXT,
    CELL_EDGE,
    CELL_FACE,
    HEADER_TEXT,
    MUTED_TEXT,
    TP_MARK,
    Mark,
    darker,
    fit_text,
    text_color,
    text_width,
)

STEP_FONT = 6.5
#: A drawn box: left, top, right, bottom.
Extent = tuple[float, float, float, float]


@dataclass
class _PlacedRow:
    """A row with its geometry and position: where its cells and lanes are on the page."""

    row: Row
    geometry: RowGeometry
    xs: dict[Cell, float]  # left edge of each cell
    body_top: float  # below the cell names, if shown

    def lane_top(self, kind: str, component: str) -> float:
        return self.body_top + self.geometry.lane_tops[(kind, self.row.lanes[(kind, component)])]


def draw_rows(
    scene: Scene, drawn: Drawn, rows: Sequence[Row], colors: Mapping[str, str], tp: Mapping[str, int], top: float, marks: Mapping[str, Mark] | None = None
) -> float:
    """Draw the rows in columns of at most ROWS_PER_COLUMN; returns the y below the lowest.
    ``marks`` gives a component's group brackets their own look (its resource pool's)."""
    if not rows:
        scene.text(MARGIN, top + 0.2, "nothing to draw: no node selected", 8.0, ha="left")
        return top + 0.4
    columns = -(-len(rows) // ROWS_PER_COLUMN)
    per_column = -(-len(rows) // columns)
    groups = drawn.groups()
    tracks = band_tracks(groups)
    band_width = (max(tracks.values()) + 1) * BAND_W if tracks else 0.0
    step_width = max((text_width(steps_text(row.steps), STEP_FONT) + 0.3 for row in rows if row.steps), default=0.0)
    column_width = band_width + LABEL_W + max(cells_width(row.cells) for row in rows) + step_width
    bottom = top
    for column in range(columns):
        x0 = MARGIN + column * (column_width + COLUMN_GAP)
        y = top
        spans: list[tuple[Row, float, float]] = []
        previous_cells: list[Cell] | None = None
        for row in rows[column * per_column : (column + 1) * per_column]:
            geometry = row_geometry(row, row.cells != previous_cells, tp)
            draw_row(scene, row, geometry, colors, tp, x0 + band_width, y, marks or {})
            spans.append((row, y, y + geometry.height))
            previous_cells = row.cells
            y += geometry.height + ROW_GAP
        _draw_bands(scene, spans, [label for label, _ in groups], tracks, x0)
        bottom = max(bottom, y)
    return bottom


def draw_row(
    scene: Scene, row: Row, geometry: RowGeometry, colors: Mapping[str, str], tp: Mapping[str, int], x0: float, y0: float, marks: Mapping[str, Mark]
) -> None:
    """Node label, cells, lane boxes with rank labels, brackets under multi-item processes and over groups."""
    _draw_node_label(scene, row, geometry, x0, y0)
    body_top = y0 + (HEADER_H if geometry.header else 0.0)
    placed = _PlacedRow(row, geometry, cell_x(row.cells, x0 + LABEL_W), body_top)
    _draw_cells(scene, placed, y0)
    extents = _draw_boxes(scene, placed, colors)
    _draw_tp_brackets(scene, row, extents, tp, marks)
    _draw_joins(scene, placed, extents, colors)
    if row.steps:
        x = x0 + LABEL_W + cells_width(row.cells) + 0.12
        scene.text(x, y0 + geometry.height / 2, steps_text(row.steps), STEP_FONT, measure=True, ha="left", color=MUTED_TEXT)


def _draw_node_label(scene: Scene, row: Row, geometry: RowGeometry, x0: float, y0: float) -> None:
    """Two lines: the node (or run of nodes), then its GPU model (and how many nodes are merged)."""
    label, size = fit_text(nodes_name(row.nodes), LABEL_W - 0.12, 0.2, 7.0)
    scene.text(x0 + 0.06, y0 + geometry.height / 2 - 0.07, label, size, ha="left", weight="bold")
    detail = f"×{len(row.nodes)} · {row.model}" if len(row.nodes) > 1 else row.model
    detail, size = fit_text(detail, LABEL_W - 0.12, 0.2, 6.0)
    scene.text(x0 + 0.06, y0 + geometry.height / 2 + 0.08, detail, size, ha="left", color=MUTED_TEXT)


def _draw_cells(scene: Scene, placed: _PlacedRow, y0: float) -> None:
    body_height = placed.geometry.height - (placed.body_top - y0)
    for cell, x in placed.xs.items():
        if placed.geometry.header:
            label, size = fit_text(cell_name(cell), CELL_W, HEADER_H, 6.0)
            scene.text(x + CELL_W / 2, y0 + HEADER_H / 2, label, size, color=HEADER_TEXT)
        scene.rect(x, placed.body_top, CELL_W, body_height, CELL_FACE, CELL_EDGE, 0.6)


def _draw_boxes(scene: Scene, placed: _PlacedRow, colors: Mapping[str, str]) -> list[Extent]:
    """One coloured box per :class:`~solver_placement._plot.rows.Box`, labelled with its ranks; returns their extents."""
    extents = []
    for box in placed.row.boxes:
        lane_top = placed.lane_top(box.kind, box.component)
        left, right = placed.xs[(box.kind, box.first)] + BOX_PAD, placed.xs[(box.kind, box.last)] + CELL_W - BOX_PAD
        top, bottom = lane_top + BOX_PAD, lane_top + LANE_H - BOX_PAD
        color = colors[box.component]
        scene.rect(left, top, right - left, bottom - top, color, darker(color), 0.5, z=2)
        label, size = fit_text(format_ranks(box.ranks), right - left, bottom - top)
        scene.text((left + right) / 2, (top + bottom) / 2, label, size, color=text_color(color))
        extents.append((left, top, right, bottom))
    return extents


def _draw_tp_brackets(scene: Scene, row: Row, extents: Sequence[Extent], tp: Mapping[str, int], marks: Mapping[str, Mark]) -> None:
    """A bracket over the boxes of each group (ranks ``g*tp .. g*tp+tp-1``) on the row: a
    tensor-parallel group, or one node entry of a resource pool in the pool's own mark."""
    groups: dict[tuple[str, int], Extent] = {}
    for box, (left, top, right, bottom) in zip(row.boxes, extents, strict=True):
        for group in {rank // tp[box.component] for rank in box.ranks} if box.component in tp else ():
            seen = groups.get((box.component, group), (left, top, right, bottom))
            groups[(box.component, group)] = (min(seen[0], left), min(seen[1], top), max(seen[2], right), max(seen[3], bottom))
    for (component, _), (left, top, right, _) in groups.items():
        y = top - BOX_PAD - TP_H + 0.035
        mark = marks.get(component, TP_MARK)
        scene.line([(left + 0.02, top - 0.01), (left + 0.02, y), (right - 0.02, y), (right - 0.02, top - 0.01)], mark.color, 1.0, mark.style)


def _draw_joins(scene: Scene, placed: _PlacedRow, extents: Sequence[Extent], colors: Mapping[str, str]) -> None:
    """Under a lane, a bracket joining the boxes of one process that holds non-adjacent items."""
    for index, join in enumerate(placed.row.joins):
        track_y = placed.lane_top(join.kind, join.component) + LANE_H + 0.015 + (placed.geometry.tracks[index] + 0.5) * TRACK_H
        feet = [((extents[b][0] + extents[b][2]) / 2, extents[b][3]) for b in join.boxes]  # bottom centre of each box
        dark = darker(colors[join.component], 0.5)
        scene.line([(feet[0][0], track_y), (feet[-1][0], track_y)], dark, 1.1)
        for x, bottom in feet:
            scene.line([(x, bottom), (x, track_y)], dark, 1.1)
            scene.dot(x, track_y, dark)


def _draw_bands(scene: Scene, spans: Sequence[tuple[Row, float, float]], labels: Sequence[str], tracks: Mapping[str, int], x0: float) -> None:
    """A labelled band per node group over each run of consecutive rows in the group."""
    for color_index, label in enumerate(labels):
        start: float | None = None
        end = 0.0
        for row, top, bottom in [*spans, (None, 0.0, 0.0)]:
            member = row is not None and label in row.groups
            if member and start is None:
                start = top
            if member:
                end = bottom
            if not member and start is not None:
                x = x0 + tracks[label] * BAND_W
                scene.rect(x, start, BAND_W - 0.08, end - start, BAND_COLORS[color_index % len(BAND_COLORS)], BAND_EDGE, 0.6)
                text, size = fit_text(label, BAND_W - 0.14, 0.3, 7.5)
                scene.text(x + (BAND_W - 0.08) / 2, (start + end) / 2, text, size, weight="bold", color=BAND_TEXT)
                start = None
