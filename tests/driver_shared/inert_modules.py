"""Inert stand-ins for the packages a framework imports but its placement code never uses
(torch, vLLM, SGLang, Megatron, transformers, ...), shared by every framework driver.

The drivers run a framework's own code in a subprocess on a machine without GPUs or those heavy
packages. A module no real finder has becomes a ``StubModule`` whose every attribute is an
``Anything``: a value that can be called, subclassed, indexed, iterated (empty) and used as a
decorator (returning what it decorates), and is false, so "is this accelerator available" checks
say no. What differs between frameworks is only which packages must stay real (a stand-in for
them would hide a real import error), which importers get stand-ins (so, e.g., Ray's own optional
imports still fail as Ray expects), and what ``__version__`` a stand-in package reports (some
frameworks compare versions at import time); ``install`` takes exactly those.

A driver's folder is first on its ``sys.path``; it reaches this one with
``sys.path.append(str(Path(__file__).resolve().parents[N] / "driver_shared"))``.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class Anything:
    """A value that accepts every use a module-level import or class body makes of it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return args[0] if len(args) == 1 and not kwargs and callable(args[0]) else Anything()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return Anything()

    def __getitem__(self, key: Any) -> Any:
        return Anything()

    def __bool__(self) -> bool:
        return False

    def __iter__(self) -> Any:
        return iter(())

    def __or__(self, other: Any) -> Any:
        return Anything()

    __ror__ = __or__

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (type("Stub", (StubBase,), {}),)


class _StubMeta(type):
    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return Anything()


class StubBase(metaclass=_StubMeta):
    """The base a class gets in place of a stand-in base (``class Actor(nn.Module)``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return Anything()


@dataclass(frozen=True)
class Rules:
    """Which missing modules become stand-ins, and the versions the stand-ins report.

    ``importers=None`` stubs a missing module whoever imports it; otherwise only imports made by
    a module whose name starts with one of them (or by a stand-in). ``default_version=None``
    leaves stand-ins without ``__version__`` (``getattr(module, "__version__", None)`` is None).
    """

    real: tuple[str, ...]
    importers: tuple[str, ...] | None = None
    versions: Mapping[str, str] = field(default_factory=dict)
    default_version: str | None = None


_RULES = Rules(real=())


class StubModule(types.ModuleType):
    """A missing module: every attribute is an ``Anything``; ``__version__`` as the rules say."""

    def __getattr__(self, name: str) -> Any:
        if name == "__version__":
            version = _RULES.versions.get(self.__name__.split(".")[0], _RULES.default_version)
            if version is not None:
                return version
        if name.startswith("__"):
            raise AttributeError(name)
        return Anything()


def _importer() -> str:
    """The module whose ``import`` statement is being served (the first frame outside importlib)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(("importlib", "_frozen_importlib")):
        frame = frame.f_back
    return frame.f_globals.get("__name__", "") if frame is not None else ""


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on ``sys.meta_path``: asked only for modules no real finder has."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name.split(".")[0] in _RULES.real:
            return None
        if _RULES.importers is not None:
            importer = _importer()
            if not (importer.startswith(_RULES.importers) or isinstance(sys.modules.get(importer), StubModule)):
                return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def install(rules: Rules) -> None:
    """Make every module no real finder has (and ``rules`` allow) an inert stand-in; once per process."""
    global _RULES
    _RULES = rules
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.append(_Finder())
