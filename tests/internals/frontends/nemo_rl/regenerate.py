"""Record NeMo-RL's own layouts into ``tests/data/nemo_rl/layouts.json`` (run by hand with a checkout).

Usage: ``NEMO_RL_SOURCE=/path/to/RL python tests/internals/frontends/nemo_rl/regenerate.py``.
For every GRPO example config of the checkout (``examples/configs/**/*grpo*.yaml``) the library
reads (vLLM, SGLang or Megatron generation, a reward model or none, no teachers), on the nodes the config states (no NVLink
domain known, as on machines without an NVLink fabric), each config with ``cluster.segment_size``
once more on GB200 NVL72 racks (:func:`racks`), and for the hand-made edges below,
``nemo_rl_driver.py`` runs NeMo-RL's own code on a recorded Ray; the file keeps each case's
placement keys as NeMo-RL loaded them, the nodes (and their topology), and NeMo-RL's answer, with
the checkout's commit.
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
#: GPUs of one NVLink domain in the rack topology (a GB200 NVL72 rack).
RACK_GPUS = 72
#: Two NVLink domains of three 4-GPU nodes, the second sorting first (lower ``topo_rank``).
TWO_DOMAINS = [["a", 7], ["a", 8], ["a", 9], ["b", 1], ["b", 2], ["b", 3]]
SEGMENTS_2X4 = ["cluster.num_nodes=4", "cluster.gpus_per_node=4", "++cluster.segment_size=2"]
#: Megatron generation on grpo_math_1B.yaml (its megatron_cfg states no parallel sizes: added), expert parallelism last.
MEGATRON = ["policy.generation.backend=megatron", "policy.megatron_cfg.enabled=true", "policy.dtensor_cfg.enabled=false", "++policy.megatron_cfg.tensor_model_parallel_size=2",
            "++policy.megatron_cfg.pipeline_model_parallel_size=1", "++policy.megatron_cfg.context_parallel_size=1", "++policy.megatron_cfg.expert_tensor_parallel_size=1"]
APART_2X4 = [APART[0], "policy.generation.colocated.resources.num_nodes=2", "policy.generation.colocated.resources.gpus_per_node=4"]
#: Hand-made edges on grpo_math_1B.yaml: (name, overrides, nodes), or with a topology per node ([domain, topo_rank]).
EDGES: list[tuple[str, list[str], list[int]] | tuple[str, list[str], list[int], list[list[Any]]]] = [
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
    ("segment-no-domains-2x8-tp4", ["cluster.num_nodes=2", "cluster.gpus_per_node=8", "++cluster.segment_size=2", "policy.generation.vllm_cfg.tensor_parallel_size=4"], MIXED),
    ("segment-pinned-groups-2-domains", SEGMENTS_2X4, [4] * 6, TWO_DOMAINS),
    ("segment-pinned-unified-spread-tp8", [*SEGMENTS_2X4, "policy.generation.vllm_cfg.tensor_parallel_size=8"], [4] * 6, TWO_DOMAINS),
    ("segment-not-divisible", ["cluster.num_nodes=3", "cluster.gpus_per_node=4", "++cluster.segment_size=2"], [4] * 6, TWO_DOMAINS),
    ("segment-cannot-form", SEGMENTS_2X4, [4] * 4, [["a", 1], ["b", 2], ["b", 3], ["b", 4]]),
    ("segment-topo-rank-only-trimmed", ["cluster.num_nodes=3", "cluster.gpus_per_node=4", "++cluster.segment_size=2", "policy.generation.vllm_cfg.tensor_parallel_size=8"], [4] * 3, [[None, 3], [None, 2], [None, 1]]),
    ("segment-topo-rank-only-sorted", ["cluster.num_nodes=2", "cluster.gpus_per_node=4", "++cluster.segment_size=2", "policy.generation.vllm_cfg.tensor_parallel_size=8"], [4] * 2, [[None, 3], [None, 2]]),
    ("segment-apart-one-node-alive", ["cluster.num_nodes=1", "cluster.gpus_per_node=8", "++cluster.segment_size=1", APART[0], "policy.generation.colocated.resources.gpus_per_node=2"], [8]),
    ("segment-apart-inference-pinned-tp8", [*SEGMENTS_2X4, APART[0], "policy.generation.colocated.resources.num_nodes=2", "policy.generation.colocated.resources.gpus_per_node=4", "policy.generation.vllm_cfg.tensor_parallel_size=8"], [4] * 6, [["a", 1], ["a", 2], ["a", 3], ["b", 4], ["b", 5], ["b", 6]]),
    ("megatron-colocated-2x8-tp2", ["cluster.num_nodes=2", "cluster.gpus_per_node=8", *MEGATRON, "++policy.megatron_cfg.expert_model_parallel_size=1"], MIXED),
    ("megatron-apart-span16-unified", ["cluster.num_nodes=3", "cluster.gpus_per_node=8", *APART[:1], "policy.generation.colocated.resources.num_nodes=2", APART[2], *MEGATRON, "++policy.megatron_cfg.expert_model_parallel_size=16"], [8, 8, 8]),
    ("megatron-colocated-segments-span8-unified", [*SEGMENTS_2X4, *MEGATRON, "++policy.megatron_cfg.expert_model_parallel_size=8"], [4] * 6, TWO_DOMAINS),
    ("megatron-apart-segments-inference-pinned", [*SEGMENTS_2X4, *APART_2X4, *MEGATRON, "++policy.megatron_cfg.expert_model_parallel_size=8"], [4] * 6, [["a", 1], ["a", 2], ["a", 3], ["b", 4], ["b", 5], ["b", 6]]),
    ("megatron-colocated-reshard-span", ["cluster.num_nodes=2", "cluster.gpus_per_node=8", *MEGATRON, "++policy.megatron_cfg.expert_model_parallel_size=1", "++policy.generation.mcore_generation_config.tensor_model_parallel_size=4"], [8, 8]),
    ("segment-apart-inference-unpinned-tp4", [*SEGMENTS_2X4, APART[0], "policy.generation.colocated.resources.num_nodes=2", "policy.generation.colocated.resources.gpus_per_node=4", "policy.generation.vllm_cfg.tensor_parallel_size=4"], [4] * 6, TWO_DOMAINS),
]

SGLANG = "policy.generation.sglang_cfg"


def _sglang(tp: int, gpus: int) -> list[str]:
    """SGLang's engine size and GPUs as overrides (``num_gpus_per_engine`` follows ``tp_size`` in the example)."""
    return [f"{SGLANG}.tp_size={tp}", f"{SGLANG}.sglang_server_config.num_gpus={gpus}"]


