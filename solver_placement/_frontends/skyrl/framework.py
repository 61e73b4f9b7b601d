"""SkyRL as the prediction core sees it: the :class:`Framework` value ``_frontends`` registers."""

from __future__ import annotations

from solver_placement._config_copy import to_plain
from solver_placement._frontends.skyrl.fixes import predict_skyrl
from solver_placement._frontends.skyrl.improve import improve_skyrl
from solver_placement._frontends.skyrl.keys import RELEASES, read_skyrl
from solver_placement._frontends.skyrl.layout import TITLE
from solver_placement._frontends.skyrl.reasons import explain_skyrl
from solver_placement._overrides import apply_overrides, override_text
from solver_placement._prediction.findings import Fix
from solver_placement._prediction.frameworks import Framework
from solver_placement._prediction.launch_input import LaunchInput


def fixed_input(given: LaunchInput, fix: Fix) -> LaunchInput:
    """``given`` with the fix's keys set: ``key=value`` overrides appended to the command line
    (Hydra applies them in order, so the last wins), or the keys changed in a YAML config."""
    if given.config is not None:
        overrides = [override_text(key, value, "++") for key, value in fix]
        return LaunchInput(given.arguments, to_plain(apply_overrides(dict(given.config), overrides), ""), given.origin, given.path, given.variables)
    return given.with_arguments((*given.arguments, *(override_text(key, value) for key, value in fix if value is not None)))


SKYRL = Framework("skyrl", TITLE, RELEASES, read_skyrl, predict_skyrl, fixed_input, improve_skyrl, explain=explain_skyrl)
