"""Regenerate what the slime front end and its tests take from slime's own source.

Run with a checkout of slime (``git clone https://github.com/THUDM/slime``, or ``git archive`` of a
snapshot) named by ``SLIME_SOURCE``::

    SLIME_SOURCE=/tmp/slime_src python tests/internals/frontends/slime/regenerate.py

It writes, with the commit they come from (``SLIME_COMMIT``, else ``git rev-parse HEAD`` of the
checkout):

* ``solver_placement/_frontends/slime/known_flags.py``: every flag slime's own argument code
  defines (read from its source's ``add_argument`` calls, not from a running parser: Megatron and
  SGLang are not installed here);
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


def write_layouts(source: Path, commit: str) -> None:
    from tests.internals.frontends.slime.cases import CASES
    from tests.internals.frontends.slime.slime_driver import slime_layout

    recorded = {name: slime_layout(source, case.arguments, case.gpus_per_node) for name, case in CASES.items()}
    LAYOUTS.parent.mkdir(parents=True, exist_ok=True)
    LAYOUTS.write_text(json.dumps({"slime_commit": commit, "cases": recorded}, indent=1, sort_keys=True) + "\n")
    print(f"{LAYOUTS}: {len(recorded)} cases at {commit}")


def main() -> None:
    source = slime_source()
    commit = slime_commit(source)
    write_known_flags(source, commit)
    if "--flags-only" not in sys.argv:
        sys.path.insert(0, str(REPOSITORY))
        write_layouts(source, commit)


if __name__ == "__main__":
    main()
