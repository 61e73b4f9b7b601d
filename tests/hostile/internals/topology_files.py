"""The topology reader run on a sysfs tree and an ``nvidia-smi`` a hostile case writes (issue 35
item 9): in the worker's own process, since the command's interpreter start alone takes seconds.
It lives under ``internals/`` because it calls the reader itself, not the public command."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from solver_placement._cluster.topology_reader import read_node_topology


def reading(files: dict[str, bytes], nvidia_smi: str | None = None) -> Callable[[], Any]:
    """A call of the reader over a sysfs tree holding ``files`` (paths under it), with a fake
    ``nvidia-smi`` running the shell text ``nvidia_smi`` first on ``PATH`` when given (else none is
    asked); ``PATH`` is restored after."""

    def action() -> Any:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            for name, data in files.items():
                (root / "sys" / name).parent.mkdir(parents=True, exist_ok=True)
                (root / "sys" / name).write_bytes(data)
            if nvidia_smi is None:
                return read_node_topology(root / "sys", use_nvidia_smi=False, read_egl=False)
            (root / "bin").mkdir()
            (root / "bin/nvidia-smi").write_text(f"#!/bin/sh\n{nvidia_smi}\n")
            (root / "bin/nvidia-smi").chmod(0o755)
            path = os.environ.get("PATH", "")
            os.environ["PATH"] = f"{root / 'bin'}{os.pathsep}{path}"
            try:
                return read_node_topology(root / "sys", read_egl=False)
            finally:
                os.environ["PATH"] = path

    return action
