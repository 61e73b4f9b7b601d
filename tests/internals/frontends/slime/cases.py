"""The slime jobs the differential test runs through slime's own code and through ``predict``.

Two kinds: the placement flags of slime's own launch scripts (``tests/data/slime/scripts.json``,
read from the scripts at the commit recorded there by ``regenerate.py``), each on the cluster it
states (nodes of ``--num-gpus-per-node`` GPUs) and on as many GPUs in 4-GPU nodes, and hand-made edges: uneven nodes, too few GPUs,
engine sizes that do not divide, slime's default ``--num-gpus-per-node 8`` on smaller nodes,
multi-node engines, prefill servers, the debug modes, a PPO critic, and argparse's own rules.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[3] / "data" / "slime" / "scripts.json"


@dataclass(frozen=True)
class Case:
    arguments: tuple[str, ...]
    gpus_per_node: tuple[int, ...]


def _edge(flags: str, *gpus: int) -> Case:
    return Case(tuple(flags.split()), gpus)


#: Hand-made edges, by what they show.
EDGES: dict[str, Case] = {
    "disaggregated, whole nodes": _edge("--actor-num-gpus-per-node 4 --rollout-num-gpus 4 --rollout-num-gpus-per-engine 2", 8),
    "default --num-gpus-per-node 8 on 4-GPU nodes: wrong host": _edge("--actor-num-gpus-per-node 2 --rollout-num-gpus 4", 4, 4),
    "default --num-gpus-per-node 8 on 4-GPU nodes: engine past the node's GPUs": _edge("--actor-num-gpus-per-node 4 --rollout-num-gpus 8 --rollout-num-gpus-per-engine 8", 4, 4, 4),
    "engine slice across a node border": _edge("--actor-num-gpus-per-node 2 --rollout-num-gpus 4 --rollout-num-gpus-per-engine 4 --num-gpus-per-node 4", 4, 4),
    "rollout GPUs not a multiple of the engine": _edge("--actor-num-gpus-per-node 4 --rollout-num-gpus 5 --rollout-num-gpus-per-engine 2 --num-gpus-per-node 4", 4, 4, 4),
    "too few GPUs": _edge("--actor-num-nodes 2 --rollout-num-gpus 8", 8, 8),
    "actor alone too large": _edge("--actor-num-nodes 3 --rollout-num-gpus 8", 8, 8),
    "uneven nodes: the larger fills first": _edge("--actor-num-gpus-per-node 2 --rollout-num-gpus 8 --rollout-num-gpus-per-engine 2", 4, 8),
    "engine size not a multiple of --num-gpus-per-node": _edge("--actor-num-gpus-per-node 4 --rollout-num-gpus 16 --rollout-num-gpus-per-engine 12", 16, 16),
    "slime#180's job (actor 2, rollout 6 on 8 GPUs): no overlap at this commit": _edge("--actor-num-gpus-per-node 2 --rollout-num-gpus 6", 8),
    "a GPU-less head node": _edge("--actor-num-nodes 2 --rollout-num-gpus 8 --rollout-num-gpus-per-engine 4", 0, 8, 8, 8),
    "multi-node prefill and decode engines": _edge("--actor-num-nodes 4 --colocate --rollout-num-gpus-per-engine 16 --prefill-num-servers 1", 8, 8, 8, 8),
    "colocated on two nodes": _edge("--actor-num-nodes 2 --colocate --rollout-num-gpus-per-engine 4", 8, 8),
    "colocated, rollout larger than the actor": _edge("--actor-num-gpus-per-node 4 --colocate --rollout-num-gpus 8 --rollout-num-gpus-per-engine 2", 8),
    "multi-node engine": _edge("--actor-num-nodes 2 --colocate --rollout-num-gpus-per-engine 16", 8, 8),
    "multi-node engine missing a part": _edge("--actor-num-nodes 3 --colocate --rollout-num-gpus-per-engine 16", 8, 8, 8),
    "prefill and decode servers": _edge("--actor-num-nodes 2 --colocate --rollout-num-gpus-per-engine 4 --prefill-num-servers 1", 8, 8),
    "PPO critic on the actor's GPUs": _edge("--actor-num-gpus-per-node 4 --rollout-num-gpus 4 --advantage-estimator ppo --tensor-model-parallel-size 2", 8),
    "debug rollout only": _edge("--debug-rollout-only --rollout-num-gpus 12 --rollout-num-gpus-per-engine 2", 8, 8),
    "debug train only": _edge("--actor-num-nodes 2 --debug-train-only", 8, 8),
    "Megatron tensor-parallel group across nodes": _edge("--actor-num-nodes 2 --actor-num-gpus-per-node 6 --colocate --tensor-model-parallel-size 3", 8, 8),
    "a value after a switch is dropped": _edge("--colocate false --actor-num-gpus-per-node 4", 4),
    "the last occurrence wins, --flag=value": _edge("--actor-num-gpus-per-node=2 --rollout-num-gpus 2 --actor-num-gpus-per-node 4", 8),
    "a switch given a value": _edge("--colocate=true", 8),
    "a count that is not a number": _edge("--rollout-num-gpus four", 8),
    "no rollout GPUs and no colocation": _edge("--actor-num-gpus-per-node 4", 8),
    "both debug modes": _edge("--debug-rollout-only --debug-train-only --rollout-num-gpus 2", 8),
    "Megatron sizes that do not divide the actor": _edge("--actor-num-gpus-per-node 6 --colocate --tensor-model-parallel-size 4", 8),
}


#: GPUs per node of the smaller nodes each script is also run on (slime's scripts assume 8).
SMALL_NODE_GPUS = 4


def script_cases() -> dict[str, Case]:
    """Each launch script's placement flags on the cluster it states."""
    data = json.loads(SCRIPTS.read_text())
    return {f"script {path}": Case(tuple(flags), tuple(gpus)) for path, (flags, gpus) in sorted(data["scripts"].items())}


def small_node_cases() -> dict[str, Case]:
    """Each launch script as written, on as many GPUs in nodes of 4 (slime's default
    ``--num-gpus-per-node 8`` then names wrong hosts and GPUs)."""
    return {
        f"{name} on {SMALL_NODE_GPUS}-GPU nodes": Case(case.arguments, (SMALL_NODE_GPUS,) * -(-sum(case.gpus_per_node) // SMALL_NODE_GPUS))
        for name, case in script_cases().items()
    }


def all_cases() -> dict[str, Case]:
    return {**script_cases(), **small_node_cases(), **EDGES}
