"""Regenerate ``solver_placement/_frontends/openrlhf/flag_table.py``: every option of
``train_ppo_ray``'s parser, per release, read from OpenRLHF's own parser (``driver.py --flags``).
Usage: ``python write_flag_table.py RELEASE=SOURCE_DIR ...`` (each directory holds ``openrlhf/``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = HERE.parents[1] / "solver_placement" / "_frontends" / "openrlhf" / "flag_table.py"
KINDS = {"storetrue": "switch", "storefalse": "switch"}


def _kind(option: dict) -> str:
    if option["action"] in KINDS:
        return "switch"
    nargs = option["nargs"]
    return option["type"] + ("" if nargs is None else f"*{nargs}")


def _default(option: dict) -> str:
    """The default as Python text: ``float("inf")`` for infinity; None for a default the parser
    computes when it is built (``--wandb_run_name``'s time stamp), which no reading uses."""
    value = option["default"]
    if "run_name" in option["dest"]:
        return "None"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return f'float("{value}")'
    return repr(value)


def main() -> None:
    lines = ['"""Every option of OpenRLHF\'s ``train_ppo_ray`` parser, per release: written by',
             "``tests/openrlhf_drivers/write_flag_table.py`` from OpenRLHF's own parser (the released wheels",
             "pinned in ``tests/internals/frontends/openrlhf/test_openrlhf_differential.py``); do not edit.",
             "",
             "Per flag: its kind (``switch`` takes no value; ``int``, ``float``, ``str``, with ``*2``, ``**``",
             "or ``*+`` for ``nargs``), its default (None for a run name's time stamp), and its choices (None: any value of the type).",
             '"""', "", "from __future__ import annotations", "", "from typing import Any", "",
             "#: release -> (argparse's allow_abbrev, {flag: (kind, default, choices)})",
             "FLAGS: dict[str, tuple[bool, dict[str, tuple[str, Any, tuple[str, ...] | None]]]] = {"]  # fmt: skip
    for spec in sys.argv[1:]:
        release, source = spec.split("=", 1)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, str(HERE)]), "PYTHONDONTWRITEBYTECODE": "1"}
        out = subprocess.run([sys.executable, str(HERE / "driver.py"), "--flags"], capture_output=True, text=True, env=env, check=True).stdout
        table = json.loads(out.strip().splitlines()[-1])
        lines.append(f"    {release!r}: ({table['allow_abbrev']!r}, {{")
        for option in table["options"]:
            choices = None if option["choices"] is None else tuple(option["choices"])
            for flag in option["flags"]:
                lines.append(f"        {flag!r}: ({_kind(option)!r}, {_default(option)}, {choices!r}),")
        lines.append("    }),")
    lines.append("}  # fmt: skip")
    TARGET.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
