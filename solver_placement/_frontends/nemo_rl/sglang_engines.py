"""Where NeMo-RL's SGLang engine actors run and which GPUs their servers drive.

``SGLangGeneration._start_engines`` (``sglang_generation.py`` lines 166-248 at 7ea279ab): engine
actor ``i`` (of ``num_gpus // L``, ``L = min(num_gpus_per_engine, gpus_per_node)``, ``gpus_per_node``
the cluster's per-node bundle count) is scheduled on the unified group's bundle
``reordered_bundle_indices[i * L]`` (the bundles sorted by node and GPU, or by NVLink topology,
``get_reordered_bundle``) at ``min(0.2, 1 / max_colocated_worker_groups)`` of its GPU, and told
``base_gpu_id`` = that bundle's GPU. Ray's ``NOSET`` switches leave ``CUDA_VISIBLE_DEVICES`` alone
(lines 199-217: the driver's own value is passed through when it has one), so the actor sees its
node's GPUs. ``SGLangGenerationWorker._compute_server_args`` (``sglang_worker.py`` lines 376-405)
gives the server ``nnodes = max(1, num_gpus_per_engine // gpus_per_node)``, ``node_rank = i %
nnodes`` and ``gpu_id_step 1``: SGLang then drives ``num_gpus_per_engine // nnodes`` GPUs counting
up from ``base_gpu_id`` on the actor's node. Nothing checks that those are the bundles the
``L`` sorted slots from ``i * L`` reserved, nor that the node has them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from solver_placement._frontends.nemo_rl.job import SglangServers
from solver_placement._frontends.nemo_rl.ray_landing import Bundle

#: The GPU share an SGLang engine actor asks (``min(0.2, 1 / max_colocated_worker_groups)``, line 187).
ACTOR_GPU_SHARE = 0.2


@dataclass(frozen=True)
class SglangActor:
    """One ``SGLangGenerationWorker``: its rank, its engine, where it runs and what its server drives.

    ``reserved`` are the (bundle index, bundle) of the ``L`` sorted slots from its own; ``driven``
    the GPUs of ``node`` its server uses (empty while the group is pending)."""

    rank: int
    engine: int
    node: int | None
    base_gpu: int | None
    reserved: tuple[tuple[int, Bundle | None], ...]
    driven: tuple[int, ...]
    node_rank: int
    nnodes: int


def sglang_actors(servers: SglangServers, gpus_per_node: int, sorted_bundles: Sequence[tuple[int, Bundle | None]]) -> list[SglangActor]:
    """Every engine actor, in rank order, over the unified group's bundles in NeMo-RL's sorted order."""
    local = min(servers.gpus_per_engine, gpus_per_node)
    nnodes = max(1, servers.gpus_per_engine // gpus_per_node)
    per_node_part = servers.gpus_per_engine // nnodes
    actors = []
    for rank in range(servers.num_gpus // local):
        first = rank * local
        reserved = tuple(sorted_bundles[first : first + local])
        bundle = reserved[0][1]
        actors.append(
            SglangActor(
                rank=rank, engine=rank // nnodes, node=None if bundle is None else bundle.node, base_gpu=None if bundle is None else bundle.gpu,
                reserved=reserved, driven=() if bundle is None else tuple(range(bundle.gpu, bundle.gpu + per_node_part)),
                node_rank=rank % nnodes, nnodes=nnodes,
            )
        )  # fmt: skip
    return actors
