"""The drawing surface: rectangles, lines, dots and texts in inches, rendered once into a Figure.

All geometry is in inches with y pointing down (one data unit is one inch and the axes fill the
figure), so fonts in points and boxes keep their proportions: a figure grows with the cluster
instead of shrinking its labels. Shapes are collected first and drawn as a few collections, which
keeps a 1,000-node figure fast; the figure is on an Agg canvas with no pyplot state, so it works
in scripts, tests, CI and (with ``%matplotlib inline``) notebooks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeAlias

from matplotlib.axes import Axes
from matplotlib.backend_bases import RendererBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.text import Text

from solver_placement._plot.style import TEXT

Color: TypeAlias = str | tuple[float, float, float]
Point: TypeAlias = tuple[float, float]

# Geometry both figures share, in inches.
MARGIN = 0.3
CELL_W = 0.58  # one GPU (or other hardware item) column
LABEL_W = 0.95  # the node label left of the cells
HEADER_H = 0.17  # cell names above a row
BOX_PAD = 0.025  # inset of a component box in its cell
SCREEN_DPI = 120  # notebooks show figures at this resolution; save_figure picks its own
MIN_WIDTH = 6.0  # a figure of one small node still has room for its title and legend


class _Rect(NamedTuple):
    z: int
    corners: list[Point]
    face: Color
    edge: Color
    linewidth: float
    linestyle: str


class _Line(NamedTuple):
    points: list[Point]
    color: Color
    linewidth: float
    linestyle: str


class _Text(NamedTuple):
    x: float
    y: float
    text: str
    measure: bool
    style: dict[str, Any]


class _Dot(NamedTuple):
    x: float
    y: float
    color: Color


@dataclass
class Scene:
    """Shapes and texts in inches, y pointing down; :meth:`figure` renders them."""

    rects: list[_Rect] = field(default_factory=list)
    lines: list[_Line] = field(default_factory=list)
    texts: list[_Text] = field(default_factory=list)
    dots: list[_Dot] = field(default_factory=list)
    width: float = 0.0
    height: float = 0.0

    def rect(
        self, x: float, y: float, w: float, h: float, face: Color, edge: Color = "none", lw: float = 0.0, z: int = 1, style: str = "solid"
    ) -> None:
        """A rectangle with its top-left corner at (x, y); rectangles set the figure's extent."""
        self.rects.append(_Rect(z, [(x, y), (x + w, y), (x + w, y + h), (x, y + h)], face, edge, lw, style))
        self.width, self.height = max(self.width, x + w), max(self.height, y + h)

    def line(self, points: list[Point], color: Color, lw: float = 1.0, style: str = "solid") -> None:
        self.lines.append(_Line(points, color, lw, style))

    def dot(self, x: float, y: float, color: Color) -> None:
        """A junction mark: where a bracket's tick meets its own line (a crossing has none)."""
        self.dots.append(_Dot(x, y, color))

    def text(self, x: float, y: float, s: str, size: float, measure: bool = False, **style: Any) -> None:
        """Place a text, centred unless ``ha``/``va`` say otherwise; ``measure`` texts (titles,
        notes) grow the figure until they fit."""
        self.texts.append(_Text(x, y, s, measure, {"fontsize": size, "ha": "center", "va": "center", "color": TEXT, **style}))

    def figure(self) -> Figure:
        """Render into a new Figure sized to the shapes plus a margin, widened for measured texts."""
        width, height = max(self.width + MARGIN, MIN_WIDTH), self.height + MARGIN
        figure = Figure(figsize=(width, height), dpi=SCREEN_DPI, facecolor="white")
        canvas = FigureCanvasAgg(figure)
        ax = figure.add_axes((0.0, 0.0, 1.0, 1.0))
        ax.set_xlim(0.0, width)
        ax.set_ylim(height, 0.0)
        ax.set_axis_off()
        self._draw_shapes(ax)
        measured = self._draw_texts(ax)
        renderer = canvas.get_renderer()
        right, bottom = _extent_with(measured, renderer, figure.dpi, width, height)
        figure.set_size_inches(right, bottom)
        ax.set_xlim(0.0, right)
        ax.set_ylim(bottom, 0.0)
        return figure

    def _draw_shapes(self, ax: Axes) -> None:
        for z in sorted({rect.z for rect in self.rects}):
            layer = [rect for rect in self.rects if rect.z == z]
            ax.add_collection(
                PolyCollection(
                    [rect.corners for rect in layer],
                    facecolors=[rect.face for rect in layer],
                    edgecolors=[rect.edge for rect in layer],
                    linewidths=[rect.linewidth for rect in layer],
                    linestyles=[rect.linestyle for rect in layer],
                    zorder=z,
                )
            )
        if self.lines:
            ax.add_collection(
                LineCollection(
                    [line.points for line in self.lines],
                    colors=[line.color for line in self.lines],
                    linewidths=[line.linewidth for line in self.lines],
                    linestyles=[line.linestyle for line in self.lines],
                    zorder=5,
                    capstyle="round",
                )
            )
        if self.dots:
            ax.scatter([d.x for d in self.dots], [d.y for d in self.dots], s=7.0, c=[d.color for d in self.dots], zorder=5, linewidths=0)

    def _draw_texts(self, ax: Axes) -> list[Text]:
        """Draw every text; returns the measured ones, whose extents size the figure."""
        measured = [ax.text(t.x, t.y, t.text, zorder=6, clip_on=False, **t.style) for t in self.texts if t.measure]
        for t in self.texts:
            if not t.measure:
                ax.text(t.x, t.y, t.text, zorder=6, clip_on=False, **t.style)
        return measured


def _extent_with(texts: list[Text], renderer: RendererBase, dpi: float, width: float, height: float) -> Point:
    """The figure size (inches) that holds ``texts`` plus a margin, never smaller than width x height."""
    boxes = [text.get_window_extent(renderer) for text in texts]
    right = max([width, *(box.x1 / dpi + MARGIN for box in boxes)])
    bottom = max([height, *(height - box.y0 / dpi + MARGIN for box in boxes)])
    return right, bottom
