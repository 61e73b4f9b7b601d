"""Where a layout row's parts go: cell columns, lane heights, bracket tracks and group bands.

A row is as tall as its lanes need: each lane holds one line of boxes, plus a thin track per
bracket joining a strided process's boxes (overlapping brackets get separate tracks) and, over a
tensor-parallel component, a strip for its group brackets.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from solver_placement._plot.labels import Cell
from solver_placement._plot.rows import Row
from solver_placement._plot.scene import CELL_W, HEADER_H

# Layout geometry, in inches (CELL_W and HEADER_H are shared with the weight-sync figure).
LANE_H = 0.25
MIN_ROW_H = 0.36  # room for the two-line node label
TRACK_H = 0.06
TP_H = 0.07  # strip above a lane for tensor-parallel group brackets
ROW_GAP = 0.1
KIND_GAP = 0.14
BAND_W = 0.78
COLUMN_GAP = 0.45
ROWS_PER_COLUMN = 32

#: A lane of a row: (hardware kind, lane index).
Lane = tuple[str, int]


@dataclass
class RowGeometry:
    header: bool  # the row shows cell names above it (its cells differ from the row above)
    lane_tops: dict[Lane, float]  # offset below the row's body top
    tracks: dict[int, int]  # join index -> bracket track in its lane
    height: float


def row_geometry(row: Row, header: bool, tp: Mapping[str, int]) -> RowGeometry:
    """Lane offsets and bracket tracks of ``row``; ``tp`` maps tensor-parallel components to their group size."""
    tracks, tracks_per_lane = _bracket_tracks(row)
    with_tp = {(kind, lane) for (kind, name), lane in row.lanes.items() if name in tp}
    lane_tops: dict[Lane, float] = {}
    lanes_height = 0.0
    for kind in dict.fromkeys(kind for kind, _ in row.cells):
        y = 0.0
        for lane in range(1 + max((index for (k, _), index in row.lanes.items() if k == kind), default=-1)):
            y += TP_H if (kind, lane) in with_tp else 0.0
            lane_tops[(kind, lane)] = y
            count = tracks_per_lane.get((kind, lane), 0)
            y += LANE_H + (count * TRACK_H + 0.03 if count else 0.0)
        lanes_height = max(lanes_height, y)
    slack = max(0.0, MIN_ROW_H - lanes_height) / 2  # centre the lanes of a short row on its two-line label
    lane_tops = {key: top + slack for key, top in lane_tops.items()}
    return RowGeometry(header, lane_tops, tracks, max(MIN_ROW_H, lanes_height) + (HEADER_H if header else 0.0))


def _bracket_tracks(row: Row) -> tuple[dict[int, int], dict[Lane, int]]:
    """Per join, the track its bracket runs on under its lane (first fit from the left, so brackets
    that overlap never share a track); and how many tracks each lane needs."""
    tracks: dict[int, int] = {}
    ends: dict[Lane, list[float]] = defaultdict(list)  # per lane: where each track's last bracket ends
    centers = [(box.first + box.last) / 2 for box in row.boxes]
    for index in sorted(range(len(row.joins)), key=lambda i: centers[row.joins[i].boxes[0]]):
        join = row.joins[index]
        lane_ends = ends[(join.kind, row.lanes[(join.kind, join.component)])]
        start, end = centers[join.boxes[0]], centers[join.boxes[-1]]
        free = next((track for track, last in enumerate(lane_ends) if last < start), len(lane_ends))
        if free == len(lane_ends):
            lane_ends.append(end)
        else:
            lane_ends[free] = end
        tracks[index] = free
    return tracks, {lane: len(lane_ends) for lane, lane_ends in ends.items()}


def cells_width(cells: Sequence[Cell]) -> float:
    """Width of a row's cells, with a gap between hardware kinds."""
    kinds = len(dict.fromkeys(kind for kind, _ in cells))
    return len(cells) * CELL_W + (kinds - 1) * KIND_GAP


def cell_x(cells: Sequence[Cell], x0: float) -> dict[Cell, float]:
    """Left edge of every cell of a row starting at ``x0``."""
    positions, x, previous = {}, x0, None
    for cell in cells:
        if previous is not None and cell[0] != previous:
            x += KIND_GAP
        positions[cell] = x
        x += CELL_W
        previous = cell[0]
    return positions


def band_tracks(groups: Sequence[tuple[str, frozenset[int]]]) -> dict[str, int]:
    """A band column per node group, so groups sharing nodes sit side by side instead of on top of each other."""
    tracks: dict[str, int] = {}
    for label, members in groups:
        taken = {tracks[other] for other, others in groups if other in tracks and others & members}
        tracks[label] = next(t for t in range(len(groups) + 1) if t not in taken)
    return tracks
