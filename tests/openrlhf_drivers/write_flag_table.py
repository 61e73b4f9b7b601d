"""Regenerate ``solver_placement/_frontends/openrlhf/parsers/``: every option of ``train_ppo_ray``'s
parser, one module per release, read from OpenRLHF's own parser (``driver.py --flags``). A release
whose table is mostly its predecessor's is written as the changes from it (``kinds.revised``), so
what a release changed reads at a glance and no table is written twice.
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


def _entries(table: dict) -> dict[str, str]:
    """flag -> its entry as Python text, in the parser's order (an option's spellings each)."""
    entries = {}
    for option in table["options"]:
        choices = None if option["choices"] is None else tuple(option["choices"])
        for flag in option["flags"]:
            entries[flag] = f"({_kind(option)!r}, {_default(option)}, {choices!r})"
    return entries


def _header(release: str, how: str) -> list[str]:
    return [f'"""Every option of OpenRLHF {release}\'s ``train_ppo_ray`` parser{how}: written by',
            "``tests/openrlhf_drivers/write_flag_table.py`` from OpenRLHF's own parser (the released wheel",
            "pinned in ``tests/internals/frontends/openrlhf/test_openrlhf_differential.py``); do not edit.",
            '"""', "", "from __future__ import annotations", ""]  # fmt: skip


def _dict(name: str, entries: dict[str, str], indent: str) -> list[str]:
    return [f"{indent}{name}{{", *(f"{indent}    {flag!r}: {entry}," for flag, entry in entries.items()), f"{indent}}},"]


def _whole(release: str, allow_abbrev: bool, entries: dict[str, str]) -> str:
    lines = [*_header(release, ""), "from solver_placement._frontends.openrlhf.parsers.kinds import Options", "",
             "#: argparse's ``allow_abbrev`` for the parser.", f"ALLOW_ABBREV = {allow_abbrev!r}",
             "#: flag -> (kind, default, choices)", "OPTIONS: Options = {",
             *(f"    {flag!r}: {entry}," for flag, entry in entries.items()), "}  # fmt: skip"]  # fmt: skip
    return "\n".join(lines) + "\n"


def _revision(previous: dict[str, str], entries: dict[str, str]) -> tuple[list[str], dict[str, str], dict[str, dict[str, str]]] | None:
    """``entries`` as ``kinds.revised`` states them from ``previous``: the flags removed, the
    entries changed, and the flags added after the flag each follows in the parser ("" for
    first). None when that is no shorter than the whole table, or the kept flags changed order."""
    removed = [flag for flag in previous if flag not in entries]
    kept = [flag for flag in entries if flag in previous]
    if kept != [flag for flag in previous if flag in entries]:
        return None
    changed = {flag: entries[flag] for flag in kept if entries[flag] != previous[flag]}
    added: dict[str, dict[str, str]] = {}
    anchor = ""
    for flag, entry in entries.items():
        if flag in previous:
            anchor = flag
        else:
            added.setdefault(anchor, {})[flag] = entry
    if 2 * (len(removed) + len(changed) + sum(map(len, added.values()))) >= len(entries):
        return None
    return removed, changed, added


def _revised(release: str, allow_abbrev: bool, previous: str, revision: tuple[list[str], dict[str, str], dict[str, dict[str, str]]]) -> str:
    removed, changed, added = revision
    lines = [*_header(release, f", stated as its changes from {previous}'s"),
             f"import solver_placement._frontends.openrlhf.parsers.release_{previous.replace('.', '_')} as previous",
             "from solver_placement._frontends.openrlhf.parsers.kinds import Options, revised", "",
             "#: argparse's ``allow_abbrev`` for the parser.", f"ALLOW_ABBREV = {allow_abbrev!r}",
             f"#: {previous}'s options less those OpenRLHF {release} dropped, with the entries it changed, and the",
             "#: flags it added, each group after the flag it follows in the parser (the order argparse's messages list them in).",
             "OPTIONS: Options = revised(", "    previous.OPTIONS,", f"    removed={tuple(removed)!r},",
             *_dict("changed=", changed, "    "), "    added={",
             *(line for anchor, group in added.items() for line in _dict(f"{anchor!r}: ", group, "        ")),
             "    },", ")  # fmt: skip"]  # fmt: skip
    return "\n".join(lines) + "\n"


def write(specs: list[str], target: Path) -> None:
    """The modules for ``RELEASE=SOURCE_DIR`` specs (oldest first) into ``target``."""
    names = []
    previous: tuple[str, dict[str, str]] | None = None
    for spec in specs:
        release, source = spec.split("=", 1)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, str(HERE)]), "PYTHONDONTWRITEBYTECODE": "1"}
        out = subprocess.run([sys.executable, str(HERE / "driver.py"), "--flags"], capture_output=True, text=True, env=env, check=True).stdout
        name = "release_" + release.replace(".", "_")
        table = json.loads(out.strip().splitlines()[-1])
        entries = _entries(table)
        revision = None if previous is None else _revision(previous[1], entries)
        if previous is None or revision is None:
            text = _whole(release, table["allow_abbrev"], entries)
        else:
            text = _revised(release, table["allow_abbrev"], previous[0], revision)
        (target / f"{name}.py").write_text(text)
        previous = (release, entries)
        names.append((release, name))
    imports = "from solver_placement._frontends.openrlhf.parsers import " + ", ".join(name for _, name in names)
    entries = "\n".join(f"    {release!r}: ({name}.ALLOW_ABBREV, {name}.OPTIONS)," for release, name in names)
    (target / "__init__.py").write_text(
        '"""The option tables of OpenRLHF\'s ``train_ppo_ray`` parser, one module per release read (written by\n'
        "``tests/openrlhf_drivers/write_flag_table.py``; ``kinds.py`` says what an entry holds).\n"
        '"""\n\nfrom __future__ import annotations\n\n'
        f"{imports}\nfrom solver_placement._frontends.openrlhf.parsers.kinds import Options\n\n"
        "#: release -> (argparse's allow_abbrev, its options)\n"
        f"FLAGS: dict[str, tuple[bool, Options]] = {{\n{entries}\n}}\n"
    )
    project = HERE.parents[1] / "pyproject.toml"  # the project's quotes and wrapping, wherever target is
    subprocess.run([sys.executable, "-m", "ruff", "format", "--quiet", "--config", str(project), str(target)], check=True)


def main() -> None:
    write(sys.argv[1:], TARGET)


if __name__ == "__main__":
    main()
