"""Import the placement code of the released ``rlinf`` package (0.3.0) without torch or a Ray cluster.

``pip install --no-deps rlinf==0.3.0`` installs RLinf's source but none of its heavy dependencies.
Its placement modules need only the standard library, omegaconf, PyYAML, packaging and ray (all
installed here) at run time, but three package ``__init__`` files and two annotations pull in
torch. This shim replaces exactly these, and nothing else:

1. ``rlinf/__init__.py`` (registers RLinf's OmegaConf resolvers; imports torch) -> an empty
   package module ``rlinf`` pointing at the installed directory, so its submodules still load
   from RLinf's own files.
2. ``rlinf/scheduler/__init__.py`` (imports channels, workers, collectives: torch and Ray actors)
   -> an empty package module that afterwards exposes only the names ``rlinf.utils.placement``
   imports from it (``Cluster``, ``ComponentPlacement``, ``PackedPlacementStrategy``) and the
   other two strategies.
3. ``rlinf/utils/__init__.py`` (imports torch) -> an empty package module.
4. ``torch``, only when it is not installed and only while the modules above are imported: a
   module whose attributes are empty placeholder classes. RLinf's placement modules touch torch
   only in annotations evaluated at import time (``torch.Tensor | list[torch.Tensor]`` in
   ``scheduler/cluster/utils.py``, ``-> torch.cuda`` in ``hardware/accelerators/accelerator.py``);
   the placeholder is removed from ``sys.modules`` again afterwards.

Everything the tests call is RLinf's unmodified code: ``rlinf.scheduler.cluster`` (config, node,
utils, cluster), ``rlinf.scheduler.hardware``, ``rlinf.scheduler.placement`` and
``rlinf.utils.placement``.

Use :func:`load` (skips the calling test when rlinf 0.3.0 is not installed).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.metadata
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

import pytest

#: The RLinf release the differential tests were written against (their named differences too).
RLINF_VERSION = "0.3.0"
INSTALL_LINE = f"pip install --no-deps rlinf=={RLINF_VERSION}"


def installed_version() -> str | None:
    """The installed rlinf distribution's version, or None (``tests/internals/rlinf`` itself is no package)."""
    try:
        return importlib.metadata.version("rlinf")
    except importlib.metadata.PackageNotFoundError:
        return None


def skip_reason() -> str | None:
    """Why RLinf's code cannot be loaded here, or None when it can."""
    version = installed_version()
    if version is None:
        return f"rlinf is not installed; install it with: {INSTALL_LINE}"
    if version != RLINF_VERSION:
        return f"rlinf {version} is installed, these tests pin {RLINF_VERSION}: {INSTALL_LINE}"
    if importlib.util.find_spec("ray") is None:
        return "ray is not installed (RLinf's cluster module imports it)"
    return None


def load() -> types.SimpleNamespace:
    """RLinf's placement classes, or skip the calling test (module) when they cannot be loaded."""
    reason = skip_reason()
    if reason is not None:
        pytest.skip(reason, allow_module_level=True)
    if "rlinf.utils.placement" not in sys.modules:
        _import_placement_modules()
    return _namespace()


def _import_placement_modules() -> None:
    root = Path(str(importlib.metadata.distribution("rlinf").locate_file("rlinf")))
    stub_torch = importlib.util.find_spec("torch") is None
    if stub_torch:
        sys.modules["torch"] = _placeholder_module("torch")
    try:
        for name in ("rlinf", "rlinf.scheduler", "rlinf.utils"):
            if name not in sys.modules:
                _empty_package(name, root.joinpath(*name.split(".")[1:]))
        cluster = importlib.import_module("rlinf.scheduler.cluster")
        placement = importlib.import_module("rlinf.scheduler.placement")
        scheduler = sys.modules["rlinf.scheduler"]
        scheduler.Cluster = cluster.Cluster  # type: ignore[attr-defined]
        for name in ("ComponentPlacement", "FlexiblePlacementStrategy", "NodePlacementStrategy", "PackedPlacementStrategy"):
            setattr(scheduler, name, getattr(placement, name))
        importlib.import_module("rlinf.utils.placement")
    finally:
        if stub_torch:
            del sys.modules["torch"]


def _empty_package(name: str, path: Path) -> None:
    """A package module for ``name`` whose submodules load from ``path``, without its ``__init__``."""
    spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
    spec.submodule_search_locations = [str(path)]
    module = importlib.util.module_from_spec(spec)
    module.__path__ = [str(path)]
    sys.modules[name] = module


def _placeholder_module(name: str) -> types.ModuleType:
    """A module whose every attribute is an empty class (enough for annotations and ``X | Y``)."""
    module = types.ModuleType(name)

    def __getattr__(attribute: str) -> Any:
        return type(attribute, (), {})

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    return module


def _namespace() -> types.SimpleNamespace:
    cluster = sys.modules["rlinf.scheduler.cluster"]
    hardware = importlib.import_module("rlinf.scheduler.hardware")
    placement = sys.modules["rlinf.scheduler.placement"]
    utils = sys.modules["rlinf.utils.placement"]
    return types.SimpleNamespace(
        Cluster=cluster.Cluster,
        ClusterConfig=cluster.ClusterConfig,
        NodeInfo=cluster.NodeInfo,
        NodeGroupInfo=cluster.NodeGroupInfo,
        parse_rank_config=cluster.parse_rank_config,
        Accelerator=hardware.Accelerator,
        HardwareInfo=hardware.HardwareInfo,
        HardwareResource=hardware.HardwareResource,
        FlexiblePlacementStrategy=placement.FlexiblePlacementStrategy,
        NodePlacementStrategy=placement.NodePlacementStrategy,
        PackedPlacementStrategy=placement.PackedPlacementStrategy,
        ComponentPlacement=placement.ComponentPlacement,
        HybridComponentPlacement=utils.HybridComponentPlacement,
        ModelParallelComponentPlacement=utils.ModelParallelComponentPlacement,
        ModelParallelEvalComponentPlacement=utils.ModelParallelEvalComponentPlacement,
        PlacementMode=utils.PlacementMode,
        RolloutSyncMode=utils.RolloutSyncMode,
    )
