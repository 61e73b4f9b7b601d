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
    (torch, SGLang, aiohttp, ...) inert, and ``importlib.metadata.version`` answering for them,
    as AReaL's import-time version checks ask (``areal/utils/pkg_version.py``)."""
    import importlib.machinery
    import importlib.metadata as metadata
    import importlib.util

    sys.path.insert(0, str(source))
    spec = importlib.util.spec_from_file_location("verl_driver_stubs", Path(__file__).parents[1] / "verl_drivers" / "stubs.py")
    assert spec is not None and spec.loader is not None
    inert = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(inert)

    class Finder(inert._Finder):  # type: ignore[name-defined,misc]
        def find_spec(self, name: str, path: object, target: object = None) -> importlib.machinery.ModuleSpec | None:
            if name.split(".")[0] in REAL:
                return None
            frame = sys._getframe(1)
            while frame is not None and frame.f_globals.get("__name__", "").startswith(("importlib", "_frozen_importlib")):
                frame = frame.f_back
            importer = frame.f_globals.get("__name__", "") if frame is not None else ""
            if not (importer.startswith("areal") or isinstance(sys.modules.get(importer), inert.StubModule)):
                return None
            return importlib.machinery.ModuleSpec(name, self, is_package=True)

    sys.meta_path.append(Finder())
    real_version = metadata.version

    def version(name: str) -> str:
        try:
            return real_version(name)
        except metadata.PackageNotFoundError:
            return "99.0.0"

    metadata.version = version
