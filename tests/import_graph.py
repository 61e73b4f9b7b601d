"""The package's imports read from its source (no module is imported): the graph the architecture
and verifier-independence tests check."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import solver_placement

PACKAGE = Path(solver_placement.__file__).resolve().parent


def module_name(path: Path) -> str:
    """``solver_placement/_solver/build.py`` -> ``solver_placement._solver.build`` (a package's
    ``__init__.py`` is the package)."""
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")


def modules() -> dict[str, Path]:
    """Every module of the package by name."""
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_only(tree: ast.Module) -> set[int]:
    """Ids of the nodes inside ``if TYPE_CHECKING:`` blocks: imports for annotations, never run."""
    return {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING"
        for statement in block.body
        for node in ast.walk(statement)
    }


@cache
def parsed(path: Path) -> ast.Module:
    """``path``'s syntax tree, read once a session: a dozen architecture tests walk the same
    files, and parsing the package each time was most of their run (read-only use)."""
    return ast.parse(path.read_text())


def imports(path: Path, runtime_only: bool = False) -> set[str]:
    """Package modules ``path`` imports (at module level or inside functions), each named as
    written plus ``module.name`` for every ``from module import name``; ``runtime_only`` leaves
    out imports under ``if TYPE_CHECKING:``."""
    tree = parsed(path)
    skipped = _type_checking_only(tree) if runtime_only else set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.startswith("solver_placement"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("solver_placement"))
        elif isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{path}: relative import; use absolute solver_placement imports")
    return found


def graph(runtime_only: bool = False) -> dict[str, set[str]]:
    """Per module, the package modules it imports (itself left out)."""
    known = modules()
    return {name: {target for target in imports(path, runtime_only) if target in known and target != name} for name, path in known.items()}


def reachable(start: set[str], edges: dict[str, set[str]]) -> dict[str, str | None]:
    """Every module reachable from ``start`` along ``edges``, with the module it was first
    reached from (None for a start), so a path can be told back."""
    reached: dict[str, str | None] = dict.fromkeys(sorted(start))
    frontier = sorted(start)
    while frontier:
        module = frontier.pop()
        for target in sorted(edges[module]):
            if target not in reached:
                reached[target] = module
                frontier.append(target)
    return reached


def path_to(module: str, reached: dict[str, str | None]) -> str:
    """``start -> ... -> module``, as ``reachable`` found it."""
    steps = [module]
    while (parent := reached[steps[-1]]) is not None:
        steps.append(parent)
    return " -> ".join(reversed(steps))
