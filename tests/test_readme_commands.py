"""The command lines of the README and of the pages under ``docs/`` run as printed, and print what
the page shows.

Every line of a ```console block that starts with ``$ solver-placement`` or ``$ python`` and
every line of a ```bash block that starts with ``python`` is run with bash in a scratch copy of
the models (so figures and outputs land there, not in the repository). Where a page shows
output under a command, the command must print exactly those lines (stdout and stderr together,
as a terminal shows them); a line ``...`` stands for any number of lines. Commands that start
Ray are marked ``ray``; the README's set-up lines build a virtual environment from a copy of the
repository (``slow``; CI runs the main job's line before the tests, ``.ci/run``, and says so); the
test command is the one CI runs, so it is not run from inside itself.
The README keeps its three paths short and sends readers to ``docs/`` for the rest, so the
examples there are held to the same check: a moved example keeps its test.

A plain ``solver-placement`` line (no pipe, redirection or second command) also runs in-process
through click's runner, which prints the same lines without a Python start per command: the fast
tier runs that form, and the line as printed in bash runs with the slow tests (CI). Lines that
need the shell run in bash in both tiers.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from helpers import ROOT

README = ROOT / "README.md"
#: Every page whose command lines are run: the README, then the pages it links under ``docs/``.
PAGES = (README, *sorted((ROOT / "docs").glob("*.md")))
ELLIPSIS = "..."
#: Set by ``.ci/run`` to the README's set-up line it ran, as printed, before the tests: that
#: line is not run a second time here (a fresh install and a launch on the serial Ray worker).
SETUP_RAN = "SOLVER_PLACEMENT_README_SETUP_RAN"
#: The venv this test runs in: its ``solver-placement`` and ``python`` are the ones the README means.
BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Shown:
    """One command line of a page, where it is, and the output the page prints under it (if any)."""

    command: str
    page: str
    line: int
    output: tuple[str, ...]
    setup: bool

    @property
    def needs_ray(self) -> bool:
        return "--run" in self.command.split()


def readme_commands(text: str, page: str = "README.md") -> list[Shown]:
    found: list[Shown] = []
    for block in re.finditer(r"^```(console|bash)\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL):
        first_line = text.count("\n", 0, block.start(2)) + 1
        lines = block.group(2).splitlines()
        if block.group(1) == "bash":
            found += [Shown(line, page, first_line + i, (), True) for i, line in enumerate(lines) if line.startswith("python")]
            continue
        for i, line in enumerate(lines):
            command = line.removeprefix("$ ")
            if line.startswith("$ ") and command.startswith(("solver-placement", "python")):
                output = [shown for shown in _until_next_prompt(lines[i + 1:])]
                found.append(Shown(command, page, first_line + i, tuple(output), False))
    return found


def _until_next_prompt(lines: list[str]) -> list[str]:
    taken = []
    for line in lines:
        if line.startswith("$ "):
            break
        taken.append(line)
    return taken


def matches(shown: tuple[str, ...], printed: list[str]) -> bool:
    """``printed`` is ``shown`` line for line, a ``...`` line standing for any run of lines."""
    pattern = "".join(".*?" if line == ELLIPSIS else re.escape(line + "\n") for line in shown)
    return re.fullmatch(pattern, "".join(line + "\n" for line in printed), flags=re.DOTALL) is not None


def installed_command() -> click.Command:
    """The command the installed ``solver-placement`` script runs, found as the shell finds it:
    through the package's console-script entry point."""
    (script,) = entry_points(group="console_scripts", name="solver-placement")
    command = script.load()
    assert isinstance(command, click.Command)
    return command


