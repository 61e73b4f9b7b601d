"""A spinner with the elapsed time while the CLI waits on a long call (solving at scale, explaining,
searching, reserving on Ray), drawn with rich on stderr.

The library calls it wraps report no progress of their own, so the display says which stage is
running and for how long rather than a percentage. It is drawn only when both stdout and stderr
are terminals: piped or captured output stays byte for byte what the command prints.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

#: Told the stage now running (a new description for the spinner).
Stage = Callable[[str], None]


@contextmanager
def working(description: str) -> Iterator[Stage]:
    """Show ``description``, a spinner and the elapsed time until the block ends, then erase them.

    Yields a function that replaces the description, for calls that go through several stages
    (``launch --run``: connecting, reserving, probing, starting each component's actors); it
    does nothing when nothing is drawn.
    """
    if not (_is_terminal(sys.stdout) and _is_terminal(sys.stderr)):
        yield _unseen
        return
    try:
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
    except ImportError:  # the display is a courtesy: an install without rich still answers
        yield _unseen
        return
    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task(description, total=None)
        yield lambda stage: progress.update(task, description=stage)


def _unseen(stage: str) -> None:
    """A stage nobody sees: stdout or stderr is not a terminal (or rich is missing)."""


def _is_terminal(stream: TextIO | None) -> bool:
    return stream is not None and stream.isatty()
