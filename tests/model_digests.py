"""The behaviour fingerprint of every model in ``models/``: one SHA-256 per way a model is read,
and beside it what a reader needs to see what moved.

``python tests/model_digests.py --record`` writes ``tests/data/model_digests.json`` (the digests)
and ``tests/data/model_layouts.json`` (per reading: each component's own digest and where each of
its ranks sits, the auto-placement table, or the error type); ``tests/test_model_digests.py``
recomputes every entry, requires the same bytes, and on a difference prints which model, which
component and which ranks moved, from the recorded layouts.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from solver_placement import ModelParallelComponentPlacement, Placement, PlacementError, auto_place, solve

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"
RECORD = Path(__file__).resolve().parent / "data" / "model_digests.json"
LAYOUTS = Path(__file__).resolve().parent / "data" / "model_layouts.json"
#: RLinf's hardware type of GPUs, left out of the recorded places.
ACCELERATOR = "Accelerator"
#: Moved ranks shown per component before the rest are counted.
SHOWN_RANKS = 8


def _sha(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Reading:
    """One way of reading one model: the digest the record pins, and the detail that explains a
    changed digest (per component: its digest and one ``node:ids`` entry per rank; or the
    auto-placement table's lines; or the error type)."""

    digest: str
    detail: dict[str, Any]


def _record(p: Placement) -> dict[str, Any]:
    """A record as digested: ``hardware_metadata`` only when a process holds configured hardware,
    ``env`` only when its component's environment keys set variables, so digests recorded before
    those fields existed stay valid for every other model."""
    fields = asdict(p)
    for name in ("hardware_metadata", "env"):
        if not fields[name]:
            del fields[name]
    return fields


def _where(p: Placement) -> str:
    """Where one rank sits, as the failure message shows it: ``node:GPU ids``, or
    ``node:type:ids`` for other hardware (the type is left out for GPUs, most of the record)."""
    ids = ",".join(map(str, p.local_hardware_ranks))
    return f"{p.cluster_node_rank}:{ids}" if p.hardware_type == ACCELERATOR else f"{p.cluster_node_rank}:{p.hardware_type}:{ids}"


def _components(placements: dict[str, list[Placement]], shared: dict[str, list[Placement]] | None = None) -> dict[str, Any]:
    """Per component: the digest of its records (and its shared-accelerator records) and its ranks' places."""
    return {
        name: {
            "digest": _sha([[_record(p) for p in records], [_record(p) for p in (shared or {}).get(name, [])]]),
            "ranks": [_where(p) for p in records],
        }
        for name, records in placements.items()
    }


def _solved(source: str) -> Reading:
    solution = solve(source)
    placements = {name: solution.placements(name) for name in solution.components}
    shared = {name: solution.placements(name, False) for name in solution.components}
    digested = {
        "placements": {name: [_record(p) for p in records] for name, records in placements.items()},
        "shared": {name: [_record(p) for p in records] for name, records in shared.items()},
        "status": solution.status,
    }
    return Reading(_sha(digested), {"status": solution.status, "components": _components(placements, shared)})


def _model_parallel(path: Path) -> Reading:
    placement = ModelParallelComponentPlacement(str(path))
    placements = {name: placement.get_placements(name) for name in placement.components}
    return Reading(_sha({name: [_record(p) for p in records] for name, records in placements.items()}), {"components": _components(placements)})


def _auto(path: Path) -> Reading:
    result = auto_place(str(path))
    return Reading(_sha({"table": result.table(), "yaml": result.to_yaml()}), {"table": result.table().splitlines()})


def _outcome(make: Callable[[], Reading]) -> Reading:
    """What ``make()`` reads, or the error type it raises."""
    try:
        return make()
    except PlacementError as error:
        return Reading(f"error:{type(error).__name__}", {"error": type(error).__name__})


def model_files() -> list[Path]:
    """Every model file, in the record's order."""
    return sorted(MODELS.rglob("*.yaml"))


def ways(path: Path) -> dict[str, Callable[[], Reading]]:
    """Every reading of one model that applies, by record key, not yet run."""
    name = str(path.relative_to(MODELS))
    raw = OmegaConf.to_container(OmegaConf.load(path))
    out: dict[str, Callable[[], Reading]] = {f"{name}:solve": partial(_solved, str(path))}
    if path.name.startswith("modelparallel_") or (isinstance(raw, dict) and "actor" in raw):
        out[f"{name}:model_parallel"] = partial(_model_parallel, path)
    if isinstance(raw, dict) and "auto_placement" in raw:
        out[f"{name}:auto"] = partial(_auto, path)
    return out


def readings(path: Path) -> dict[str, Reading]:
    """What every reading of one model gives now."""
    return {key: _outcome(make) for key, make in ways(path).items()}


def _shown(places: list[str], rank: int) -> str:
    """One recorded place in words: ``node 2 GPUs [6, 7]`` (``node 0 robot [1]``, ``node 3 node []``)."""
    if rank >= len(places):
        return "(no such rank)"
    node, *kind, ids = places[rank].split(":")
    return f"node {node} {kind[0] if kind else 'GPUs'} [{ids.replace(',', ', ')}]"


def _moved(name: str, old: list[str], new: list[str]) -> Iterator[str]:
    """The ranks of one component whose place differs, ``SHOWN_RANKS`` of them, then a count."""
    if len(old) != len(new):
        yield f"    {name}: {len(old)} ranks recorded, {len(new)} now"
    moved = [rank for rank in range(max(len(old), len(new))) if old[rank:rank + 1] != new[rank:rank + 1]]
    for rank in moved[:SHOWN_RANKS]:
        yield f"    {name} rank {rank}: {_shown(old, rank)} -> {_shown(new, rank)}"
    if len(moved) > SHOWN_RANKS:
        yield f"    {name}: ... and {len(moved) - SHOWN_RANKS} more ranks moved"


def explain_change(key: str, old: dict[str, Any] | None, new: Reading) -> list[str]:
    """What changed in one reading, in a reader's terms: the error, the status, the components
    added or removed, the ranks moved, or (same places) that other record fields changed."""
    lines = [f"{key}:"]
    if old is None:
        return [*lines, "    no recorded layout to compare: re-record the digests"]
    if "error" in old or "error" in new.detail:
        return [*lines, f"    {old.get('error', 'placed')} -> {new.detail.get('error', 'placed')}"]
    if "table" in old:
        gone = [f"    - {line}" for line in old["table"] if line not in new.detail["table"]]
        return [*lines, *gone, *(f"    + {line}" for line in new.detail["table"] if line not in old["table"])]
    if old.get("status") != new.detail.get("status"):
        lines.append(f"    status {old.get('status')} -> {new.detail.get('status')}")
    before, after = old["components"], new.detail["components"]
    lines += [f"    component {name} {'removed' if name in before else 'added'}" for name in sorted(before.keys() ^ after.keys())]
    for name in [n for n in after if n in before and before[n]["digest"] != after[n]["digest"]]:
        moved = list(_moved(name, before[name]["ranks"], after[name]["ranks"]))
        lines += moved or [f"    {name}: every rank on the same node and ids; other record fields changed (env, metadata, shared records)"]
    return lines if len(lines) > 1 else [*lines, "    every component as in the recorded layout: the two recorded files disagree, re-record"]


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python tests/model_digests.py --record")
    now = {key: reading for path in model_files() for key, reading in readings(path).items()}
    RECORD.write_text(json.dumps({key: r.digest for key, r in now.items()}, indent=1, sort_keys=True) + "\n")
    LAYOUTS.write_text(json.dumps({key: r.detail for key, r in now.items()}, sort_keys=True, separators=(",", ":")) + "\n")
    print(f"wrote {RECORD} and {LAYOUTS}")
