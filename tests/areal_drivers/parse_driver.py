"""Parse allocation strings with AReaL's own parser; print one JSON line per string.

Usage: ``python parse_driver.py AREAL_SOURCE < strings.json`` (a JSON list). Each answer is
``{"parts": [...]}`` with every field of every ``ModelAllocation`` the string gives, or
``{"error": "<exception class>", "message": ...}`` when AReaL refuses it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import stubs


def main() -> None:
    stubs.install(Path(sys.argv[1]))
    from areal.api.alloc_mode import _AllocationMode

    answers = []
    for text in json.load(sys.stdin):
        try:
            mode = _AllocationMode.from_str(text)
        except Exception as error:  # noqa: BLE001 - the refusal is what is compared
            answers.append({"error": type(error).__name__, "message": str(error).splitlines()[0] if str(error) else ""})
            continue
        answers.append({"parts": [_fields(part) for part in mode.allocations]})
    print(json.dumps(answers))


def _fields(part: object) -> dict[str, object]:
    parallel = part.parallel  # type: ignore[attr-defined]
    strategy = part.scheduling_strategy  # type: ignore[attr-defined]
    kind = getattr(strategy.type, "value", strategy.type)
    return {
        "backend": part.backend,  # type: ignore[attr-defined]
        "name": part.name,  # type: ignore[attr-defined]
        "data": parallel.data_parallel_size,
        "tensor": parallel.tensor_parallel_size,
        "pipeline": parallel.pipeline_parallel_size,
        "context": parallel.context_parallel_size,
        "expert": parallel.expert_parallel_size,
        "expert_tensor": parallel.expert_tensor_parallel_size,
        "colocated": kind == "colocation",
        "target": strategy.target,
        "world_size": part.world_size,  # type: ignore[attr-defined]
    }


if __name__ == "__main__":
    main()
