"""AReaL as the prediction core sees it: the :class:`Framework` value ``_frontends`` registers."""

from __future__ import annotations

from solver_placement._config_copy import to_plain
from solver_placement._frontends.areal.improve import improve_areal
from solver_placement._frontends.areal.keys import read_areal
from solver_placement._frontends.areal.layout import TITLE, predict_areal
from solver_placement._frontends.areal.reasons import explain_areal
from solver_placement._overrides import apply_overrides, override_text
from solver_placement._prediction.findings import Fix
from solver_placement._prediction.frameworks import Framework
from solver_placement._prediction.launch_input import LaunchInput

#: The AReaL releases whose code was read (PyPI's ``areal``; tag v1.0.4 is commit 37d6c640).
RELEASES = ("1.0.4",)


def fixed_input(given: LaunchInput, fix: Fix) -> LaunchInput:
    """``given`` with the fix's keys set (``None``: removed): Hydra overrides appended to a
    command line (``++key=value``, ``~key``; the last override of a key wins, as in Hydra), or
    the keys changed in a YAML config."""
    overrides = [override_text(key, value, "++") for key, value in fix]
    if given.config is not None:
        config = to_plain(apply_overrides(dict(given.config), overrides), "")
        return LaunchInput(given.arguments, config, given.origin, given.path, given.variables)
    return given.with_arguments((*given.arguments, *overrides))


AREAL = Framework("areal", TITLE, RELEASES, read_areal, predict_areal, fixed_input, improve_areal, explain=explain_areal)
