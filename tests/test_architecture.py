"""The package's shape, checked by reading its source: the public names, the import layers
(lower stages never import higher ones, no cycles) and the size of modules."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

from import_graph import PACKAGE, graph, module_name, parsed, path_to, reachable

import solver_placement

#: Pipeline stages from the bottom up: a unit may import only itself and units listed before it.
LAYERS = (
    "_errors",
    "_constants",
    "_arrays",
    "_ray_api",
    "_limits",
    "_compose_bounds",
    "_compose",
    "limits",
    "_config_copy",
    "_config",
    "_override_values",
    "_overrides",
    "_solver_settings",
    "_cluster",
    "_job",
    "_specification",
    "_records",
    "_verify",
    "_solver",
    "_auto",
    "_dispatch",
    "_ray_launch",
    "_replica_groups",
    "_layout_report",
    "_prediction",
    "_frontends",
    "_plot",
    "plot",
    "_diagnose",
    "_replan_pins",
    "_replan",
    "_cli",
    "__init__",
    "__main__",
)

#: The modules a user may import: the package itself, its command line and two namespaces whose
#: names read better qualified (``limits.configure``, ``plot.plot_layout``). Everything else is an
#: implementation module, named with a leading underscore.
PUBLIC_MODULES = {"solver_placement", "solver_placement.__main__", "solver_placement.limits", "solver_placement.plot"}

PUBLIC_NAMES = [
    "Assignment", "AssumedGpuCountWarning", "AutoCandidate", "AutoPlacement", "AutoProblem", "Cluster", "ComponentPlacement",
    "ComponentSpec", "CostTable", "Diagnosis", "Dispatch", "DispatchError", "Execute", "Finding", "FindingKind", "FlexiblePlacementStrategy", "FrameworkLayoutError",
    "HybridComponentPlacement", "Improvement", "InfeasiblePlacementError", "Job", "LaunchError", "LocalRayCluster", "MisspeltComponentWarning",
    "ModelParallelComponentPlacement", "ModelParallelEvalComponentPlacement",
    "MultiAgentModelParallelComponentPlacement", "MultiAgentModelParallelEvalComponentPlacement", "NodeGroup", "NodeRankError", "NodePlacementStrategy", "PackedPlacementStrategy",
    "Placement", "PlacementConfigError", "PredictedRank", "Prediction", "PredictionExplanation", "PlacementError", "PlacementMode", "PlacementSpec",
    "PlacementStrategy", "PlacementSyntaxError", "RayLaunchPlan", "Reservation", "ResourcePool",
    "ResourceSet", "RolloutSyncMode", "Solution", "SolverTimeoutError", "Statement", "VerificationError", "VerlExport", "VerlExportError",
    "WorkerGroup", "YamlText", "apply_overrides", "as_cluster", "auto_place", "compose", "diagnose", "explain", "export_verl", "fuse", "improve", "launch", "layout_report", "load_job", "placement_for_config", "plan", "pool_spec", "predict",
    "register",
    "replan", "reserve", "solve", "to_ray", "verify",
]  # fmt: skip


#: Upward imports allowed, each inside a function (so it runs only when called, never at import):
#: ``Cluster.from_ray`` connects to Ray by the launch's attach rules, which live once in ray_launch.
DEFERRED_UPWARD = {("solver_placement._cluster.cluster", "solver_placement._ray_launch.connect")}


def _module_level_imports(path: Path) -> set[str]:
    """Package modules ``path`` imports when it is imported (statements outside any function)."""
    tree = parsed(path)
    inside_functions = {id(node) for function in ast.walk(tree) if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) for node in ast.walk(function)}
    return {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module and id(node) not in inside_functions}


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_public_names_are_pinned() -> None:
    assert solver_placement.__all__ == sorted(solver_placement.__all__), "keep __all__ sorted"
    assert sorted(solver_placement.__all__) == sorted(PUBLIC_NAMES)
    for name in PUBLIC_NAMES:
        assert getattr(solver_placement, name) is not None


def test_only_the_public_modules_go_without_an_underscore() -> None:
    public = {name for name in graph() if not any(part.startswith("_") and part != "__main__" for part in name.split(".")[1:])}
    assert public == PUBLIC_MODULES


def test_tests_of_internals_live_under_tests_internals() -> None:
    """A test that imports an implementation module tests an internal and says so by its folder;
    the tests elsewhere use what a user may import."""
    tests = PACKAGE.parent / "tests"
    private = re.compile(r"^\s*(?:from|import) solver_placement\.(?!(?:limits|plot)\b)\w", re.M)
    outside = sorted(str(path.relative_to(tests)) for path in tests.rglob("*.py") if "internals" not in path.relative_to(tests).parts and private.search(path.read_text()))
    assert not outside, f"move to tests/internals/ or use the public API: {outside}"


def test_every_unit_has_a_layer_and_every_layer_a_unit() -> None:
    units = {_unit(module) for module in graph()}
    assert units <= set(LAYERS), f"add {sorted(units - set(LAYERS))} to LAYERS"
    assert set(LAYERS) <= units, f"remove {sorted(set(LAYERS) - units)} from LAYERS: no module has that name"


def test_lower_layers_never_import_higher_ones() -> None:
    rank = {unit: position for position, unit in enumerate(LAYERS)}
    upward = [
        f"{module} -> {target}"
        for module, targets in graph().items()
        for target in targets
        if rank[_unit(target)] > rank[_unit(module)] and (module, target) not in DEFERRED_UPWARD
    ]
    assert not upward


def test_the_deferred_upward_imports_exist_and_run_only_when_called() -> None:
    edges = graph()
    for module, target in sorted(DEFERRED_UPWARD):
        path = PACKAGE.parent.joinpath(*module.split(".")).with_suffix(".py")
        assert target in edges[module], f"{module} no longer imports {target}: remove it from DEFERRED_UPWARD"
        assert target not in _module_level_imports(path), f"{module} imports {target} at module level"


def test_no_import_cycles() -> None:
    edges = graph()
    # parents import their children for re-exports; a child importing its package's __init__ is the cycle to catch
    state: dict[str, int] = {}
    cycles: list[str] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(edges[module]):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*path[path.index(target):], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert not cycles


def test_no_module_is_too_long() -> None:
    long = {module_name(path): n for path in PACKAGE.rglob("*.py") if (n := len(path.read_text().splitlines())) > 450}
    assert not long, f"split these modules: {long}"


def test_every_test_file_the_code_and_docs_cite_exists() -> None:
    """Docstrings and docs point readers at the tests that check a rule; a moved or renamed
    test file must take its citations along."""
    root = PACKAGE.parent
    texts = [*PACKAGE.rglob("*.py"), *(root / "docs").glob("*.md"), root / "README.md"]
    cited = {(path.relative_to(root), match) for path in texts for match in re.findall(r"tests/[\w/]+\.py", path.read_text())}
    missing = sorted(f"{where} cites {test}" for where, test in cited if not (root / test).is_file())
    assert not missing, missing


#: Units that draw what others computed, and the units they must never reach, by their own imports
#: or by anything those import: ``plot`` draws a solved layout; solving it is the caller's job.
NEVER_REACHED = {"_plot": ("_solver", "_specification"), "plot": ("_solver", "_specification")}

#: Imports that walk does not follow. A record's ``env`` holds the variables of its component's
#: environment keys, so ``records`` names them from ``_specification/environment.py``; that module reads no
#: spec grammar and resolves nothing (the test below checks it reaches no forbidden unit itself).
NOT_FOLLOWED = {("solver_placement._records", "solver_placement._specification.environment")}


def _followed(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph without the edges in ``NOT_FOLLOWED``."""
    return {module: {target for target in targets if (module, target) not in NOT_FOLLOWED} for module, targets in edges.items()}


