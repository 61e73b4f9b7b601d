"""What an option table entry holds (``parsers/release_*.py``).

Per flag: its kind (``switch`` takes no value; ``int``, ``float`` or ``str``, followed by ``*2``,
``**`` or ``*+`` for argparse's ``nargs``), its default (None for a run name's time stamp, which
the parser computes when it is built and no reading uses), and its choices (None: any value of
the type).
"""

from __future__ import annotations

from typing import Any

#: flag -> (kind, default, choices)
Options = dict[str, tuple[str, Any, tuple[str, ...] | None]]
