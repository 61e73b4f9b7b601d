"""verl's LLM server replicas (0.7.1 on): how many GPUs one takes, and the pool each standalone one
creates for itself (``verl/workers/rollout/replica.py`` and ``llm_server.py``, v0.9.0, v0.9.1
and main 1dda039b).

A replica spans ``tensor x data x pipeline`` parallel GPUs. Hybrid replicas run inside the
actor's workers, so they only have to divide its pool; standalone ones (``separate_async``)
each make a pool ``rollout_pool_<rank>`` of ``min(n_gpus_per_node, size)`` GPUs per node,
ranks counted on from the hybrid replicas so their Ray names do not collide (from 0 when 0.9.1's
``hybrid_engine=false`` starts none).
"""

from __future__ import annotations

from solver_placement._frontends.verl.keys import GPU_LIMIT, NODE_LIMIT, VerlKeys
from solver_placement._frontends.verl.pools import SizeKeys, VerlPool, divisors
from solver_placement._limits import check
from solver_placement._solver.nearest_sizes import StatedSize

#: ``max_colocate_count`` of a standalone replica's own pool (its server and its workers).
STANDALONE_COLOCATE = 2


def replica_size(keys: VerlKeys, section: str, gpus_per_node: int) -> int:
    """GPUs of one replica of the engine configured under ``section`` (``...rollout``); verl
    asserts a replica wider than a node fills whole nodes."""
    size = 1
    for part in ("tensor_model_parallel_size", "data_parallel_size", "pipeline_model_parallel_size"):
        size *= keys.count(f"{section}.{part}", 2 if part.startswith("tensor") else 1)
    per_node = min(gpus_per_node, size)
    if size % per_node:
        key = f"{section}.tensor_model_parallel_size"
        tensor = keys.count(key, 2)
        others = size // tensor
        whole_nodes = tuple(nodes * gpus_per_node // others for nodes in range(1, size // gpus_per_node + 2) if nodes * gpus_per_node % others == 0)
        raise keys.size_error(
            f"{section}: a replica of {size} GPUs ({key}={tensor} x data x pipeline parallel) spans nodes of {gpus_per_node} GPUs "
            f"but is not a multiple of {gpus_per_node}; verl asserts it is",
            (StatedSize(key, tensor, section, divisors(gpus_per_node, others) + whole_nodes),),
        )
    return size


def check_divides(keys: VerlKeys, pool: str, gpus: int, size: int, section: str) -> None:
    """verl splits ``pool`` into replicas of ``size`` GPUs and asserts they fill it exactly."""
    if size > gpus or gpus % size:
        key = f"{section}.tensor_model_parallel_size"
        tensor = keys.count(key, 2)
        others = size // tensor  # data x pipeline parallel
        raise keys.size_error(
            f"{pool} has {gpus} GPUs, which replicas of {size} GPUs ({key}={tensor} x data x pipeline parallel) do not fill; "
            "verl asserts the pool is a multiple of the replica size",
            (StatedSize(key, tensor, pool, divisors(gpus, others)),),
        )


def standalone_pools(keys: VerlKeys, first_rank: int) -> tuple[dict[str, VerlPool], tuple[int, ...]]:
    """The pools of ``separate_async``'s standalone rollout replicas, by name in rank order, and
    the nodes the config gives them (``nnodes`` of ``n_gpus_per_node`` GPUs)."""
    section = "actor_rollout_ref.rollout"
    nnodes = keys.count(f"{section}.nnodes", 0, limit=NODE_LIMIT, allow_zero=True)
    gpus_per_node = keys.count(f"{section}.n_gpus_per_node", keys.count("trainer.n_gpus_per_node", 8), limit=GPU_LIMIT, allow_zero=True)
    if nnodes == 0 or gpus_per_node == 0:
        raise keys.error(
            f"trainer.v1.trainer_mode=separate_async runs rollout on GPUs of its own, but {section}.nnodes={nnodes} and "
            f"{section}.n_gpus_per_node={gpus_per_node}; verl asserts both are above 0 (e.g. {section}.nnodes=1)"
        )
    size = replica_size(keys, section, gpus_per_node)
    replicas = nnodes * gpus_per_node // size
    check("max_components", replicas, section, "the number of standalone rollout replicas (a pool and a component each)")
    if replicas == 0:
        raise keys.error(
            f"{section} has {nnodes * gpus_per_node} GPUs ({section}.nnodes x {section}.n_gpus_per_node), "
            f"fewer than one rollout replica of {size}; verl would start no standalone rollout"
        )
    per_node = min(gpus_per_node, size)
    size_keys = SizeKeys(f"{section}.nnodes", f"{section}.n_gpus_per_node")
    pool = VerlPool((per_node,) * (size // per_node), STANDALONE_COLOCATE, size_keys)
    return {f"rollout_pool_{first_rank + index}": pool for index in range(replicas)}, (gpus_per_node,) * nnodes