def test_drawing_units_reach_neither_the_solver_nor_the_spec() -> None:
    edges = _followed(graph())
    for unit, forbidden in NEVER_REACHED.items():
        found = reachable({module for module in edges if _unit(module) == unit}, edges)
        reached = [path_to(module, found) for module in sorted(found) if _unit(module) in forbidden]
        assert not reached, f"{unit} must not reach {forbidden}: {reached}"


def test_the_imports_not_followed_exist_and_reach_nothing_forbidden() -> None:
    edges = graph()
    forbidden = {unit for units in NEVER_REACHED.values() for unit in units}
    for module, target in sorted(NOT_FOLLOWED):
        assert target in edges[module], f"{module} no longer imports {target}: remove it from NOT_FOLLOWED"
        found = reachable({target}, _followed(edges))
        beyond = [path_to(reached, found) for reached in sorted(found) if reached != target and _unit(reached) in forbidden]
        assert not beyond, f"{target} is not followed because it is a leaf of its unit, but it reaches {beyond}"


#: The units that sit above the front ends and may use a framework's own API: the public package
#: and the command line (which offer RLinf's classes and ``export --to verl`` by name).
FACES = {"_cli", "__init__", "__main__"}


def _framework(module: str) -> str | None:
    """The front-end folder (``verl``, ``rlinf``) or module a module belongs to, if any."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "_frontends" else None


def test_the_core_imports_no_front_end() -> None:
    """Frameworks are translators: nothing below them knows where a job came from. The core
    reaches a front end only through the ``Frontend`` values registered in ``_job``."""
    offending = sorted(
        f"{module} -> {target}"
        for module, targets in graph().items()
        for target in targets
        if _framework(target) is not None and _framework(module) is None and _unit(module) not in FACES | {"_frontends"}
    )
    assert not offending, f"the core imports a front end: {offending}"


def test_front_ends_do_not_import_each_other() -> None:
    """A new framework is a new folder plus its registration: no folder leans on another's code."""
    crossing = sorted(
        f"{module} -> {target}"
        for module, targets in graph().items()
        for target in targets
        if None not in (_framework(module), _framework(target)) and _framework(module) != _framework(target) and _framework(target) != "__init__"
    )
    assert not crossing, crossing


