"""Shared inputs of the OpenRLHF tests: OpenRLHF's own example scripts' placement flags (per
release, with the commit they came from: ``tests/data/openrlhf/examples.json``, written by
``write_examples.py`` beside it) and the flags a hand-made case needs besides."""

from __future__ import annotations

import json
from typing import Any

from helpers import ROOT

EXAMPLES: dict[str, Any] = json.loads((ROOT / "tests" / "data" / "openrlhf" / "examples.json").read_text())

#: A model for each role OpenRLHF reads one for (0.11 spelling): enough for every group to start.
MODELS_0_11 = ["--actor.model_name_or_path", "m", "--reward.model_name_or_path", "rm"]
MODELS_FLAT = ["--pretrain", "m", "--reward_pretrain", "rm"]
#: Example scripts OpenRLHF's own release refuses (the differential test shows it does): 0.7.0's
#: GRPO example asks group_norm with one sample per prompt.
REFUSED_EXAMPLES = {("0.7.0", "examples/scripts/train_grpo_llama_ray.sh"): "group_norm requires n_samples_per_prompt > 1"}


def models(release: str) -> list[str]:
    """The model flags in the release's spelling."""
    return MODELS_0_11 if release.startswith("0.11") else MODELS_FLAT


def example_cases() -> list[tuple[str, str, list[str]]]:
    """(release, script path, placement flags) for every example script that runs ``train_ppo_ray``."""
    return [(release, path, flags) for release, entry in EXAMPLES.items() for path, flags in entry["scripts"].items()]


def groups(*sizes: tuple[str, int], dotted: bool = True) -> list[str]:
    """``--role.num_gpus_per_node N`` (or ``--role_num_gpus_per_node N``) for each (role, N)."""
    return [word for role, count in sizes for word in (f"--{role}{'.' if dotted else '_'}num_gpus_per_node", str(count))]
