"""Pictures of a solved placement, public: the layout and the weight-sync pairing.

Drawing needs matplotlib (``pip install solver_placement[plot]``); importing this module without
it raises a :class:`~solver_placement.PlacementError` naming that command. Figures take what a
solve returned (a ``Solution``, an RLinf ``ComponentPlacement``, placement records) and never
solve: ``plot_layout(solve("models/quickstart.yaml"))``.
"""

from solver_placement._plot import (
    SAVE_FORMATS,
    LayoutSource,
    WeightSyncLink,
    component_colors,
    plot_layout,
    plot_weight_sync,
    save_figure,
    weight_sync_links,
)

__all__ = ["SAVE_FORMATS", "LayoutSource", "WeightSyncLink", "component_colors", "plot_layout", "plot_weight_sync", "save_figure", "weight_sync_links"]
