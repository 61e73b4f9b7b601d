"""Writing a figure to a file whose format follows its suffix."""

from __future__ import annotations

from pathlib import Path

import matplotlib
from matplotlib.figure import Figure

from solver_placement._errors import PlacementConfigError

#: File formats :func:`save_figure` writes (by file suffix).
SAVE_FORMATS = ("png", "svg", "pdf")


def save_figure(figure: Figure, path: str | Path, *, dpi: int = 150) -> Path:
    """Save as PNG, SVG or PDF (from the suffix); SVG keeps its text as text, so it can be searched.

    Fonts are embedded as TrueType in PDF so labels stay selectable. Raises
    :class:`PlacementConfigError` for another suffix; an unwritable path raises ``OSError``.
    """
    target = Path(path)
    suffix = target.suffix.lower().lstrip(".")
    if suffix not in SAVE_FORMATS:
        raise PlacementConfigError(f"cannot save a figure as {target.name!r}: the file name must end in .png, .svg or .pdf")
    with matplotlib.rc_context({"svg.fonttype": "none", "pdf.fonttype": 42}):
        figure.savefig(target, dpi=dpi, format=suffix)
    return target
