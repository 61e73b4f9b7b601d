"""Pictures of a solved placement, public: the layout and the weight-sync pairing.

Drawing needs matplotlib (``pip install solver_placement[plot]``); importing this module without
it raises a :class:`~solver_placement.PlacementError` naming that command. Figures take what a
solve returned (a ``Solution``, an RLinf ``ComponentPlacement``, placement records) and never
solve: ``plot_layout(solve("models/quickstart.yaml"))``.
"""

from solver_placement._plot.layout import plot_layout
from solver_placement._plot.save import SAVE_FORMATS, save_figure
from solver_placement._plot.source import LayoutSource
from solver_placement._plot.style import component_colors
from solver_placement._plot.sync_links import WeightSyncLink, weight_sync_links
from solver_placement._plot.weight_sync import plot_weight_sync

__all__ = ["SAVE_FORMATS", "LayoutSource", "WeightSyncLink", "component_colors", "plot_layout", "plot_weight_sync", "save_figure", "weight_sync_links"]
