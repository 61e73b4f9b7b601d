"""CP-SAT's model as this library builds it: without OR-Tools' deprecated aliases.

Why a module of its own: the flat model (``context.py``), the count models (``counts/``), the
counting bounds (``bounds/``) and the auto search each build models, and each gets the same lean
class from here.
"""

from __future__ import annotations

from ortools.sat.python import cp_model


class LeanCpModel(cp_model.CpModel):
    """CP-SAT's model without the deprecated CamelCase aliases (``AddBoolOr`` for
    ``add_bool_or``, ...) OR-Tools attaches to every new model by walking ``dir()``: this library
    never calls them, and making them takes 0.13 ms, 40% of building the whole rank-string
    model of 1,000 GPUs (0.33 ms with them, measured with OR-Tools 9.15). Every model of the
    library is one, the count models' too: they are many and small (916 in the benchmark's default
    run, whose aliases took 0.9 s of its 23.6 s of CPU).

    OR-Tools has no public switch for this, so the private hook is overridden;
    ``tests/internals/solver/test_lean_model.py`` fails, naming the OR-Tools version, when an upgrade
    renames the hook, changes its signature or stops attaching the aliases."""

    def _add_pre_pep8_methods(self) -> None:
        """Attach nothing (see the class docstring)."""

    def clone(self) -> LeanCpModel:
        """A copy of the model, lean too: OR-Tools' own ``clone`` makes a plain ``CpModel``, whose
        aliases took 30 ms of each of the two clones ``maximal.py`` makes on ``kinds memory:423:11``
        (under cProfile)."""
        copied = LeanCpModel()
        copied.proto.copy_from(self.proto)
        copied.rebuild_constant_map()
        return copied
