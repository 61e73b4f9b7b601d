"""Pictures of a placement: the layout (which hardware item holds which rank of which component)
and the weight-sync pairing of collocated mode.

Both figures draw what a solve returned (a ``Solution``, an RLinf ``ComponentPlacement`` already
built, or placement records) and never solve: solving is the caller's job, so this package imports
neither the solver nor the spec layer, and a config, path or spec is refused with the call to
make first. Both return a :class:`matplotlib.figure.Figure` on an Agg canvas (no display, no
pyplot state); :func:`save_figure` writes PNG, SVG or PDF. Modules, from input to pixels:
``source`` (a solved layout or records -> records and hardware per node), ``aggregate`` (merging
like nodes), ``rows`` and ``sync_links`` (what each row or panel holds), ``row_geometry`` (where
it goes), ``scene``, ``style``, ``labels`` and ``captions`` (drawing primitives and looks),
``row_drawing``, ``layout`` and ``weight_sync`` (the figures), ``save``.

matplotlib is an optional extra (``solver_placement[plot]``): solving never imports this package,
and importing it without matplotlib raises a :class:`PlacementError` naming the install command
instead of a ``ModuleNotFoundError`` from inside a drawing module.
"""

from __future__ import annotations

from solver_placement._errors import PlacementError, missing_extra

try:
    import matplotlib  # noqa: F401  (checked here once: every module of the package draws with it)
except ModuleNotFoundError as error:
    raise missing_extra(error, "matplotlib", "matplotlib is not installed; drawing placements needs it", "plot", PlacementError) from None
