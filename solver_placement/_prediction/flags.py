"""A fix applied to a command line: the flags it names set, replaced or removed.

Fixes are written in the framework's own flags, and checked by reading the fixed command line
again (``predict.py``), so applying one must leave every other word as the user wrote it.
"""

from __future__ import annotations

from collections.abc import Sequence

from solver_placement._prediction.findings import Fix


def with_flags(arguments: Sequence[str], fix: Fix) -> tuple[str, ...]:
    """``arguments`` with each flag of ``fix`` removed wherever it occurs (``--flag value``,
    ``--flag=value`` or a bare switch), then, unless its value is None, added at the end."""
    words = list(arguments)
    for flag, value in fix:
        words = _without(words, flag)
        if value is not None:
            words += [flag] if value == "" else [flag, value]
    return tuple(words)


def _without(words: list[str], flag: str) -> list[str]:
    kept: list[str] = []
    skip_value = False
    for word in words:
        if skip_value:
            skip_value = False
            if not word.startswith("-"):
                continue
        if word == flag:
            skip_value = True
            continue
        if word.startswith(flag + "="):
            continue
        kept.append(word)
    return kept
