"""Every model's placements (and every invalid model's error type) stay byte-identical to the
recorded fingerprint: the safety net under refactoring. Re-record deliberately with
``python tests/model_digests.py --record`` when a behaviour change is intended, and say why in
the commit. A difference is shown as what moved: the model, the component, and each moved rank's
recorded and current node and GPUs (``tests/data/model_layouts.json``)."""

from __future__ import annotations

import json

import pytest
from model_digests import LAYOUTS, RECORD, explain_change, readings


def test_every_model_reads_as_recorded() -> None:
    recorded = json.loads(RECORD.read_text())
    layouts = json.loads(LAYOUTS.read_text())
    now = readings()
    assert sorted(now) == sorted(recorded), "models were added or removed: re-record the digests"
    changed = [key for key in recorded if now[key].digest != recorded[key]]
    report = [line for key in changed for line in explain_change(key, layouts.get(key), now[key])]
    assert not changed, "placements changed (recorded -> now):\n" + "\n".join(report)


def test_the_layouts_belong_to_the_recorded_digests() -> None:
    """Both files are written together; a digest without its layout could not explain a change."""
    assert sorted(json.loads(LAYOUTS.read_text())) == sorted(json.loads(RECORD.read_text()))


@pytest.mark.parametrize("key", ["quickstart.yaml:solve", "invalid/not_multiple.yaml:solve"])
def test_the_record_is_not_empty(key: str) -> None:
    assert key in json.loads(RECORD.read_text())
