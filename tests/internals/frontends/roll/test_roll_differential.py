"""Differential: the front end's prediction against ROLL's own placement code, worker by worker.

``tests/data/roll/layouts.json`` (main at 8eb27cc2, 0.3.0's rules) and ``layouts_0_1_0.json`` hold ROLL's answers (``regenerate.py`` ran ROLL's
``WorkerConfig``, ``num_nodes`` block, ``ResourceManager`` and ``Cluster._create_workers`` on a
recorded Ray, at the commit it names) for every example config of ROLL's repository and the
hand-made edges. Each case is predicted here on the same nodes and compared worker by worker:
the node, the placement group (node rank), the GPUs it reserved and ``CUDA_VISIBLE_DEVICES``;
a case ROLL refuses must be refused here with ROLL's words; CPU workers hold no GPU in both.

With ``ROLL_SOURCE`` (main) or ``ROLL_0_1_0_SOURCE`` (v0.1.0) naming a checkout of ROLL, the live
test also runs that ROLL's code now and checks its recording still matches it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT

from solver_placement import Cluster, PlacementError
from solver_placement._frontends.roll.releases import COMMITS, MAIN_COMMIT
from solver_placement._prediction.findings import FindingKind
from solver_placement._prediction.predict import predict
from tests.internals.frontends.roll.run_roll import run_roll

#: ROLL's answers per recording: main (0.3.0's rules) and v0.1.0, each with its commit.
RECORDINGS = {path.stem: json.loads(path.read_text()) for path in sorted((ROOT / "tests" / "data" / "roll").glob("layouts*.json"))}
#: Every recorded case, by (recording, case name).
CASES: dict[tuple[str, str], dict[str, Any]] = {
    (stem, name): case for stem, recorded in RECORDINGS.items() for name, case in recorded["cases"].items()
}
#: The variable naming a checkout of each recording's ROLL (``regenerate.py``).
SOURCES = {"layouts": "ROLL_SOURCE", "layouts_0_1_0": "ROLL_0_1_0_SOURCE"}


def ours(case: dict[str, Any]) -> dict[str, Any]:
    """The front end's answer in the recording's form."""
    cluster = Cluster(num_nodes=len(case["nodes"]), num_gpus_per_node=case["nodes"])
    try:
        prediction = predict("roll", case["config"], cluster=cluster, release=case["release"])
    except PlacementError as error:
        return {"refused": str(error)}
    if any(finding.kind == FindingKind.PENDING for finding in prediction.findings):
        return {"pending": True}
    roles = {}
    for role in prediction.roles:
        rows = []
        for rank in prediction.of_role(role):
            visible = ",".join(rank.visible_devices) if rank.gpus else None
            first = None if rank.gpus == () and not rank.visible_devices else rank.gpus[0] - int(rank.visible_devices[0]) if rank.gpus else None
            rows.append([rank.rank, rank.node, rank.bundle, first, visible])
        roles[role] = rows
    return {"roles": roles}


def rolls(case: dict[str, Any]) -> dict[str, Any]:
    """ROLL's recorded answer, GPU rows as ``[rank, node, group, first GPU, CUDA_VISIBLE_DEVICES]``."""
    answer = case["roll"]
    if "roles" not in answer:
        return answer
    return {
        "roles": {
            role: [row[:3] + ([row[3], row[4]] if row[4] is not None else [None, None]) for row in rows] for role, rows in answer["roles"].items()
        }
    }


@pytest.mark.parametrize("key", sorted(CASES), ids="/".join)
def test_every_worker_lands_where_rolls_own_code_put_it(key: tuple[str, str]) -> None:
    case = CASES[key]
    expected, got = rolls(case), ours(case)
    if "refused" in expected:
        assert "refused" in got, f"ROLL refuses it ({expected['refused']}), the front end predicts {got}"
        words = expected["refused"].split(": ", 1)[1].rstrip(".")
        assert words[:40] in got["refused"], f"ROLL's reason {words!r} is not in {got['refused']!r}"
        return
    assert got == expected


@pytest.mark.parametrize(("stem", "least"), [("layouts", 100), ("layouts_0_1_0", 45)])
def test_the_recordings_cover_rolls_examples(stem: str, least: int) -> None:
    recorded = RECORDINGS[stem]
    examples = [name for name in recorded["cases"] if name.startswith("examples/")]
    assert len(examples) >= least and recorded["roll_commit"] == (MAIN_COMMIT if stem == "layouts" else COMMITS["0.1.0"])
    assert sum("roles" in recorded["cases"][name]["roll"] for name in examples) == len(examples)


@pytest.mark.parametrize("stem", sorted(SOURCES))
def test_rolls_code_still_gives_the_recorded_layouts(stem: str) -> None:
    if not os.environ.get(SOURCES[stem]):
        pytest.skip(f"set {SOURCES[stem]} to a checkout of alibaba/ROLL to run its code now")
    source = Path(os.environ[SOURCES[stem]]).resolve()
    recorded = RECORDINGS[stem]
    inputs = {name: {key: case[key] for key in ("nodes", "cpus", "config", "driver_decides", "release")} for name, case in recorded["cases"].items()}
    answers = run_roll(source, inputs)
    changed = sorted(name for name, case in recorded["cases"].items() if answers[name] != case["roll"])
    assert not changed, (
        f"ROLL at {source} places these differently from the recording ({recorded['roll_commit']}): {changed[:5]}; rerun regenerate.py"
    )
