"""``docs/frameworks/skyrl.md`` shows what the command prints: each ``$ solver-placement`` line of
its console blocks runs from the repository's root (its paths are the repository's) and prints
exactly the lines under it (the README test's reading of a page, ``test_readme_commands.py``)."""

from __future__ import annotations

import shlex

import pytest
from click.testing import CliRunner
from helpers import ROOT
from test_readme_commands import matches, readme_commands

from solver_placement._cli.app import main

PAGE = ROOT / "docs" / "frameworks" / "skyrl.md"
COMMANDS = readme_commands(PAGE.read_text(), "docs/frameworks/skyrl.md")


def test_the_page_shows_a_command() -> None:
    assert [shown.command.split()[:2] for shown in COMMANDS] == [["solver-placement", "predict"]]


@pytest.mark.parametrize("shown", COMMANDS, ids=lambda shown: f"line {shown.line}")
def test_the_page_prints_what_the_command_prints(shown: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, shlex.split(shown.command)[1:])  # type: ignore[attr-defined]
    assert matches(shown.output, result.output.splitlines()), result.output  # type: ignore[attr-defined]
