"""The behaviour fingerprint of every model in ``models/``: one SHA-256 per way a model is read.

``python tests/model_digests.py --record`` writes ``tests/data/model_digests.json``;
``tests/test_model_digests.py`` recomputes every entry and requires the same bytes, so a
refactoring that changes any placement, error type or auto-placement answer is caught.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from solver_placement import ModelParallelComponentPlacement, PlacementError, auto_place, solve

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"
RECORD = Path(__file__).resolve().parent / "data" / "model_digests.json"


def _sha(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def _outcome(make: Any) -> str:
    """The digest of the placements ``make()`` returns, or the error type it raises."""
    try:
        return _sha(make())
    except PlacementError as error:
        return f"error:{type(error).__name__}"


def _record(p: Any) -> dict[str, Any]:
    """A record as digested: ``hardware_metadata`` only when a process holds configured hardware,
    ``env`` only when its component's environment keys set variables, so digests recorded before
    those fields existed stay valid for every other model."""
    fields = asdict(p)
    for name in ("hardware_metadata", "env"):
        if not fields[name]:
            del fields[name]
    return fields


def _solved(source: str) -> dict[str, Any]:
    solution = solve(source)
    return {
        "placements": {name: [_record(p) for p in solution.placements(name)] for name in solution.components},
        "shared": {name: [_record(p) for p in solution.placements(name, False)] for name in solution.components},
        "status": solution.status,
    }


def _model_parallel(path: Path) -> dict[str, Any]:
    placement = ModelParallelComponentPlacement(str(path))
    return {name: [_record(p) for p in placement.get_placements(name)] for name in placement.components}


def _auto(path: Path) -> dict[str, Any]:
    result = auto_place(str(path))
    return {"table": result.table(), "yaml": result.to_yaml()}


def digests() -> dict[str, str]:
    """Every model file, every reading of it that applies."""
    out: dict[str, str] = {}
    for path in sorted(MODELS.rglob("*.yaml")):
        name = str(path.relative_to(MODELS))
        raw = OmegaConf.to_container(OmegaConf.load(path))
        out[f"{name}:solve"] = _outcome(lambda path=path: _solved(str(path)))
        if path.name.startswith("modelparallel_") or (isinstance(raw, dict) and "actor" in raw):
            out[f"{name}:model_parallel"] = _outcome(lambda path=path: _model_parallel(path))
        if isinstance(raw, dict) and "auto_placement" in raw:
            out[f"{name}:auto"] = _outcome(lambda path=path: _auto(path))
    return out


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python tests/model_digests.py --record")
    RECORD.write_text(json.dumps(digests(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {RECORD}")
