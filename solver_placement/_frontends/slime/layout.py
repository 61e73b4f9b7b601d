"""Where slime's own code puts every rank of a job, rank by rank, with what each rank is told.

Train ranks (``actor``, and ``critic`` under ``--advantage-estimator ppo``): rank ``r`` is
scheduled on sorted bundle ``r`` at 0.4 GPU (``slime/ray/actor_group.py:118-127``, the critic on
the same bundles, ``placement_group.py:135``), and uses the GPU Ray gave that bundle
(``LOCAL_RANK = ray.get_gpu_ids()[0]``, ``train_actor.py:21,45``). Consecutive ranks form
Megatron's tensor-parallel groups (``engine``).

SGLang engines (``rollout``): server group by server group (``rollout.py:1031-1063``; two groups,
prefill then decode, under ``--prefill-num-servers``, ``sglang_config.py:183-199``), engine actor
``j`` takes the sorted rollout bundle ``gpu_offset + j * min(E, G)`` (E the GPUs per engine, G
``--num-gpus-per-node``), is scheduled there at 0.2 GPU, and its SGLang server drives the GPUs
from that bundle's GPU id on (``base_gpu_id``, ``gpu_id_step 1``, ``rollout.py:133-139``,
``sglang_engine.py:523-541``) on the bundle's node: ``E // nnodes`` of them, ``nnodes = max(1,
E // G)``, node part ``node_rank = rank % nnodes``. Whether those GPUs are the bundles reserved
for it, slime never checks. The server is told a host (``rollout.py:843-889``): engines are
grouped ``max(1, G // E)`` to a node by rank, and every engine of a group is told the address of
the group's first engine, wherever it runs.

Every process gets ``RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES=1`` (``actor_group.py:69``,
``rollout.py:142``), so Ray leaves ``CUDA_VISIBLE_DEVICES`` alone and each process sees every GPU of
its node; ``gpus`` is the one it drives. A rollout rank is one SGLang GPU process, numbered in
engine order (engine actor ``rank`` in slime's log is ``engine`` here for single-node engines).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from solver_placement._cluster.cluster import Cluster
from solver_placement._frontends.slime.bundles import Slot, sorted_slots
from solver_placement._frontends.slime.job import ROLLOUT_GPU_SHARE, TRAIN_GPU_SHARE, SlimeJob
from solver_placement._prediction.layout import PredictedRank


@dataclass(frozen=True)
class EngineActor:
    """One SGLang engine actor (slime's ``rank``) and what slime tells it."""

    rank: int
    engine: int
    worker_type: str
    #: Where the actor runs: its bundle's node (None: the group never placed).
    node: int | None
    base_gpu: int | None
    #: The sorted rollout bundles reserved for it (``min(E, G)`` of them).
    reserved: tuple[Slot, ...]
    #: The GPU processes its server starts (``E // nnodes``), and the GPUs they drive on ``node``
    #: (empty while the group is pending).
    processes: int
    driven: tuple[int, ...]
    #: The node whose address slime gives it as its host.
    told_host: int | None
    #: Its node part within a multi-node engine, and the parts the engine needs.
    node_rank: int = 0
    nnodes: int = 1


@dataclass(frozen=True)
class SlimeLayout:
    """A job's predicted ranks and the facts the node-by-node checks need."""

    job: SlimeJob
    cluster: Cluster
    size: int
    rollout_offset: int
    #: The sorted bundles (None: the group stays pending).
    slots: list[Slot] | None
    ranks: list[PredictedRank] = field(default_factory=list)
    engines: list[EngineActor] = field(default_factory=list)


def slime_layout(job: SlimeJob, cluster: Cluster) -> SlimeLayout:
    size, offset = job.placement_group()
    slots = sorted_slots(cluster, size) if size else []
    layout = SlimeLayout(job, cluster, size, offset, slots)
    for role in ("actor", "critic") if job.use_critic else ("actor",):
        layout.ranks.extend(_train_ranks(job, cluster, slots, role))
    if not job.debug_train_only:
        layout.engines.extend(_engine_actors(job, slots, offset))
        layout.ranks.extend(_rollout_ranks(layout.engines, cluster))
    return layout


def _train_ranks(job: SlimeJob, cluster: Cluster, slots: list[Slot] | None, role: str) -> list[PredictedRank]:
    tensor = job.tensor_parallel_size
    ranks = []
    for rank in range(job.actor_gpus):
        slot = slots[rank] if slots is not None else None
        ranks.append(
            PredictedRank(
                role=role,
                rank=rank,
                node=None if slot is None else slot.node,
                gpus=() if slot is None else (slot.gpu,),
                visible_devices=() if slot is None else tuple(cluster.node_accelerator_ids[slot.node]),
                gpu_share=TRAIN_GPU_SHARE,
                engine=rank // tensor if tensor > 1 else None,
                bundle=None if slot is None else slot.bundle,
            )
        )
    return ranks


def server_groups(job: SlimeJob) -> list[tuple[str, int]]:
    """``(worker type, GPUs)`` of each server group (``rollout.py:1129-1153``)."""
    if job.rollout_num_gpus == 0:
        return []
    if job.prefill_num_servers is not None:
        prefill = job.prefill_num_servers * job.rollout_num_gpus_per_engine
        return [("prefill", prefill), ("decode", job.rollout_num_gpus - prefill)]
    return [("regular", job.rollout_num_gpus)]


def _engine_actors(job: SlimeJob, slots: list[Slot] | None, offset: int) -> list[EngineActor]:
    per_engine, per_node = job.rollout_num_gpus_per_engine, job.num_gpus_per_node
    on_node = min(per_engine, per_node)
    nnodes = max(1, per_engine // per_node)
    per_host = max(1, per_node // per_engine)
    rollout = None if slots is None else slots[offset:]
    actors: list[EngineActor] = []
    gpu_offset = 0
    for worker_type, gpus in server_groups(job):
        rank_offset = len(actors)
        for local in range(gpus // on_node):
            rank = rank_offset + local
            first = gpu_offset + local * on_node
            reserved = () if rollout is None else tuple(rollout[first : first + on_node])
            slot = reserved[0] if reserved else None
            host_rank = rank_offset + (local // per_host) * per_host
            actors.append(
                EngineActor(
                    rank=rank,
                    engine=rank // nnodes,
                    worker_type=worker_type,
                    node=None if slot is None else slot.node,
                    base_gpu=None if slot is None else slot.gpu,
                    reserved=reserved,
                    processes=per_engine // nnodes,
                    driven=() if slot is None else tuple(range(slot.gpu, slot.gpu + per_engine // nnodes)),
                    told_host=None if rollout is None else rollout[gpu_offset + (host_rank - rank_offset) * on_node].node,
                    node_rank=rank % nnodes,
                    nnodes=nnodes,
                )
            )
        gpu_offset += gpus
    return actors


def _rollout_ranks(actors: list[EngineActor], cluster: Cluster) -> list[PredictedRank]:
    ranks: list[PredictedRank] = []
    for actor in actors:
        bundles = [slot.bundle for slot in actor.reserved]
        for index in range(actor.processes):
            gpu = actor.driven[index] if actor.driven else None
            ranks.append(
                PredictedRank(
                    role="rollout",
                    rank=len(ranks),
                    node=actor.node,
                    gpus=() if gpu is None else (gpu,),
                    visible_devices=() if actor.node is None else tuple(cluster.node_accelerator_ids[actor.node]),
                    gpu_share=ROLLOUT_GPU_SHARE,
                    engine=actor.engine,
                    bundle=bundles[index] if index < len(bundles) else None,
                )
            )
    return ranks
