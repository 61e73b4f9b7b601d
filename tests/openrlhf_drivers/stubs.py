"""Inert stand-ins for what OpenRLHF imports but its placement code never uses (torch, vLLM,
DeepSpeed, transformers, ...), so OpenRLHF's own launcher runs here without them and without GPUs.

A module no real finder has, imported by OpenRLHF code (or by a stand-in), becomes a module whose
every attribute accepts any use an import or a class body makes of it: calling, subclassing,
indexing, decorating (a decorator returns what it decorates). Ray is not stubbed here: the
driver puts its recorder (``recorder.py``) in its place before OpenRLHF is imported.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any

#: Packages imported for real: OpenRLHF itself and what its version checks use (Ray is the
#: recorder's, put in place before; a Ray submodule it lacks is a stand-in too).
REAL = ("openrlhf", "packaging")
#: The versions stand-in packages report (OpenRLHF compares vLLM's as a string in 0.7.0 and as a
#: version later; 0.9.2 passes both checks, ``>= "0.8.1"`` and ``> 0.8.5``).
VERSIONS = {"vllm": "0.9.2", "torch": "2.6.0", "deepspeed": "0.16.4", "transformers": "4.51.0"}


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


class StubModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name == "__version__":
            return VERSIONS.get(self.__name__.split(".")[0], "1.0.0")
        if name.startswith("__"):
            raise AttributeError(name)
        return Anything()


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on ``sys.meta_path``: asked only for modules no real finder has."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name.split(".")[0] in REAL:
            return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def install() -> None:
    """Stub every package no real finder has (the heavy ones are never installed beside the test)."""
    sys.meta_path.append(_Finder())
