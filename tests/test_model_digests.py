"""Every model's placements (and every invalid model's error type) stay byte-identical to the
recorded fingerprint: the safety net under refactoring. Re-record deliberately with
``python tests/model_digests.py --record`` when a behaviour change is intended, and say why in
the commit. A difference is shown as what moved: the model, the component, and each moved rank's
recorded and current node and GPUs (``tests/data/model_layouts.json``). One test per model, so
parallel workers share the models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from model_digests import LAYOUTS, MODELS, RECORD, explain_change, model_files, readings, ways

RECORDED: dict[str, str] = json.loads(RECORD.read_text())
LAYOUTS_RECORDED: dict[str, dict] = json.loads(LAYOUTS.read_text())


def test_every_reading_of_every_model_is_recorded() -> None:
    now = [key for path in model_files() for key in ways(path)]
    assert sorted(now) == sorted(RECORDED), "models were added or removed: re-record the digests"


@pytest.mark.parametrize("model", model_files(), ids=lambda path: str(path.relative_to(MODELS)))
def test_every_model_reads_as_recorded(model: Path) -> None:
    now = readings(model)
    changed = [key for key, reading in now.items() if reading.digest != RECORDED.get(key)]
    report = [line for key in changed for line in explain_change(key, LAYOUTS_RECORDED.get(key), now[key])]
    assert not changed, "placements changed (recorded -> now):\n" + "\n".join(report)


def test_the_layouts_belong_to_the_recorded_digests() -> None:
    """Both files are written together; a digest without its layout could not explain a change."""
    assert sorted(LAYOUTS_RECORDED) == sorted(RECORDED)


@pytest.mark.parametrize("key", ["quickstart.yaml:solve", "invalid/not_multiple.yaml:solve"])
def test_the_record_is_not_empty(key: str) -> None:
    assert key in RECORDED
