"""The example of ``docs/frameworks/openrlhf.md`` runs as printed and prints what the page shows."""

from __future__ import annotations

import re
import shlex

from helpers import ROOT, cli_runner

from solver_placement._cli import main

PAGE = ROOT / "docs" / "frameworks" / "openrlhf.md"


def test_the_predict_example_prints_the_output_the_page_shows() -> None:
    command, shown = re.findall(r"```\n(.*?)```", PAGE.read_text(), re.S)[:2]
    words = shlex.split(command.replace("\\\n", " "))
    assert words[:3] == ["solver-placement", "predict", "openrlhf"]
    words = [str(ROOT / word) if word.startswith("models/") else word for word in words]
    result = cli_runner().invoke(main, words[1:])
    assert result.exit_code == 3, result.output
    assert result.stdout == shown
