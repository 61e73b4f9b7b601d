"""The slime page's example is the command's real output."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from click.testing import CliRunner

from solver_placement._cli import main

ROOT = Path(__file__).resolve().parents[4]
PAGE = (ROOT / "docs" / "frameworks" / "slime.md").read_text()


def test_the_predict_example_prints_what_the_page_shows(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    block = re.search(r"```console\n\$ solver-placement (predict slime .*?)\n(.*?)```", PAGE, re.S)
    assert block is not None
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, shlex.split(block.group(1)))
    assert result.exit_code == 3  # the example shows an error
    assert result.output == block.group(2)
