"""Regenerate ``solver_placement/_frontends/openrlhf/parsers/``: every option of ``train_ppo_ray``'s
parser, one module per release, read from OpenRLHF's own parser (``driver.py --flags``).
Usage: ``python write_flag_table.py RELEASE=SOURCE_DIR ...`` (each directory holds ``openrlhf/``),
releases oldest first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = HERE.parents[1] / "solver_placement" / "_frontends" / "openrlhf" / "parsers"
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


def _module(release: str, table: dict) -> str:
    lines = [f'"""Every option of OpenRLHF {release}\'s ``train_ppo_ray`` parser: written by',
             "``tests/openrlhf_drivers/write_flag_table.py`` from OpenRLHF's own parser (the released wheel",
             "pinned in ``tests/internals/frontends/openrlhf/test_openrlhf_differential.py``); do not edit.",
             '"""', "", "from __future__ import annotations", "", "from solver_placement._frontends.openrlhf.parsers.kinds import Options", "",
             "#: argparse's ``allow_abbrev`` for the parser.", f"ALLOW_ABBREV = {table['allow_abbrev']!r}",
             "#: flag -> (kind, default, choices)", "OPTIONS: Options = {"]  # fmt: skip
    for option in table["options"]:
        choices = None if option["choices"] is None else tuple(option["choices"])
        for flag in option["flags"]:
            lines.append(f"    {flag!r}: ({_kind(option)!r}, {_default(option)}, {choices!r}),")
    lines.append("}  # fmt: skip")
    return "\n".join(lines) + "\n"


def main() -> None:
    names = []
    for spec in sys.argv[1:]:
        release, source = spec.split("=", 1)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, str(HERE)]), "PYTHONDONTWRITEBYTECODE": "1"}
        out = subprocess.run([sys.executable, str(HERE / "driver.py"), "--flags"], capture_output=True, text=True, env=env, check=True).stdout
        name = "release_" + release.replace(".", "_")
        (TARGET / f"{name}.py").write_text(_module(release, json.loads(out.strip().splitlines()[-1])))
        names.append((release, name))
    imports = "from solver_placement._frontends.openrlhf.parsers import " + ", ".join(name for _, name in names)
    entries = "\n".join(f"    {release!r}: ({name}.ALLOW_ABBREV, {name}.OPTIONS)," for release, name in names)
    (TARGET / "__init__.py").write_text(
        '"""The option tables of OpenRLHF\'s ``train_ppo_ray`` parser, one module per release read (written by\n'
        "``tests/openrlhf_drivers/write_flag_table.py``; ``kinds.py`` says what an entry holds).\n"
        '"""\n\nfrom __future__ import annotations\n\n'
        f"{imports}\nfrom solver_placement._frontends.openrlhf.parsers.kinds import Options\n\n"
        "#: release -> (argparse's allow_abbrev, its options)\n"
        f"FLAGS: dict[str, tuple[bool, Options]] = {{\n{entries}\n}}\n"
    )
    subprocess.run([sys.executable, "-m", "ruff", "format", "--quiet", str(TARGET)], check=True)  # the project's quotes and wrapping


if __name__ == "__main__":
    main()
