"""The framework pages whose commands run from the repository's root (their paths are the
repository's) show what the command prints: each ``$ solver-placement`` line of their console
blocks prints exactly the lines under it (the README test's reading of a page,
``test_readme_commands.py``)."""

from __future__ import annotations

import shlex

import pytest
from click.testing import CliRunner
from helpers import ROOT
from test_readme_commands import Shown, matches, readme_commands

from solver_placement._cli.app import main

#: Pages whose examples name files by their path from the repository's root.
PAGES = ("docs/frameworks/areal.md", "docs/frameworks/skyrl.md")
COMMANDS = {page: readme_commands((ROOT / page).read_text(), page) for page in PAGES}


@pytest.mark.parametrize("page", PAGES)
def test_the_page_shows_a_predict_command(page: str) -> None:
    assert [shown.command.split()[:2] for shown in COMMANDS[page]] == [["solver-placement", "predict"]]


@pytest.mark.parametrize("shown", [shown for page in PAGES for shown in COMMANDS[page]], ids=lambda shown: f"{shown.page}:{shown.line}")
def test_the_page_prints_what_the_command_prints(shown: Shown, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, shlex.split(shown.command)[1:])
    assert matches(shown.output, result.output.splitlines()), result.output
