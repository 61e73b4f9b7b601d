"""Inert stand-ins for what OpenRLHF imports but its placement code never uses (torch, vLLM,
DeepSpeed, transformers, ...), so OpenRLHF's own launcher runs here without them and without GPUs.

The stand-ins are the shared inert modules (``tests/driver_shared/inert_modules.py``), given to
every missing module whoever imports it. What is OpenRLHF's own here is the versions they report.
Ray is not stubbed here: the driver puts its recorder (``recorder.py``) in its place before
OpenRLHF is imported.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1] / "driver_shared"))

import inert_modules  # noqa: E402
from inert_modules import StubModule  # noqa: E402,F401  (the recorder builds its Ray from it)

#: Packages imported for real: OpenRLHF itself and what its version checks use (Ray is the
#: recorder's, put in place before; a Ray submodule it lacks is a stand-in too).
REAL = ("openrlhf", "packaging")
#: The versions stand-in packages report (OpenRLHF compares vLLM's as a string in 0.7.0 and as a
#: version later; 0.9.2 passes both checks, ``>= "0.8.1"`` and ``> 0.8.5``).
VERSIONS = {"vllm": "0.9.2", "torch": "2.6.0", "deepspeed": "0.16.4", "transformers": "4.51.0"}


def install() -> None:
    """Stub every package no real finder has (the heavy ones are never installed beside the test)."""
    inert_modules.install(inert_modules.Rules(real=REAL, versions=VERSIONS, default_version="1.0.0"))
