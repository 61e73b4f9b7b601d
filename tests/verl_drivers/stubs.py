"""Stand-ins for the packages verl imports but pool construction never uses (torch, transformers,
vLLM, ...), so verl's own driver code runs here without them, without GPUs and without Ray.

The stand-ins are the shared inert modules (``tests/driver_shared/inert_modules.py``), given only
to imports made by verl code (or by a stand-in): imports made by anything else (Ray's optional
packages) fail as usual. What is verl's own here is ``ray.remote`` leaving classes as they are.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1] / "driver_shared"))

import inert_modules  # noqa: E402
from inert_modules import Anything  # noqa: E402,F401  (the drivers' stand-in for what they replace)

#: Packages always imported for real: verl itself and what pool construction does use.
REAL = ("verl", "ray", "omegaconf", "numpy", "packaging")


def install() -> None:
    """Stub the missing packages, and make ``ray.remote`` leave classes as they are (marked as
    Ray would, so verl's fused-worker code finds them), so nothing starts an actor."""
    import ray

    def marked(cls: type) -> type:
        cls.__ray_actor_class__ = cls  # type: ignore[attr-defined]
        return cls

    ray.remote = lambda *args, **kwargs: marked(args[0]) if args and isinstance(args[0], type) else marked
    inert_modules.install(inert_modules.Rules(real=REAL, importers=("verl",), default_version="2.6.0"))
