"""The environment keys (``hide_accelerators``, ``egl_device``, ``numa_bind``): nothing to state.

They say what a process sees around its hardware, never which hardware it gets: the records
and the launch carry them (``_specification/environment.py``). The rule owns them so the registry says
where they went, and adds no variable or constraint, so a spec with them is solved exactly as
one without.
"""

from __future__ import annotations

from solver_placement._solver.context import ModelContext
from solver_placement._solver.rules.rule import RuleOutput
from solver_placement._specification.environment import ENVIRONMENT_KEYS

KEYS: tuple[str, ...] = ENVIRONMENT_KEYS


def build(ctx: ModelContext, earlier: RuleOutput) -> RuleOutput:
    """Nothing: the placement does not depend on these keys (see the module docstring)."""
    return RuleOutput()
