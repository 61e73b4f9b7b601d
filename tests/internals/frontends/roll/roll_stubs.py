"""Inert stand-ins for what ROLL imports but its placement code never uses (torch, transformers,
Megatron, vLLM, ...), so ``roll.configs`` and ``roll.distributed`` import without them.

A module missing here and imported by ROLL's code (or by a stand-in) becomes a module whose every
attribute is a stand-in that can be called, subclassed, indexed and used as a decorator. ``torch``
is one too, except ``torch.cuda``: it reports an NVIDIA GPU and the driver node's device count, so
ROLL picks its CUDA platform as on a GPU node.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any


class Anything:
    """A value that accepts every use a module-level import sees at import time."""

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
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return Anything()


class StubModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name == "__version__":
            return "2.6.0"
        if name.startswith("__"):
            raise AttributeError(name)
        return Anything()


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on ``sys.meta_path``: asked only for modules no real finder has, imported by ROLL or a stand-in."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name.split(".")[0] == "roll":
            return None
        frame = sys._getframe(1)
        while frame is not None and frame.f_globals.get("__name__", "").startswith(("importlib", "_frozen_importlib")):
            frame = frame.f_back
        importer = frame.f_globals.get("__name__", "") if frame is not None else ""
        if not (importer.startswith(("roll", "ray")) or isinstance(sys.modules.get(importer), StubModule)):
            return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def install(driver_gpus: int) -> None:
    """The stand-ins, and a ``torch.cuda`` that sees ``driver_gpus`` NVIDIA GPUs."""
    torch = StubModule("torch")
    torch.__path__ = []  # type: ignore[attr-defined]
    cuda = StubModule("torch.cuda")
    cuda.is_available = lambda: True  # type: ignore[attr-defined]
    cuda.get_device_name = lambda *args: "NVIDIA H100"  # type: ignore[attr-defined]
    cuda.device_count = lambda: driver_gpus  # type: ignore[attr-defined]
    torch.cuda = cuda  # type: ignore[attr-defined]
    sys.modules.setdefault("torch", torch)
    sys.modules.setdefault("torch.cuda", cuda)
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.append(_Finder())