def test_every_front_end_is_registered_in_order() -> None:
    """``load_job`` asks the registered front ends in order; the default one, which recognises any
    config, comes last, so it never hides a framework's own input."""
    registered = importlib.import_module("solver_placement._job")._FRONTENDS
    names = [frontend.name for frontend in registered]
    assert names == ["verl_trainer", "resource_pools", "component_placement"]
    assert all(not frontend.recognises({}) for frontend in registered[:-1]) and registered[-1].recognises({})


#: The modules that read a raw config mapping: each parses one section into typed values (or,
#: under ``_frontends``, translates a framework's input), so validation happens once, here.
PARSERS = {
    "_config", "_overrides", "_solver_settings", "_job", "_cluster.schema", "_cluster.schema_groups", "_cluster.schema_topology",
    "_specification.grammar", "_specification.environment", "_specification.placement_spec", "_auto.section",
}  # fmt: skip
#: The core's units that take typed values only: the spec once parsed, the solver, the verifier.
TYPED_UNITS = ("_specification", "_solver", "_verify")
_RAW_MAPPING = re.compile(r"(?:dict|Mapping)\[str, Any\]")


def _relative(path: Path) -> str:
    """``_cluster.schema`` for ``solver_placement/_cluster/schema.py``."""
    return ".".join(path.relative_to(PACKAGE).with_suffix("").parts)


def test_raw_config_mappings_are_read_only_by_the_parsers() -> None:
    """Parse, don't validate: a section is checked where it is read, and every layer below takes
    the typed values (no ``require_mapping`` and no ``Mapping[str, Any]`` down there)."""
    modules = {_relative(path): path.read_text() for path in PACKAGE.rglob("*.py")}
    validating = sorted(name for name, text in modules.items() if "require_mapping(" in text and name not in PARSERS and not name.startswith("_frontends."))
    assert not validating, f"only the parsers and the front ends read raw mappings: {validating}"
    untyped = sorted(
        name for name, text in modules.items() if name.split(".")[0] in TYPED_UNITS and name not in PARSERS and _RAW_MAPPING.search(text)
    )
    assert not untyped, f"typed values only below the parsers: {untyped}"
