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
    for name, path in (
        ("areal", "areal"),
        ("areal.api", "areal/api"),
        ("areal.utils", "areal/utils"),
        ("areal.infra", "areal/infra"),
        ("areal.infra.scheduler", "areal/infra/scheduler"),
    ):
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


#: Packages imported for real when AReaL's scheduler code runs; every other missing one is inert.
REAL = ("areal", "omegaconf", "hydra", "yaml", "numpy", "packaging", "lark")


def install_missing(source: Path) -> None:
    """Import AReaL from ``source`` with every package it imports and this environment lacks
    (torch, SGLang, aiohttp, ...) an inert stand-in (``tests/driver_shared/inert_modules.py``,
    given only to imports made by AReaL's code or a stand-in), and ``importlib.metadata.version``
    answering for them, as AReaL's import-time version checks ask (``areal/utils/pkg_version.py``)."""
    import importlib.metadata as metadata

    sys.path.insert(0, str(source))
    sys.path.append(str(Path(__file__).resolve().parents[1] / "driver_shared"))
    import inert_modules

    inert_modules.install(inert_modules.Rules(real=REAL, importers=("areal",), default_version="2.6.0"))
    real_version = metadata.version

    def version(name: str) -> str:
        try:
            return real_version(name)
        except metadata.PackageNotFoundError:
            return "99.0.0"

    metadata.version = version