RM = "env.reward_model.resources"
#: Hand-made edges on another example config (the algorithms that only train, SGLang, a reward model): (name, config, overrides, nodes[, topology]).
CONFIG_EDGES: list[tuple[str, str, list[str], list[int]] | tuple[str, str, list[str], list[int], list[list[Any]]]] = [
    ("sft-2x8-spill-mixed", "sft.yaml", ["cluster.num_nodes=2", "cluster.gpus_per_node=8"], MIXED),
    ("sft-segments-pinned", "sft.yaml", SEGMENTS_2X4, [4] * 6, TWO_DOMAINS),
    ("dpo-3x6-spill", "dpo.yaml", ["cluster.num_nodes=3", "cluster.gpus_per_node=6"], MIXED),
    ("rm-over-total", "rm.yaml", ["cluster.num_nodes=3", "cluster.gpus_per_node=8"], MIXED),
    ("sglang-2x4-tp2", "grpo_math_1B_sglang.yaml", ["cluster.num_nodes=2", "cluster.gpus_per_node=4", *_sglang(2, 8)], [4, 4]),
    ("sglang-tp3-crosses-node", "grpo_math_1B_sglang.yaml", ["cluster.num_nodes=2", "cluster.gpus_per_node=4", *_sglang(3, 6)], [4, 4]),
    ("sglang-tp6-shared-gpus", "grpo_math_1B_sglang.yaml", ["cluster.num_nodes=2", "cluster.gpus_per_node=4", *_sglang(6, 8)], [8]),
    ("sglang-tp8-two-node-parts", "grpo_math_1B_sglang.yaml", ["cluster.num_nodes=2", "cluster.gpus_per_node=4", *_sglang(8, 8)], [4, 4]),
    ("sglang-tp8-missing-node-part", "grpo_math_1B_sglang.yaml", ["cluster.num_nodes=2", "cluster.gpus_per_node=4", *_sglang(8, 4)], [4, 4]),
    ("sglang-one-node-spill-tp4", "grpo_math_1B_sglang.yaml", ["cluster.num_nodes=1", "cluster.gpus_per_node=8", *_sglang(4, 8)], [4, 4]),
    ("sglang-num-gpus-past-bundles", "grpo_math_1B_sglang.yaml", _sglang(1, 3), [2]),
    ("sglang-tp-assert", "grpo_math_1B_sglang.yaml", [*_sglang(2, 2), f"{SGLANG}.sglang_server_config.num_gpus_per_engine=1"], [2]),
    ("sglang-over-total", "grpo_math_1B_sglang.yaml", ["cluster.num_nodes=2", "cluster.gpus_per_node=4"], [4]),
    ("sglang-segments-pinned-tp4", "grpo_math_1B_sglang.yaml", [*SEGMENTS_2X4, *_sglang(4, 16)], [4] * 6, TWO_DOMAINS),
    ("rm-one-node-8", "grpo_rm_1B.yaml", ["cluster.gpus_per_node=8", f"{RM}.gpus_per_node=2"], [8]),
    ("rm-3x4-own-node", "grpo_rm_1B.yaml", ["cluster.num_nodes=3", "cluster.gpus_per_node=4", f"{RM}.gpus_per_node=4"], [4, 4, 4]),
    ("rm-1x8-spill-mixed", "grpo_rm_1B.yaml", ["cluster.gpus_per_node=8"], [4, 4]),
    ("rm-apart-one-node", "grpo_rm_1B.yaml", ["cluster.gpus_per_node=8", f"{RM}.gpus_per_node=2", APART[0], "policy.generation.colocated.resources.gpus_per_node=2"], [8]),
    ("rm-apart-3x4", "grpo_rm_1B.yaml", ["cluster.num_nodes=3", "cluster.gpus_per_node=4", APART[0], "policy.generation.colocated.resources.num_nodes=1", "policy.generation.colocated.resources.gpus_per_node=4"], [4, 4, 4]),
    ("rm-takes-every-node", "grpo_rm_1B.yaml", ["cluster.num_nodes=2", "cluster.gpus_per_node=4", f"{RM}.num_nodes=2"], [4, 4]),
    ("rm-leaves-no-gpu", "grpo_rm_1B.yaml", [f"{RM}.gpus_per_node=2"], [2]),
]


