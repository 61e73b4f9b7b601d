"""Stand-ins for the packages verl imports but pool construction never uses (torch, transformers,
vLLM, ...), so verl's own driver code runs here without them, without GPUs and without Ray.

A missing module imported by verl code becomes a module whose every attribute is a stand-in that
can be called, subclassed, indexed and used as a decorator (returning what it decorates); a
stand-in is false, so verl's "is this accelerator available" checks say no. Imports made by
anything else (Ray's optional packages) fail as usual.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any

#: Packages always imported for real: verl itself and what pool construction does use.
REAL = ("verl", "ray", "omegaconf", "numpy", "packaging")


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
    """The base a class gets in place of a stand-in base (``class F(torch.autograd.Function)``)."""

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
    """Last on ``sys.meta_path``: asked only for modules no real finder has."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name.split(".")[0] in REAL:
            return None
        frame = sys._getframe(1)
        while frame is not None and frame.f_globals.get("__name__", "").startswith(("importlib", "_frozen_importlib")):
            frame = frame.f_back
        importer = frame.f_globals.get("__name__", "") if frame is not None else ""
        if not (importer.startswith("verl") or isinstance(sys.modules.get(importer), StubModule)):
            return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def install() -> None:
    """Stub the missing packages, and make ``ray.remote`` leave classes as they are (marked as
    Ray would, so verl's fused-worker code finds them), so nothing starts an actor."""
    import ray

    def marked(cls: type) -> type:
        cls.__ray_actor_class__ = cls  # type: ignore[attr-defined]
        return cls

    ray.remote = lambda *args, **kwargs: marked(args[0]) if args and isinstance(args[0], type) else marked
    sys.meta_path.append(_Finder())