def arguments(command: str) -> list[str] | None:
    """The arguments of a plain ``solver-placement`` line (a trailing comment allowed), or None
    when the line needs bash: another program, a pipe, a redirection, a second command."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True  # words as bash splits them (``+key=value`` is one), operators apart
    words = list(lexer)
    if words[:1] != ["solver-placement"] or any(set(word) <= set(lexer.punctuation_chars) for word in words):
        return None
    return words[1:]


def page_commands() -> list[Shown]:
    """The command lines of every page in :data:`PAGES`, each named by its path in the repository."""
    return [shown for page in PAGES for shown in readme_commands(page.read_text(), str(page.relative_to(ROOT)))]


def _params() -> list[object]:
    params = []
    commands = page_commands()
    for shown in commands:
        marks = [pytest.mark.ray] if shown.needs_ray else []
        if shown.setup or (arguments(shown.command) is not None and not shown.needs_ray):
            marks.append(pytest.mark.slow)  # the set-up lines, and the lines the fast tier runs in-process
        if "pytest" in shown.command:
            marks.append(pytest.mark.skip(reason="the README's test command is the one CI runs; it cannot run inside itself"))
        if shown.setup and shown.command == os.environ.get(SETUP_RAN):
            marks.append(pytest.mark.skip(reason=f"CI ran this set-up line as printed before the tests ({SETUP_RAN})"))
        within = _run_within_a_setup_line(shown, commands)
        if within is not None:
            marks.append(pytest.mark.skip(reason=f"runs as printed within {within.page}:{within.line}'s set-up line"))
        params.append(pytest.param(shown, marks=marks, id=f"{shown.page}:{shown.line}"))
    return params


def _run_within_a_setup_line(shown: Shown, commands: list[Shown]) -> Shown | None:
    """The set-up line that runs ``shown``'s Ray launch as one of its ``&&`` steps, if one does: a
    launch on the embedded Ray costs the serial Ray tests a minute or more, and the set-up line
    runs the same command on the same models, so running it twice checks nothing more. Lines
    with output to match are always run."""
    if not shown.needs_ray or shown.setup or shown.output:
        return None
    command = shown.command.split(" #")[0].strip()  # a console line's comment is not run
    return next((setup for setup in commands if setup.setup and command in (step.strip() for step in setup.command.split("&&"))), None)


def _in_process() -> list[object]:
    commands = [shown for shown in page_commands() if not shown.setup and not shown.needs_ray]
    return [pytest.param(shown, id=f"{shown.page}:{shown.line}") for shown in commands if arguments(shown.command) is not None]


def test_the_readme_shows_commands_and_their_output() -> None:
    commands = readme_commands(README.read_text())
    assert sum(c.setup for c in commands) == 2  # the two set-up lines
    assert sum(bool(c.output) for c in commands) >= 3  # the three paths: RLinf, verl, the solver deciding
    everywhere = page_commands()
    assert len(everywhere) >= 20 and sum(c.setup for c in everywhere) == 2  # only the README sets up


def test_plain_lines_are_told_from_shell_lines() -> None:
    assert arguments("solver-placement plot m.yaml -o big.png    # >128 nodes: like nodes share a row") == ["plot", "m.yaml", "-o", "big.png"]
    assert arguments('solver-placement explain m.yaml; echo "exit $?"') is None
    assert arguments("solver-placement -v solve m.yaml > /dev/null") is None
    assert arguments("python -m solver_placement solve m.yaml") is None
    assert arguments("solver-placement explain m.yaml +cluster.num_nodes=2 a.b=false") == ["explain", "m.yaml", "+cluster.num_nodes=2", "a.b=false"]


def test_the_matcher_can_fail() -> None:
    assert matches(("a", ELLIPSIS, "d"), ["a", "b", "c", "d"]) and matches(("a",), ["a"])
    assert not matches(("a", "d"), ["a", "b", "d"]) and not matches(("a",), ["a", "b"])


def scratch_copy(workdir: Path) -> None:
    """What the commands read, copied into ``workdir``: the models, and the framework inputs the
    ``predict`` examples name (``docs/frameworks``); figures they write land in ``docs/``."""
    shutil.copytree(ROOT / "models", workdir / "models")
    shutil.copytree(ROOT / "docs" / "frameworks", workdir / "docs" / "frameworks", ignore=shutil.ignore_patterns("*.md"))


@pytest.mark.parametrize("shown", _params())
def test_a_readme_command_runs_as_printed(shown: Shown, tmp_path: Path) -> None:
    if shown.setup:
        workdir = tmp_path / "repository"
        shutil.copytree(ROOT, workdir, ignore=shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", "__pycache__"))
        env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    else:
        workdir = tmp_path
        scratch_copy(workdir)
        env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(["bash", "-c", "exec 2>&1\n" + shown.command], cwd=workdir, env=env, capture_output=True, text=True, timeout=3600)
    printed = result.stdout.splitlines()
    if shown.output:
        assert matches(shown.output, printed), f"{shown.page} line {shown.line} shows:\n" + "\n".join(shown.output) + "\nbut prints:\n" + result.stdout
    else:
        assert result.returncode == 0, f"{shown.page} line {shown.line}: {shown.command}\n{result.stdout}"
    assert "Traceback" not in result.stdout


@pytest.mark.superseded  # where the slow tests run, each line runs as printed, in bash (above)
@pytest.mark.parametrize("shown", _in_process())
def test_a_plain_readme_command_prints_as_shown(shown: Shown, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast tier's form of :func:`test_a_readme_command_runs_as_printed`: the same scratch
    directory, stdout and stderr together (click's runner interleaves them as a terminal does)."""
    scratch_copy(tmp_path)
    monkeypatch.chdir(tmp_path)
    args = arguments(shown.command)
    assert args is not None
    result = CliRunner().invoke(installed_command(), args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    if shown.output:
        assert matches(shown.output, result.output.splitlines()), f"{shown.page} line {shown.line} shows:\n" + "\n".join(shown.output) + "\nbut prints:\n" + result.output
    else:
        assert result.exit_code == 0, f"{shown.page} line {shown.line}: {shown.command}\n{result.output}"
