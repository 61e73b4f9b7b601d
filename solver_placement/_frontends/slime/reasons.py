"""Why slime's code puts each rank where it does, in its own flags, each rule cited (``explain``).

The rules ``layout.py`` and ``checks.py`` follow, stated for the user: the one placement group
re-sorted by node and GPU, the train ranks on its first bundles, and per SGLang engine actor the
bundle it is scheduled on, the ``base_gpu_id`` it drives from and the host it is told. Lines are
those of slime at the commit read (``job.RELEASE``).
"""

from __future__ import annotations

from solver_placement._frontends.slime.job import SlimeJob
from solver_placement._frontends.slime.layout import EngineActor, slime_layout
from solver_placement._prediction.explanation import Cause, Rationale, Reason
from solver_placement._prediction.findings import FindingKind
from solver_placement._prediction.layout import Prediction

GROUP = "slime/ray/placement_group.py:47-48 _create_placement_group, :83-86 sorted by sort_key, :100-117 _get_placement_group_layout"
TRAIN = "slime/ray/actor_group.py:118-127 RayTrainGroup._allocate_gpus_for_actor, train_actor.py:21,45"
ENGINE = "slime/ray/rollout.py:1031-1063 start_rollout_servers, :133-139 ServerGroup.start_engines, sglang_engine.py:523-541"
HOST = "slime/ray/rollout.py:843-889 _allocate_rollout_engine_addr_and_ports_normal"


def explain_slime(job: SlimeJob, prediction: Prediction) -> Rationale:
    """Per role the rule that places its ranks (per engine actor for the rollout), and the cause of each finding."""
    cite = f"slime {job.release}"
    size, offset = job.placement_group()
    group = f"slime's one PACK placement group of {size} one-GPU bundles, re-sorted by node IP and GPU id"
    reasons = [
        Reason(
            role, f"rank r is scheduled at 0.4 GPU on sorted bundle r of {group}, and drives the GPU Ray gave it; "
            f"--actor-num-nodes {job.actor_num_nodes} x --actor-num-gpus-per-node {job.actor_num_gpus_per_node} ranks"
            + (", the critic on the actor's bundles (--advantage-estimator ppo)" if role == "critic" else ""),
            f"{cite} {TRAIN}, {GROUP}",
        )
        for role in (("actor", "critic") if job.use_critic else ("actor",))
    ]  # fmt: skip
    layout = slime_layout(job, prediction.cluster)
    first = 0
    for actor in layout.engines:
        ranks = tuple(range(first, first + actor.processes))
        first += actor.processes
        sorted_index = layout.slots.index(actor.reserved[0]) - offset if layout.slots and actor.reserved else None
        reasons.append(Reason("rollout", _engine_text(job, actor, sorted_index), f"{cite} {ENGINE}", ranks))
    return Rationale(tuple(reasons), _causes(job, cite))


def _engine_text(job: SlimeJob, actor: EngineActor, sorted_index: int | None) -> str:
    per_engine, per_node = job.rollout_num_gpus_per_engine, job.num_gpus_per_node
    step = f"min(--rollout-num-gpus-per-engine {per_engine}, --num-gpus-per-node {per_node})"
    slot = "no bundle: the group is pending" if sorted_index is None else f"sorted rollout bundle {sorted_index} (engine actors step by {step})"
    base = "" if actor.base_gpu is None else f", base_gpu_id {actor.base_gpu}"
    host = "" if actor.told_host is None else f"; told node {actor.told_host}'s address as host (engines grouped {max(1, per_node // per_engine)} to a node by --num-gpus-per-node {per_node})"
    kind = "" if actor.worker_type == "regular" else f" {actor.worker_type}"
    return (
        f"SGLang{kind} engine {actor.engine} (slime rank {actor.rank}) is scheduled on {slot} at 0.2 GPU{base}: its server drives "
        f"--rollout-num-gpus-per-engine {per_engine} // nnodes {actor.nnodes} = {actor.processes} GPUs counting up from it on that node{host}"
    )


def _causes(job: SlimeJob, cite: str) -> tuple[Cause, ...]:
    per_node = f"--num-gpus-per-node {job.num_gpus_per_node}"
    return (
        Cause(
            FindingKind.PENDING, "actor",
            "slime asks all its GPUs in one placement group (the actor's plus --rollout-num-gpus, or the larger under --colocate) and "
            "never compares it with the cluster, so pg.ready() waits when the cluster has fewer", f"{cite} {GROUP}",
        ),
        Cause(
            FindingKind.PENDING, "rollout",
            "slime sizes its one placement group, and each multi-node engine's parts, from --rollout-num-gpus and "
            "--rollout-num-gpus-per-engine without checking that they fit the cluster or divide into whole engines", f"{cite} {GROUP}, {ENGINE}",
        ),
        Cause(
            FindingKind.SPLIT_ENGINE, "rollout",
            f"engine actor j takes the sorted rollout bundles from offset + j x min(--rollout-num-gpus-per-engine, {per_node}); slime never "
            "checks that they are on one node", f"{cite} {ENGINE}",
        ),
        Cause(
            FindingKind.SPLIT_ENGINE, "actor",
            "consecutive train ranks form Megatron's tensor-parallel groups, and the sorted bundles cross a node border inside one",
            f"{cite} {TRAIN}",
        ),
        Cause(
            FindingKind.WRONG_DEVICE, "rollout",
            f"an SGLang server drives the GPUs from its bundle's GPU id upward (base_gpu_id, gpu_id_step 1) and is told the host of the "
            f"first engine of its group of {per_node} // engine size; slime assumes every node has {per_node} GPUs and never measures it",
            f"{cite} {ENGINE}, {HOST}",
        ),
        Cause(
            FindingKind.SHARED_GPU, "rollout",
            "a server that drives past its own bundles reaches the next engine's GPUs (it counts up from base_gpu_id)", f"{cite} {ENGINE}",
        ),
        Cause(
            FindingKind.IDLE_GPUS, "rollout",
            "--rollout-num-gpus is reserved whole in the placement group, and only whole engines of --rollout-num-gpus-per-engine "
            "take bundles (slime#180)", f"{cite} {GROUP}, {ENGINE}",
        ),
        Cause(
            FindingKind.IDLE_GPUS, "actor",
            "the placement group holds bundles for the actor that no train rank is scheduled on", f"{cite} {GROUP}",
        ),
    )  # fmt: skip
