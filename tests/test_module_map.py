"""The module map in docs/architecture.md is generated from the package, so it cannot drift.

Every module and package is listed with the first sentence of its docstring, walked from the
source tree (a module added, moved or renamed changes the map by itself). After such a change,
regenerate the map with::

    UPDATE_MODULE_MAP=1 python -m pytest tests/test_module_map.py
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

from import_graph import PACKAGE

DOC = PACKAGE.parent / "docs" / "architecture.md"
#: The map is the first fenced block after this heading.
HEADING = "## Modules\n"
FENCE = "```\n"
#: The end of a docstring's first sentence: a full stop before white space or the end, not
#: the one of "e.g." or "i.e.".
SENTENCE_END = re.compile(r"(?<!e\.g)(?<!i\.e)\.(?=\s|$)")


def summary(path: Path) -> str:
    """The first sentence of a module's docstring, on one line."""
    docstring = ast.get_docstring(ast.parse(path.read_text()))
    assert docstring, f"{path.relative_to(PACKAGE.parent)} has no docstring: say what the module is for"
    paragraph = " ".join(docstring.split("\n\n")[0].split())
    end = SENTENCE_END.search(paragraph)
    return paragraph[: end.end()] if end else paragraph


def package_map(folder: Path, depth: int = 0) -> list[str]:
    """The lines of ``folder``'s modules, then of its sub-packages (each under its own line)."""
    indent = "  " * depth
    lines = [f"{indent}{path.name}  {summary(path)}" for path in sorted(folder.glob("*.py")) if path.name != "__init__.py"]
    for sub in sorted(child for child in folder.iterdir() if (child / "__init__.py").is_file()):
        lines.append(f"{indent}{sub.name}/  {summary(sub / '__init__.py')}")
        lines.extend(package_map(sub, depth + 1))
    return lines


def generated() -> str:
    return "\n".join(package_map(PACKAGE)) + "\n"


def written(text: str) -> tuple[int, int]:
    """Where the map sits in ``text``: the start and end offsets of the fenced block's body."""
    start = text.index(FENCE, text.index(HEADING)) + len(FENCE)
    return start, text.index(FENCE, start)


def test_the_module_map_is_the_package() -> None:
    text = DOC.read_text()
    start, end = written(text)
    if os.environ.get("UPDATE_MODULE_MAP"):
        DOC.write_text(text[:start] + generated() + text[end:])
        text = DOC.read_text()
        start, end = written(text)
    assert text[start:end] == generated(), "docs/architecture.md's module map is stale: regenerate it (see this test's docstring)"
