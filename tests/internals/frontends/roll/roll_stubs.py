"""Inert stand-ins for what ROLL imports but its placement code never uses (torch, transformers,
Megatron, vLLM, ...), so ``roll.configs`` and ``roll.distributed`` import without them.

The stand-ins are the shared inert modules (``tests/driver_shared/inert_modules.py``), given to
imports made by ROLL's or Ray's code (or by a stand-in). What is ROLL's own here is ``torch.cuda``:
it reports an NVIDIA GPU and the driver node's device count, so ROLL picks its CUDA platform as on
a GPU node.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[3] / "driver_shared"))

import inert_modules  # noqa: E402
from inert_modules import Anything, StubModule  # noqa: E402,F401  (the recorder answers with Anything)


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
    inert_modules.install(inert_modules.Rules(real=("roll",), importers=("roll", "ray"), default_version="2.6.0"))
