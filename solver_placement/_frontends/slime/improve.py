"""The solver's layout for a slime job, and the slime flags that ask slime's code for it.

The job becomes declarative components named as slime's roles: ``actor`` (one process per train
GPU, Megatron's tensor-parallel groups kept on one node), ``critic`` nested in the actor's GPUs
as slime puts it, and ``rollout`` (one process per SGLang GPU, whole engines on one node), nested
in the actor's GPUs under ``--colocate`` and apart from them otherwise. slime cannot be told
where a rank goes: its ranks take the placement group's bundles in order. So the flags offered
only state what slime needs to follow the nodes (``--num-gpus-per-node`` as the nodes have it,
``--rollout-num-gpus`` a whole number of engines); ``predict.py`` keeps them only when slime's
code, predicted on them, gives exactly the solver's layout.
"""

from __future__ import annotations

from typing import Any

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import PlacementConfigError
from solver_placement._frontends.slime.job import SlimeJob
from solver_placement._prediction.flags import with_flags
from solver_placement._prediction.frameworks import Improvement
from solver_placement._solver.solve import solve


def improve_job(job: SlimeJob, cluster: Cluster) -> Improvement:
    if job.debug_rollout_only or job.debug_train_only:
        raise PlacementConfigError("slime's debug modes (--debug-rollout-only, --debug-train-only) start one side only; the solver's layout is offered for a whole train job: predict without the debug flag")
    engine = job.rollout_num_gpus_per_engine
    rollout = job.rollout_num_gpus // engine * engine
    if job.colocate and rollout not in (0, job.actor_gpus):
        raise PlacementConfigError(
            f"--colocate with {rollout} rollout GPUs in whole engines and {job.actor_gpus} actor GPUs: the solver nests the "
            "rollout in the actor's GPUs, so give --rollout-num-gpus equal to the actor's GPUs (or leave it out)"
        )
    solution = solve({"cluster": {**_cluster_keys(cluster), "component_placement": _components(job, rollout)}})
    fix: list[tuple[str, str | None]] = []
    node_sizes = sorted({int(count) for count in cluster.gpus_per_node if count > 0})
    if len(node_sizes) == 1 and node_sizes[0] != job.num_gpus_per_node:
        fix.append(("--num-gpus-per-node", str(node_sizes[0])))
    if rollout != job.rollout_num_gpus:
        fix.append(("--rollout-num-gpus", str(rollout)))
    cannot = []
    if len(node_sizes) > 1:
        cannot.append(f"slime assumes every node has --num-gpus-per-node GPUs; these nodes have {', '.join(map(str, node_sizes))}")
    return Improvement(solution, with_flags(job.arguments, tuple(fix)) if fix else job.arguments, tuple(cannot))


def _cluster_keys(cluster: Cluster) -> dict[str, Any]:
    return {"num_nodes": cluster.num_nodes, "num_gpus_per_node": [int(count) for count in cluster.gpus_per_node]}


def _components(job: SlimeJob, rollout: int) -> dict[str, dict[str, Any]]:
    components: dict[str, dict[str, Any]] = {"actor": {"processes": job.actor_gpus, "tensor_parallel_size": job.tensor_parallel_size}}
    if job.use_critic:
        components["critic"] = {"processes": job.actor_gpus, "collocate_with": "actor"}
    if rollout:
        placed = {"collocate_with": "actor"} if job.colocate else {"exclusive_with": ["actor"]}
        components["rollout"] = {"processes": rollout, "tensor_parallel_size": job.rollout_num_gpus_per_engine, **placed}
    return components

