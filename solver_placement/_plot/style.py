"""How the figures look: colours, type sizes, and fitting a label into its box.

Kept apart from the drawing so both figures share one look: a component has the same colour in
the layout and in the weight-sync picture, and labels shrink by the same rule everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from matplotlib.colors import to_rgb

from solver_placement._replica_groups import replica_groups

#: Tableau 10, then matplotlib's tab10 for an 11th component on: distinct mid-tone hues on which a dark or
#: white label stays legible; Tableau's grey comes last so it rarely meets the grey of empty cells.
PALETTE = (
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
)  # fmt: skip
#: Light fills of the node-group bands, one per group in config order.
BAND_COLORS = ("#e8edf5", "#f6ece0", "#e6f1e4", "#f5e4e4", "#ece6f2", "#e4f1f0")
BAND_EDGE = "#9aa5b5"
BAND_TEXT = "#33415c"
BRACKET_COLOR = "#555555"
#: Dark link colours (Dark2 without its orange and yellow, which vanish on light component fills).
LINK_COLORS = ("#1b9e77", "#7570b3", "#e7298a", "#66a61e", "#a6761d", "#333333")
#: Line styles that, with the link colours, give each resource pool a bracket of its own.
POOL_STYLES = ("solid", "dashed", "dotted")
UNPAIRED_LINK = "#999999"
TEXT = "#222222"
MUTED_TEXT = "#555555"  # summaries, notes, per-node steps, node models
HEADER_TEXT = "#666666"  # cell names above a row
CELL_FACE, CELL_EDGE = "#f3f3f3", "#b5b5b5"
PANEL_FACE, PANEL_EDGE = "#fafafa", "#cccccc"
EMPTY_EDGE = "#aaaaaa"  # a GPU a weight-sync panel shows without an actor rank

# Type, in points. CHAR_EM is a DejaVu Sans digit's width in ems (the widest common glyph in rank labels).
BASE_FONT = 7.0
MIN_FONT = 4.5
CHAR_EM = 0.64


def component_colors(names: Sequence[str]) -> dict[str, str]:
    """One colour per component, by position, so every figure of one job uses the same colours;
    the numbered replicas of one component (``reward_0`` to ``reward_31``, see
    :mod:`~solver_placement._replica_groups`) share one, as they share one legend entry."""
    return {member: PALETTE[i % len(PALETTE)] for i, group in enumerate(replica_groups(names)) for member in group.members}


class Mark(NamedTuple):
    """How a group bracket is drawn: colour and line style."""

    color: str
    style: str = "solid"


#: The bracket over a tensor-parallel group.
TP_MARK = Mark(BRACKET_COLOR)


def pool_mark(index: int) -> Mark:
    """The bracket of the ``index``-th resource pool: a link colour, then the next line style,
    so two pools are never drawn alike (nor like a tensor-parallel group's grey)."""
    return Mark(LINK_COLORS[index % len(LINK_COLORS)], POOL_STYLES[index // len(LINK_COLORS) % len(POOL_STYLES)])


def text_color(face: str) -> str:
    """Dark text on a light fill, white on a dark one (by perceived luminance)."""
    red, green, blue = to_rgb(face)
    return "#111111" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.6 else "white"


def darker(color: str, factor: float = 0.6) -> tuple[float, float, float]:
    """The same hue, darker: box outlines, brackets and labels that belong to a component."""
    red, green, blue = to_rgb(color)
    return (red * factor, green * factor, blue * factor)


def fit_text(text: str, width: float, height: float, base: float = BASE_FONT) -> tuple[str, float]:
    """The largest font (<= base) at which ``text`` fits a ``width`` x ``height`` inch box.

    Below MIN_FONT a label would be unreadable, so it is shortened with an ellipsis instead.
    """
    width_pt, height_pt = width * 72.0 - 2.0, height * 72.0
    size = min(base, height_pt * 0.72, width_pt / (CHAR_EM * max(len(text), 1)))
    if size >= MIN_FONT:
        return text, size
    keep = max(1, int(width_pt / (CHAR_EM * MIN_FONT)) - 1)
    return text[:keep] + "…", MIN_FONT


def text_width(text: str, size: float, em: float = 0.6) -> float:
    """Estimated width in inches (``em``: mean glyph width in ems), for laying out before drawing;
    the figure itself is sized by measuring its texts."""
    return len(text) * size * em / 72.0