def racks(keys: dict[str, Any]) -> tuple[list[int], list[list[Any]]]:
    """The config's nodes in GB200 NVL72 racks: racks of ``72 / gpus_per_node`` nodes (at least a
    segment), enough of them for its segments, ``topo_rank`` descending so the last rack sorts first."""
    gpus, nodes, segment = keys["cluster"]["gpus_per_node"], keys["cluster"]["num_nodes"], keys["cluster"]["segment_size"]
    per_rack = max(RACK_GPUS // gpus, segment)
    count = -(-nodes // (per_rack // segment * segment)) * per_rack
    return [gpus] * count, [[f"rack{node // per_rack}", count - node] for node in range(count)]


def record(source: Path, config: Path, overrides: list[str], nodes: list[int] | None, topology: list[list[Any]] | None = None) -> dict[str, Any]:
    case = {"config": str(config), "overrides": overrides, "nodes": nodes, **({"topology": topology} if topology else {})}
    if nodes is None:  # the nodes the config states
        probe = _driver(source, {**case, "nodes": [1024]})
        keys = probe.get("keys")
        if keys is None or probe.get("unmodelled"):
            return probe
        case["nodes"] = [keys["cluster"]["gpus_per_node"]] * keys["cluster"]["num_nodes"]
    return {"nodes": case["nodes"], **({"topology": topology} if topology else {}), **_driver(source, case)}


def _driver(source: Path, case: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(HERE / "nemo_rl_driver.py"), str(source), json.dumps(case)], capture_output=True, text=True, timeout=120, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    answer: dict[str, Any] = json.loads(lines[-1])
    return answer


def _checked(name: str, answer: dict[str, Any]) -> dict[str, Any]:
    """``answer``, unless the driver failed on a case the front end models (then the driver needs fixing)."""
    if "error" in answer or answer.get("unmodelled"):
        raise SystemExit(f"{name}: the driver failed or does not model it: {answer.get('error', 'unmodelled')}")
    return answer


def main() -> None:
    source = Path(os.environ["NEMO_RL_SOURCE"])
    top = subprocess.run(["git", "-C", str(source), "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=False).stdout.strip()
    own = top and Path(top).resolve() == source.resolve()  # a checkout unpacked inside another repository is not that repository's HEAD
    head = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True, check=False).stdout.strip() if own else ""
    commit = head or os.environ.get("NEMO_RL_COMMIT", "unknown")
    only = os.environ.get("NEMO_RL_ONLY")  # re-record only the cases whose name holds this text, keep the others
    cases: dict[str, Any] = json.loads(DATA.read_text())["cases"] if only else {}
    for config in sorted((source / "examples" / "configs").glob("**/*.yaml")):  # GRPO, SFT, DPO, RM (the driver says the rest are unmodelled)
        name = str(config.relative_to(source))
        if only and only not in name:
            continue
        answer = record(source, config, [], None)
        if "error" not in answer and not answer.get("unmodelled"):
            cases[name] = answer
            if answer["keys"]["cluster"]["segment_size"]:
                cases[f"{name}@nvl72"] = _checked(name, record(source, config, [], *racks(answer["keys"])))
    base = source / "examples" / "configs" / "grpo_math_1B.yaml"
    for name, overrides, nodes, *topology in EDGES:
        if not only or only in name:
            cases[name] = {"overrides": overrides, **_checked(name, record(source, base, overrides, nodes, *topology))}
    for name, config_name, overrides, nodes, *topology in CONFIG_EDGES:
        if not only or only in name:
            config = source / "examples" / "configs" / config_name
            cases[name] = {"config": str(config.relative_to(source)), "overrides": overrides, **_checked(name, record(source, config, overrides, nodes, *topology))}
    DATA.parent.mkdir(parents=True, exist_ok=True)
    lines = ",\n".join(f"  {json.dumps(name)}: {json.dumps(case, sort_keys=True)}" for name, case in sorted(cases.items()))
    DATA.write_text(f'{{"commit": {json.dumps(commit)}, "cases": {{\n{lines}\n}}}}\n')  # one case a line: diffs stay readable
    print(f"{len(cases)} cases recorded at {commit[:8]} into {DATA}")


if __name__ == "__main__":
    main()
