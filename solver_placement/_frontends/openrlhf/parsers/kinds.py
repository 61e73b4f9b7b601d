"""What an option table entry holds (``parsers/release_*.py``), and how a release's table is
stated as its predecessor's changed.

Per flag: its kind (``switch`` takes no value; ``int``, ``float`` or ``str``, followed by ``*2``,
``**`` or ``*+`` for argparse's ``nargs``), its default (None for a run name's time stamp, which
the parser computes when it is built and no reading uses), and its choices (None: any value of
the type).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: flag -> (kind, default, choices)
Options = dict[str, tuple[str, Any, tuple[str, ...] | None]]


def revised(previous: Options, removed: tuple[str, ...], changed: Options, added: Mapping[str, Options]) -> Options:
    """``previous`` without the ``removed`` flags, with the ``changed`` entries, and each group of
    ``added`` flags right after the flag it names ("" puts a group first).

    Order is kept because it is the parser's: argparse lists the flags an abbreviation could
    match in the order they were added, and the reader quotes that message as OpenRLHF prints it.
    """
    options: Options = dict(added.get("", {}))
    for flag, entry in previous.items():
        if flag not in removed:
            options[flag] = changed.get(flag, entry)
        options.update(added.get(flag, {}))
    return options
