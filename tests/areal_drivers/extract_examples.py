"""Regenerate ``tests/data/areal/examples.json``: the placement keys of AReaL's example configs.

Usage: ``python tests/areal_drivers/extract_examples.py AREAL_GIT_DIR TAG`` (a clone or bare
mirror of areal-project/AReaL). Each ``examples/**/*.yaml`` of the tag is resolved with OmegaConf
(its ``${...}`` references followed) and cut to the keys AReaL's placement reads
(``solver_placement/_frontends/areal/keys.py``); the commit is recorded with them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

ENGINE_KEYS = ("backend", "scheduling_spec", "scheduling_strategy", "kl_ctl", "_version")
SPEC_KEYS = ("gpu", "cmd", "env_vars")
OUT = Path(__file__).parents[1] / "data" / "areal" / "examples.json"


def trimmed(config: dict[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key in ("allocation_mode",):
        if key in config:
            kept[key] = config[key]
    for section, keys in (("cluster", ("n_nodes", "n_gpus_per_node")), ("scheduler", ("type",))):
        if isinstance(config.get(section), dict):
            kept[section] = {key: config[section][key] for key in keys if key in config[section]}
    for role in ("actor", "critic", "ref", "rollout"):
        engine = config.get(role)
        if not isinstance(engine, dict):
            if role in config:
                kept[role] = engine
            continue
        part = {key: engine[key] for key in ENGINE_KEYS if key in engine}
        if "scheduling_spec" in part:
            part["scheduling_spec"] = [
                {key: spec[key] for key in SPEC_KEYS if key in spec and (key != "env_vars" or "CUDA_VISIBLE_DEVICES" in (spec[key] or {}))}
                for spec in part["scheduling_spec"]
            ]
        if role == "rollout" and isinstance(engine.get("agent"), dict) and "mode" in engine["agent"]:
            part["agent"] = {"mode": engine["agent"]["mode"]}
        kept[role] = part
    if config.get("teacher") is not None:
        kept["teacher"] = {"present": True}
    return kept


def main() -> None:
    git_dir, tag = sys.argv[1], sys.argv[2]
    commit = subprocess.run(
        ["git", "--git-dir", git_dir, "rev-parse", f"{tag}^{{commit}}"], capture_output=True, text=True, check=True
    ).stdout.strip()
    names = subprocess.run(
        ["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", tag, "examples"], capture_output=True, text=True, check=True
    ).stdout.split()
    examples = {}
    for name in sorted(n for n in names if n.endswith((".yaml", ".yml"))):
        text = subprocess.run(["git", "--git-dir", git_dir, "show", f"{tag}:{name}"], capture_output=True, text=True, check=True).stdout
        loaded = OmegaConf.create(text)
        try:
            plain = OmegaConf.to_container(loaded, resolve=True)
        except Exception as error:  # noqa: BLE001 - recorded: the config needs keys from elsewhere
            examples[name] = {"unresolved": str(error).splitlines()[0]}
            continue
        if isinstance(plain, dict) and ("actor" in plain or "allocation_mode" in plain):
            examples[name] = trimmed(plain)
    OUT.write_text(
        json.dumps({"repository": "areal-project/AReaL", "tag": tag, "commit": commit, "examples": examples}, indent=1, sort_keys=True) + "\n"
    )
    print(f"{len(examples)} example configs of {tag} ({commit}) written to {OUT}")


if __name__ == "__main__":
    main()
