"""Record NeMo-RL's own layouts into ``tests/data/nemo_rl/layouts.json`` (run by hand with a checkout).

Usage: ``NEMO_RL_SOURCE=/path/to/RL python tests/internals/frontends/nemo_rl/regenerate.py``.
For every GRPO example config of the checkout (``examples/configs/**/*grpo*.yaml``) the library
reads (vLLM generation, no segments, no reward model, no teachers), on the nodes the config
states, and for the hand-made edges below on 8 + 8 + 4 GPUs, ``nemo_rl_driver.py`` runs NeMo-RL's
own code on a recorded Ray; the file keeps each case's placement keys as NeMo-RL loaded them, the
nodes, and NeMo-RL's answer, with the checkout's commit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
DATA = HERE.parents[2] / "data" / "nemo_rl" / "layouts.json"
MIXED = [8, 8, 4]
APART = ["policy.generation.colocated.enabled=false", "policy.generation.colocated.resources.num_nodes=1", "policy.generation.colocated.resources.gpus_per_node=8"]
#: Hand-made edges on grpo_math_1B.yaml: (name, overrides, nodes).
EDGES: list[tuple[str, list[str], list[int]]] = [
    ("colocated-2x8-tp4", ["cluster.num_nodes=2", "cluster.gpus_per_node=8", "policy.generation.vllm_cfg.tensor_parallel_size=4"], MIXED),
    ("colocated-unified-spread-tp16", ["cluster.num_nodes=2", "cluster.gpus_per_node=8", "policy.generation.vllm_cfg.tensor_parallel_size=16"], MIXED),
    ("colocated-spill-3x6-tp3", ["cluster.num_nodes=3", "cluster.gpus_per_node=6", "policy.generation.vllm_cfg.tensor_parallel_size=3"], MIXED),
    ("colocated-spill-3x5-tp5", ["cluster.num_nodes=3", "cluster.gpus_per_node=5", "policy.generation.vllm_cfg.tensor_parallel_size=5"], MIXED),
    ("colocated-over-total", ["cluster.num_nodes=3", "cluster.gpus_per_node=8"], MIXED),
    ("apart-whole-node-tp3", ["cluster.num_nodes=2", "cluster.gpus_per_node=8", *APART, "policy.generation.vllm_cfg.tensor_parallel_size=3"], MIXED),
    ("apart-unified-pack-tp16", ["cluster.num_nodes=3", "cluster.gpus_per_node=8", *APART[:1], "policy.generation.colocated.resources.num_nodes=2", APART[2], "policy.generation.vllm_cfg.tensor_parallel_size=16"], [8, 8, 8]),
    ("apart-one-node-6-2", ["cluster.num_nodes=1", "cluster.gpus_per_node=8", APART[0], "policy.generation.colocated.resources.gpus_per_node=2"], [8]),
    ("apart-inference-pending", ["cluster.num_nodes=2", "cluster.gpus_per_node=8", *APART], [8]),
    ("apart-one-node-too-many", ["cluster.num_nodes=1", "cluster.gpus_per_node=8", APART[0], "policy.generation.colocated.resources.gpus_per_node=8"], [8]),
]


def record(source: Path, config: Path, overrides: list[str], nodes: list[int] | None) -> dict[str, Any]:
    case = {"config": str(config), "overrides": overrides, "nodes": nodes}
    if nodes is None:  # the nodes the config states
        probe = _driver(source, {**case, "nodes": [1024]})
        keys = probe.get("keys")
        if keys is None or probe.get("unmodelled"):
            return probe
        case["nodes"] = [keys["cluster"]["gpus_per_node"]] * keys["cluster"]["num_nodes"]
    return {"nodes": case["nodes"], **_driver(source, case)}


def _driver(source: Path, case: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(HERE / "nemo_rl_driver.py"), str(source), json.dumps(case)], capture_output=True, text=True, timeout=120, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    answer: dict[str, Any] = json.loads(lines[-1])
    return answer


def main() -> None:
    source = Path(os.environ["NEMO_RL_SOURCE"])
    commit = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True, check=False).stdout.strip() or os.environ.get("NEMO_RL_COMMIT", "unknown")
    cases: dict[str, Any] = {}
    for config in sorted((source / "examples" / "configs").glob("**/*grpo*.yaml")):
        answer = record(source, config, [], None)
        if "error" not in answer and not answer.get("unmodelled"):
            cases[str(config.relative_to(source))] = answer
    base = source / "examples" / "configs" / "grpo_math_1B.yaml"
    for name, overrides, nodes in EDGES:
        cases[name] = {"overrides": overrides, **record(source, base, overrides, nodes)}
    DATA.parent.mkdir(parents=True, exist_ok=True)
    lines = ",\n".join(f"  {json.dumps(name)}: {json.dumps(case, sort_keys=True)}" for name, case in sorted(cases.items()))
    DATA.write_text(f'{{"commit": {json.dumps(commit)}, "cases": {{\n{lines}\n}}}}\n')  # one case a line: diffs stay readable
    print(f"{len(cases)} cases recorded at {commit[:8]} into {DATA}")


if __name__ == "__main__":
    main()
