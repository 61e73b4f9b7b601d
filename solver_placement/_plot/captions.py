"""The text around a figure's body: title, summary line, legend, and footnotes.

Both figures open the same way (title, one summary line, a legend of colours and bracket glyphs)
and close with notes that explain merged rows or rows left out, so a reader of either knows how
to read it without the documentation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple

from solver_placement._plot.scene import MARGIN, Color, Scene
from solver_placement._plot.style import MUTED_TEXT, text_width

LEGEND_FONT = 7.5
#: Widest legend line, in inches: a screen's width at the figures' 120 dpi, so the legend never
#: makes a figure wider than its body needs beyond that, however many components it names.
LEGEND_WIDTH = 9.0
#: Distance between legend lines, in inches.
LEGEND_LINE = 0.22


class LegendEntry(NamedTuple):
    """One legend item. Glyphs: ``box`` (a component's colour), ``bracket`` (the one under a
    process holding several items) and ``tp`` (the one over a group: tensor-parallel, or a
    resource pool's node entry, drawn in the pool's line ``style``)."""

    color: Color
    label: str
    glyph: Literal["box", "bracket", "tp"] = "box"
    style: str = "solid"


def draw_header(scene: Scene, title: str, summary: str, legend: Sequence[LegendEntry]) -> float:
    """Title, a summary line and the legend, wrapped into lines of at most :data:`LEGEND_WIDTH`
    (a legend in one row made a figure of 32 components 2,511 pixels wide whatever its body);
    returns the y below them."""
    scene.text(MARGIN, MARGIN + 0.1, title, 11.0, measure=True, ha="left", weight="bold")
    scene.text(MARGIN, MARGIN + 0.34, summary, 7.0, measure=True, ha="left", color=MUTED_TEXT)
    x, y = MARGIN, MARGIN + 0.58
    for entry in legend:
        width = 0.22 + text_width(entry.label, LEGEND_FONT, em=0.53) + 0.3
        if x > MARGIN and x + width > MARGIN + LEGEND_WIDTH:
            x, y = MARGIN, y + LEGEND_LINE
        _draw_glyph(scene, entry, x, y)
        scene.text(x + 0.22, y, entry.label, LEGEND_FONT, measure=True, ha="left")
        x += width
    return y + 0.3


def _draw_glyph(scene: Scene, entry: LegendEntry, x: float, y: float) -> None:
    if entry.glyph == "bracket":
        scene.line([(x, y - 0.06), (x, y + 0.03), (x + 0.16, y + 0.03), (x + 0.16, y - 0.06)], entry.color, 1.1)
    elif entry.glyph == "tp":
        scene.line([(x, y + 0.06), (x, y - 0.03), (x + 0.16, y - 0.03), (x + 0.16, y + 0.06)], entry.color, 1.1, entry.style)
    else:
        scene.rect(x, y - 0.07, 0.16, 0.14, entry.color, z=2)


def draw_notes(scene: Scene, notes: Sequence[str], top: float) -> None:
    """Footnotes under the body, one line each."""
    for i, note in enumerate(notes):
        scene.text(MARGIN, top + 0.1 + i * 0.2, note, 7.0, measure=True, ha="left", color=MUTED_TEXT, style="italic")
