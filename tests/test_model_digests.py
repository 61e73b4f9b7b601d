"""Every model's placements (and every invalid model's error type) stay byte-identical to the
recorded fingerprint: the safety net under refactoring. Re-record deliberately with
``python tests/model_digests.py --record`` when a behaviour change is intended, and say why in
the commit."""

from __future__ import annotations

import json

import pytest
from model_digests import RECORD, digests


def test_every_model_reads_as_recorded() -> None:
    recorded = json.loads(RECORD.read_text())
    now = digests()
    assert sorted(now) == sorted(recorded), "models were added or removed: re-record the digests"
    changed = [key for key in recorded if now[key] != recorded[key]]
    assert not changed, f"placements changed for: {changed}"


@pytest.mark.parametrize("key", ["quickstart.yaml:solve", "invalid/not_multiple.yaml:solve"])
def test_the_record_is_not_empty(key: str) -> None:
    assert key in json.loads(RECORD.read_text())
