"""``LeanCpModel`` overrides a private OR-Tools method (``CpModel._add_pre_pep8_methods``), for
which OR-Tools has no public switch. An OR-Tools release that renames the method, changes how it
is called or stops attaching the aliases fails here, naming the version, instead of silently
costing the time the override saves (or breaking every model at construction)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import ortools
from ortools.sat.python import cp_model

import solver_placement
from solver_placement import Cluster, PlacementSpec
from solver_placement._solver.context import ModelContext
from solver_placement._solver.lean_model import LeanCpModel

HOOK = "_add_pre_pep8_methods"
UPGRADE = f"OR-Tools {ortools.__version__}"


def test_or_tools_still_attaches_the_aliases_through_the_method_lean_model_overrides() -> None:
    hook = getattr(cp_model.CpModel, HOOK, None)
    assert callable(hook), f"{UPGRADE} has no CpModel.{HOOK}: LeanCpModel overrides nothing; find the new hook or drop LeanCpModel"
    assert list(inspect.signature(hook).parameters) == ["self"], f"{UPGRADE} changed CpModel.{HOOK}'s signature: update LeanCpModel's"
    assert HOOK in inspect.getsource(cp_model.CpModel.__init__), f"{UPGRADE}: CpModel.__init__ no longer calls {HOOK}: drop LeanCpModel"
    attached = vars(cp_model.CpModel())
    assert "AddBoolOr" in attached, f"{UPGRADE} no longer attaches CamelCase aliases to each model: LeanCpModel is not needed any more"


def test_the_lean_model_attaches_nothing_and_builds_like_cp_models() -> None:
    lean = LeanCpModel()
    assert vars(lean) == {}, f"{UPGRADE}: LeanCpModel still gets {sorted(vars(lean))[:5]} ..."
    literal = lean.new_bool_var("x")
    lean.add_bool_or([literal])
    lean.minimize(literal)
    solver = cp_model.CpSolver()
    assert solver.solve(lean) == cp_model.OPTIMAL and solver.value(literal) == 1
    spec = PlacementSpec.build(Cluster(1, 1), {"a": "0"})
    assert isinstance(ModelContext.create(spec, spec.requests, False, {}, {}).model, LeanCpModel)


def test_a_clone_of_the_lean_model_is_lean_and_solves_alike() -> None:
    lean = LeanCpModel()
    x = lean.new_int_var(0, 5, "x")
    lean.add(x >= 3)
    lean.minimize(x)
    copied = lean.clone()
    assert isinstance(copied, LeanCpModel) and vars(copied) == {}
    assert str(copied.proto) == str(lean.proto)
    copied.add(x >= 4)  # the copy is its own: the original keeps its optimum
    solver = cp_model.CpSolver()
    assert solver.solve(copied) == cp_model.OPTIMAL and solver.objective_value == 4
    assert solver.solve(lean) == cp_model.OPTIMAL and solver.objective_value == 3


def test_every_model_the_library_builds_is_lean() -> None:
    """The count models are many and small, so the aliases cost them most (916 models in the
    benchmark's default run); a new ``cp_model.CpModel()`` anywhere in the package fails here."""
    package = Path(solver_placement.__file__).parent
    plain = [f"{path.relative_to(package)}:{number}" for path in sorted(package.rglob("*.py")) for number, line in enumerate(path.read_text().splitlines(), 1) if re.search(r"\bCpModel\(\)|default_factory=cp_model\.CpModel\b", line)]
    assert plain == [], f"build LeanCpModel() instead of OR-Tools' own model at {plain}"
