"""Regenerate what the slime front end and its tests take from slime's own source.

Run with a checkout of slime (``git clone https://github.com/THUDM/slime``, or ``git archive`` of a
snapshot) named by ``SLIME_SOURCE``::

    SLIME_SOURCE=/tmp/slime_src python tests/internals/frontends/slime/regenerate.py

It writes, with the commit they come from (``SLIME_COMMIT``, else ``git rev-parse HEAD`` of the
checkout):

* ``solver_placement/_frontends/slime/known_flags.py``: every flag slime's own argument code
  defines (read from its source's ``add_argument`` calls, not from a running parser: Megatron and
  SGLang are not installed here);
* ``tests/data/slime/scripts.json``: the placement flags of slime's launch scripts (those the
  library's reader takes; the others with its reason);
* ``tests/data/slime/layouts.json``: the layouts slime's own placement code gives for each case
  of ``cases.py`` (the example scripts' flags and hand-made edges), run with torch, SGLang and
  Megatron stubbed and Ray replaced by a recorder (``slime_driver.py``), so CI compares the
  library's prediction with them rank by rank without slime.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parents[3]
KNOWN_FLAGS = REPOSITORY / "solver_placement" / "_frontends" / "slime" / "known_flags.py"
LAYOUTS = REPOSITORY / "tests" / "data" / "slime" / "layouts.json"
SCRIPTS = REPOSITORY / "tests" / "data" / "slime" / "scripts.json"
#: slime's files whose ``add_argument`` calls define its flags (Megatron's and SGLang's own
#: flags are added from those packages at run time and are not listed).
ARGUMENT_FILES = (
    "slime/utils/arguments.py",
    "slime/backends/sglang_utils/arguments.py",
    "slime/backends/megatron_utils/arguments.py",
)


def slime_source() -> Path:
    source = os.environ.get("SLIME_SOURCE")
    if not source or not (Path(source) / "slime" / "ray" / "placement_group.py").is_file():
        sys.exit("set SLIME_SOURCE to a checkout of THUDM/slime (its slime/ray/placement_group.py must exist)")
    return Path(source)


def slime_commit(source: Path) -> str:
    commit = os.environ.get("SLIME_COMMIT")
    if commit:
        return commit
    return subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


def defined_flags(source: Path) -> list[str]:
    """Every ``--flag`` string given to ``add_argument`` or slime's ``reset_arg`` in its argument files."""
    flags: set[str] = set()
    for relative in ARGUMENT_FILES:
        for node in ast.walk(ast.parse((source / relative).read_text())):
            if isinstance(node, ast.Call):
                called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if called in ("add_argument", "reset_arg"):
                    flags.update(arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith("--"))
    return sorted(flags)


def write_known_flags(source: Path, commit: str) -> None:
    flags = defined_flags(source)
    lines = [
        '"""Every flag slime\'s own argument code defines, at one commit (generated: do not edit).',
        "",
        "Written by ``tests/internals/frontends/slime/regenerate.py`` from the ``add_argument`` calls of",
        f"{', '.join(ARGUMENT_FILES)}. Megatron's and SGLang's flags (``--sglang-*``) come",
        "from those packages at run time and are not listed.",
        '"""',
        "",
        "#: The slime commit the front end's rules and this list were read at.",
        f'SLIME_COMMIT = "{commit}"',
        "",
        "#: slime's own flags at :data:`SLIME_COMMIT`.",
        "SLIME_FLAGS = frozenset(",
        "    {",
        *(f'        "{flag}",' for flag in flags),
        "    }",
        ")",
        "",
    ]
    KNOWN_FLAGS.write_text("\n".join(lines))
    print(f"{KNOWN_FLAGS}: {len(flags)} flags at {commit}")


def write_scripts(source: Path, commit: str) -> None:
    """The placement flags of each slime launch script that runs ``train.py``, as the library's
    reader finds them (arrays spliced, ``${VAR:-default}`` resolved), with the cluster it states;
    scripts the reader refuses are listed with the reason."""
    from solver_placement._errors import PlacementError
    from solver_placement._frontends.slime.job import ENTRY_SCRIPTS, read_job
    from solver_placement._prediction.launch_input import launch_input, script_arguments

    scripts: dict[str, list] = {}
    refused: dict[str, str] = {}
    for path in sorted(source.rglob("*.sh")):
        relative = str(path.relative_to(source))
        if not any(entry in path.read_text(errors="replace") for entry in ENTRY_SCRIPTS):
            continue
        try:
            given = launch_input(path)
            job = read_job(given, None)
        except PlacementError as error:
            refused[relative] = str(error)
            continue
        flags = placement_words(script_arguments(given, ENTRY_SCRIPTS))
        cluster = job.stated_cluster()
        scripts[relative] = [flags, [int(count) for count in cluster.gpus_per_node]]
    SCRIPTS.parent.mkdir(parents=True, exist_ok=True)
    SCRIPTS.write_text(json.dumps({"slime_commit": commit, "scripts": scripts, "refused": refused}, indent=1, sort_keys=True) + "\n")
    print(f"{SCRIPTS}: {len(scripts)} scripts read, {len(refused)} refused, at {commit}")


def placement_words(arguments: tuple[str, ...]) -> list[str]:
    """The words of ``arguments`` that give a placement flag (with its value)."""
    from solver_placement._frontends.slime.flags import RULES

    names = {name: rule for rule in RULES for name in (rule.name, *rule.aliases)}
    words: list[str] = []
    for index, word in enumerate(arguments):
        rule = names.get(word.partition("=")[0])
        if rule is None:
            continue
        words.append(word)
        if rule.kind != "switch" and "=" not in word and index + 1 < len(arguments):
            words.append(arguments[index + 1])
    return words


def write_layouts(source: Path, commit: str) -> None:
    from tests.internals.frontends.slime.cases import all_cases
    from tests.internals.frontends.slime.run_slime import run_slime

    cases = all_cases()
    recorded = dict(zip(cases, run_slime(source, list(cases.values())), strict=True))
    LAYOUTS.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"  {json.dumps(name)}: {json.dumps(layout, sort_keys=True)}" for name, layout in sorted(recorded.items())]
    LAYOUTS.write_text(f'{{"slime_commit": {json.dumps(commit)}, "cases": {{\n' + ",\n".join(lines) + "\n}}\n")  # a case a line: diffs show per case
    print(f"{LAYOUTS}: {len(recorded)} cases at {commit}")


def main() -> None:
    source = slime_source()
    commit = slime_commit(source)
    write_known_flags(source, commit)
    sys.path.insert(0, str(REPOSITORY))
    write_scripts(source, commit)
    write_layouts(source, commit)


if __name__ == "__main__":
    main()
