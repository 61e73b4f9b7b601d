"""Inert stand-ins for what AReaL's placement code imports but never uses to place.

AReaL's ``areal/api/alloc_mode.py`` imports ``SchedulingStrategy`` from ``areal.api.cli_args``
(which pulls in Hydra, uvloop, transformers...) and ``areal.utils.logging`` (colorlog). The two
classes are taken from AReaL's own ``cli_args.py`` source (their ``ast`` nodes, executed), so
the scheduling strategy the parser builds is AReaL's own; the rest of ``cli_args`` is not
loaded. ``areal`` and ``areal.utils`` become bare packages whose ``__path__`` is the installed
source, so every other module AReaL imports is its real code.
"""

from __future__ import annotations

import ast
import enum
import logging
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

#: Classes of ``areal/api/cli_args.py`` the placement code needs, executed from its source.
CLI_CLASSES = ("SchedulingStrategyType", "SchedulingStrategy", "SchedulingSpec")


def install(source: Path) -> None:
    """Make ``import areal.api.alloc_mode`` (and the schedulers) run AReaL's code from ``source``."""
    for name, path in (("areal", "areal"), ("areal.api", "areal/api"), ("areal.utils", "areal/utils"), ("areal.infra", "areal/infra"), ("areal.infra.scheduler", "areal/infra/scheduler")):
        package = types.ModuleType(name)
        package.__path__ = [str(source / path)]
        sys.modules[name] = package
    cli_args = types.ModuleType("areal.api.cli_args")
    tree = ast.parse((source / "areal/api/cli_args.py").read_text())
    wanted = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name in CLI_CLASSES]
    sys.modules["areal.api.cli_args"] = cli_args
    namespace = cli_args.__dict__
    namespace.update({"dataclass": dataclass, "field": field, "Enum": enum.Enum})
    exec(compile(ast.Module(body=wanted, type_ignores=[]), str(source / "areal/api/cli_args.py"), "exec"), namespace)  # noqa: S102 - AReaL's own class definitions
    areal_logging = types.ModuleType("areal.utils.logging")
    areal_logging.getLogger = lambda name="", *args, **kwargs: logging.getLogger(name)  # type: ignore[attr-defined]
    sys.modules["areal.utils.logging"] = areal_logging
    sys.modules["areal.utils"].logging = areal_logging  # type: ignore[attr-defined]
