"""Regenerate ``tests/data/openrlhf/examples.json``: the placement flags of OpenRLHF's own example
scripts that run ``train_ppo_ray``, per release, from a git checkout of OpenRLHF (tag and commit
recorded). Usage: ``python write_examples.py GIT_DIR RELEASE=TAG ...``.

Only the flags the front end reads for placement are kept (``releases.KEYS`` in the release's
spelling), with their values as written (shell variables unresolved), in the script's order."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT))

from solver_placement._frontends.openrlhf.parsers import FLAGS  # noqa: E402
from solver_placement._frontends.openrlhf.releases import KEYS, release_named  # noqa: E402


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, text=True, check=True).stdout


def _flags(text: str, release: str) -> list[str] | None:
    """The placement flags of a script that runs ``openrlhf.cli.train_ppo_ray``, or None for
    another script. The whole script is read: newer scripts gather the flags in bash arrays
    (``ENGINE_ARGS=( ... )``) expanded after the command; a value closing an array loses its ``)``."""
    rules = release_named(release)
    wanted = {rules.flag(key) for key in KEYS}
    switches = {flag for flag, (kind, _, _) in FLAGS[release][1].items() if kind == "switch"}
    words = shlex.split(text.replace("\\\n", " "), comments=True)
    if "openrlhf.cli.train_ppo_ray" not in words:
        return None
    kept: list[str] = []
    for index, word in enumerate(words):
        flag = word.split("=", 1)[0]
        if flag in wanted:
            kept += [word] if flag in switches or "=" in word else [word, words[index + 1].removesuffix(")")]
    return kept


def main() -> None:
    git_dir = sys.argv[1]
    examples = {}
    for spec in sys.argv[2:]:
        release, tag = spec.split("=", 1)
        commit = _git(git_dir, "rev-parse", f"{tag}^{{commit}}").strip()
        scripts = {}
        for path in sorted(_git(git_dir, "ls-tree", "-r", "--name-only", commit, "examples/scripts").split()):
            if path.endswith(".sh"):
                flags = _flags(_git(git_dir, "show", f"{commit}:{path}"), release)
                if flags is not None:
                    scripts[path] = flags
        examples[release] = {"tag": tag, "commit": commit, "scripts": scripts}
    (ROOT / "tests" / "data" / "openrlhf" / "examples.json").write_text(json.dumps(examples, indent=1) + "\n")


if __name__ == "__main__":
    main()
