"""Inert stand-ins for every package SkyRL imports and this environment lacks (torch, vLLM,
transformers, loguru, ...): any attribute is another inert class, calling or subclassing one
works and does nothing, so SkyRL's placement code imports and runs its real logic."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from typing import Any

#: Imported for real when present; SkyRL's own package always is.
REAL = ("skyrl_train", "omegaconf", "hydra", "yaml", "numpy", "packaging", "ray", "antlr4")


class _InertMeta(type):
    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return inert_class(name)

    def __getitem__(cls, item: Any) -> Any:
        return cls

    def __contains__(cls, item: Any) -> bool:
        return False

    def __or__(cls, other: Any) -> Any:
        return cls

    def __ror__(cls, other: Any) -> Any:
        return cls


class Inert(metaclass=_InertMeta):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Inert()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return Inert()

    def __iter__(self) -> Any:
        return iter(())

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *args: Any) -> None:
        return None


def inert_class(name: str) -> type:
    return _InertMeta(name, (Inert,), {})


class _Module(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if name == "__version__":
            return "0.0.0"
        return inert_class(name)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        top = fullname.split(".")[0]
        if top in REAL or top in sys.builtin_module_names:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            found = finder.find_spec(fullname, path, target) if hasattr(finder, "find_spec") else None
            if found is not None:
                return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _Module(spec.name)
        module.__path__ = []  # type: ignore[attr-defined]
        module.__version__ = "0.0.0"  # type: ignore[attr-defined]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


#: Standard-library or installed packages that SkyRL imports but that must be inert here.
FORCED = ("torch", "transformers", "vllm", "sglang", "loguru", "jaxtyping", "tqdm", "wandb", "peft", "datasets", "tensordict")


def install() -> None:
    finder = _Finder()
    sys.meta_path.insert(0, finder)
    for name in FORCED:
        if name not in sys.modules:
            spec = importlib.machinery.ModuleSpec(name, finder, is_package=True)
            sys.modules[name] = finder.create_module(spec)
    sys.modules["vllm"].__version__ = VLLM_VERSION  # type: ignore[attr-defined]


#: The vLLM version SkyRL's import-time check is told (it asserts >= 0.8.3).
VLLM_VERSION = "0.10.1"
