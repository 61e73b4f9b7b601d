"""The package's shape, checked by reading its source: the public names, the import layers
(lower stages never import higher ones, no cycles) and the size of modules."""

from __future__ import annotations

import ast
from pathlib import Path

import solver_placement

PACKAGE = Path(solver_placement.__file__).resolve().parent

#: Pipeline stages from the bottom up: a unit may import only itself and units listed before it.
LAYERS = (
    "errors",
    "constants",
    "arrays",
    "limits",
    "config",
    "cluster",
    "job",
    "spec",
    "records",
    "verify",
    "solver",
    "auto",
    "rlinf",
    "ray_launch",
    "layout_report",
    "verl_export",
    "plot",
    "diagnose",
    "replan",
    "cli",
    "launcher",
    "__init__",
    "__main__",
)

PUBLIC_NAMES = [
    "Assignment", "AssumedGpuCountWarning", "AutoCandidate", "AutoPlacement", "AutoProblem", "Cluster", "ComponentPlacement",
    "ComponentSpec", "CostTable", "Diagnosis", "Dispatch", "Execute", "FlexiblePlacementStrategy",
    "HybridComponentPlacement", "InfeasiblePlacementError", "Job", "LaunchError", "LocalRayCluster",
    "ModelParallelComponentPlacement", "ModelParallelEvalComponentPlacement",
    "MultiAgentModelParallelComponentPlacement", "MultiAgentModelParallelEvalComponentPlacement", "NodeGroup", "NodeRankError", "NodePlacementStrategy", "PackedPlacementStrategy",
    "Placement", "PlacementConfigError", "PlacementError", "PlacementMode", "PlacementSpec",
    "PlacementStrategy", "PlacementSyntaxError", "RayLaunchPlan", "Reservation", "ResourcePool",
    "ResourceSet", "RolloutSyncMode", "Solution", "SolverTimeoutError", "Statement", "VerificationError", "VerlExport", "VerlExportError",
    "WorkerGroup", "YamlText", "as_cluster", "auto_place", "diagnose", "explain", "export_verl", "fuse", "launch", "layout_report", "load_config", "load_job", "placement_for_config", "plan", "pool_spec",
    "register",
    "reserve", "solve", "to_ray", "verify",
]  # fmt: skip


#: Upward imports allowed, each inside a function (so it runs only when called, never at import):
#: ``Cluster.from_ray`` connects to Ray by the launch's attach rules, which live once in ray_launch.
DEFERRED_UPWARD = {("solver_placement.cluster.cluster", "solver_placement.ray_launch.connect")}


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")


def _module_level_imports(path: Path) -> set[str]:
    """Package modules ``path`` imports when it is imported (statements outside any function)."""
    tree = ast.parse(path.read_text())
    inside_functions = {id(node) for function in ast.walk(tree) if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) for node in ast.walk(function)}
    return {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module and id(node) not in inside_functions}


def _imports(path: Path) -> set[str]:
    """Package modules ``path`` imports (at module level or inside functions)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.startswith("solver_placement"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("solver_placement"))
        elif isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{path}: relative import; use absolute solver_placement imports")
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {name: {target for target in _imports(path) if target in modules and target != name} for name, path in modules.items()}


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_public_names_are_pinned() -> None:
    assert sorted(solver_placement.__all__) == sorted(PUBLIC_NAMES)
    for name in PUBLIC_NAMES:
        assert getattr(solver_placement, name) is not None


def test_every_unit_has_a_layer() -> None:
    units = {_unit(module) for module in _graph()}
    assert units <= set(LAYERS), f"add {sorted(units - set(LAYERS))} to LAYERS"


def test_lower_layers_never_import_higher_ones() -> None:
    rank = {unit: position for position, unit in enumerate(LAYERS)}
    upward = [
        f"{module} -> {target}"
        for module, targets in _graph().items()
        for target in targets
        if rank[_unit(target)] > rank[_unit(module)] and (module, target) not in DEFERRED_UPWARD
    ]
    assert not upward


def test_the_deferred_upward_imports_exist_and_run_only_when_called() -> None:
    graph = _graph()
    for module, target in sorted(DEFERRED_UPWARD):
        path = PACKAGE.parent.joinpath(*module.split(".")).with_suffix(".py")
        assert target in graph[module], f"{module} no longer imports {target}: remove it from DEFERRED_UPWARD"
        assert target not in _module_level_imports(path), f"{module} imports {target} at module level"


def test_no_import_cycles() -> None:
    graph = _graph()
    # parents import their children for re-exports; a child importing its package's __init__ is the cycle to catch
    state: dict[str, int] = {}
    cycles: list[str] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*path[path.index(target):], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles


def test_no_module_is_too_long() -> None:
    long = {_module_name(path): n for path in PACKAGE.rglob("*.py") if (n := len(path.read_text().splitlines())) > 450}
    assert not long, f"split these modules: {long}"
