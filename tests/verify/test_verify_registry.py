"""The verifier's registry covers every component config key once, and stays independent of
the solver and of the resolved candidates it is meant to check."""

from __future__ import annotations

import ast
import importlib
from collections import Counter
from pathlib import Path

from solver_placement.spec.grammar import ALIASES, COMPONENT_KEYS
from solver_placement.verify import CHECKS

CANONICAL_KEYS = [key for key in COMPONENT_KEYS if key not in ALIASES]


def test_every_canonical_key_is_owned_by_exactly_one_check() -> None:
    owners = Counter(key for check in CHECKS for key in check.keys)
    assert sorted(owners) == sorted(CANONICAL_KEYS)
    assert [key for key, count in owners.items() if count > 1] == []


def test_aliases_are_read_as_the_key_they_spell() -> None:
    assert set(ALIASES.values()) <= set(CANONICAL_KEYS)
    assert not {key for check in CHECKS for key in check.keys} & set(ALIASES)


def test_check_names_are_unique() -> None:
    names = [check.name for check in CHECKS]
    assert len(set(names)) == len(names)


def test_the_verifier_imports_neither_the_solver_nor_the_candidates() -> None:
    folder = Path(importlib.import_module("solver_placement.verify").__file__ or "").parent  # the package, not the function
    imported = {
        node.module
        for path in folder.glob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert not {module for module in imported if module.startswith(("solver_placement.solver", "solver_placement.spec.candidates"))}
