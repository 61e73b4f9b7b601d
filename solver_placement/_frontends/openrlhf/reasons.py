"""Why OpenRLHF's code puts each role where it does, in its own flags, each rule cited (``explain``).

The rules are those ``layout.py`` follows, stated once more for the user: the placement group a
role is given, the bundle each rank takes, and for vLLM which bundles each engine takes. Lines
are those of the releases read (``releases.py``); ``train_ppo_ray.py`` lines are 0.11.2's.
"""

from __future__ import annotations

from solver_placement._cluster.ranks import format_ranks
from solver_placement._frontends.openrlhf.job import Group, OpenRLHFJob
from solver_placement._prediction.explanation import Cause, Rationale, Reason
from solver_placement._prediction.findings import FindingKind
from solver_placement._prediction.layout import Prediction

LAUNCHER = "openrlhf/trainer/ray/launcher.py:240-290 RayActorGroup._initiate_actors"
SHARED_GROUP = "openrlhf/cli/train_ppo_ray.py:41-50 train"
CRITIC_REWARD_GROUP = "openrlhf/cli/train_ppo_ray.py:105-116 train"
BY_NODE = "openrlhf/trainer/ray/utils.py:7 get_bundle_indices, called by vllm_engine.py create_vllm_engines"
CONSECUTIVE = "openrlhf/trainer/ray/vllm_engine.py:159 create_vllm_engines"


def explain_openrlhf(job: OpenRLHFJob, prediction: Prediction) -> Rationale:
    """Per role the rule that places its ranks (per engine for vLLM), and the cause of each finding."""
    cite = f"OpenRLHF {job.release}"
    reasons = [*_engine_reasons(job, prediction, cite)] if job.engines is not None else []
    for group in job.groups:
        reasons.append(Reason(group.role, _group_text(job, group), f"{cite} {LAUNCHER}"))
    return Rationale(tuple(reasons), _causes(job, cite))


def _engine_reasons(job: OpenRLHFJob, prediction: Prediction, cite: str) -> list[Reason]:
    engines = job.engines
    if engines is None:
        return []
    flag = job.rules.flag
    tp = engines.tensor_parallel_size
    group = (
        f"the actor's shared placement group ({flag('train.colocate_all')} without {flag('train.async_enable')}: hybrid engines at 0.2 GPU)"
        if job.hybrid_engines
        else f"vLLM's own PACK placement group of {flag('vllm.num_engines')} {engines.count} x {flag('vllm.tensor_parallel_size')} {tp} = {engines.gpus} bundles"
    )
    if tp == 1:
        return [Reason("vllm", f"engine i takes bundle i of {group}", f"{cite} {CONSECUTIVE}")]
    order = "grouped by node: nodes in the order of their first bundle, bundles in index order" if job.rules.bundles_by_node else "consecutive, whatever node Ray put each on"
    reasons = []
    for engine in range(engines.count):
        bundles = [rank.bundle for rank in prediction.of_role("vllm") if rank.engine == engine and rank.bundle is not None]
        took = f"bundles {format_ranks(bundles)}" if bundles else f"{tp} bundles"
        reasons.append(
            Reason(
                "vllm", f"vLLM engine {engine} takes {took} of {group}, {order}: its {tp} workers see the engine's GPUs on their node",
                f"{cite} {BY_NODE if job.rules.bundles_by_node else CONSECUTIVE}", tuple(range(engine * tp, (engine + 1) * tp)),
            )
        )  # fmt: skip
    return reasons


def _group_text(job: OpenRLHFJob, group: Group) -> str:
    flag = job.rules.flag
    size = f"{flag(f'{group.role}.num_nodes')} {group.num_nodes} x {flag(f'{group.role}.num_gpus_per_node')} {group.num_gpus_per_node}"
    if group.role in ("actor", "ref") and (job.colocate_actor_ref or job.colocate_all):
        switch = flag("train.colocate_all") if job.colocate_all else flag("train.colocate_actor_ref")
        return f"rank r takes bundle r of the actor's shared PACK placement group at 0.2 GPU, asked by {switch} in train_ppo_ray.py:41-50"
    if group.role in ("critic", "reward") and job.colocate_all:
        return f"rank r takes bundle r of the actor's shared PACK placement group at 0.2 GPU, asked by {flag('train.colocate_all')}"
    if group.role in ("critic", "reward") and job.colocate_critic_reward and job.group("critic") is not None:
        return f"rank r takes bundle r of a PACK group the size of the critic, shared with the reward at 0.2 GPU, asked by {flag('train.colocate_critic_reward')} in train_ppo_ray.py:105-116"
    if group.num_gpus_per_node > 1:
        return f"rank r takes bundle r of its own PACK placement group of {size} = {group.world_size} one-GPU bundles; {flag(f'{group.role}.num_nodes')} only sizes it"
    return f"{size}: one GPU per node, so OpenRLHF asks no placement group and Ray's scheduler gives each rank a whole GPU where it finds a free one"


def _causes(job: OpenRLHFJob, cite: str) -> tuple[Cause, ...]:
    flag = job.rules.flag
    roles = ["vllm", *(group.role for group in job.groups)]
    pending = [
        Cause(
            FindingKind.PENDING, role,
            "OpenRLHF asks each group's bundles in one PACK placement group sized by its num_nodes x num_gpus_per_node and waits in "
            "pg.ready() before asking the next; it never compares the size with the nodes, so a group larger than the free GPUs "
            "waits forever and the groups after it are never asked",
            f"{cite} {SHARED_GROUP if role == 'actor' and (job.colocate_actor_ref or job.colocate_all) else LAUNCHER}",
        )
        for role in roles
    ]  # fmt: skip
    split = Cause(
        FindingKind.SPLIT_ENGINE, "vllm",
        f"{'engines take bundles grouped by node, and a node holds fewer than ' + flag('vllm.tensor_parallel_size') + ' bundles of the group' if job.rules.bundles_by_node else 'engine i takes the consecutive bundles i*tp..(i+1)*tp-1 of vLLM group whatever node Ray put each on, OpenRLHF#889, #759, #865'}",
        f"{cite} {BY_NODE if job.rules.bundles_by_node else CONSECUTIVE}",
    )  # fmt: skip
    shared = [
        Cause(
            FindingKind.SHARED_GPU, role,
            "colocated groups ask 0.2 GPU per rank on one shared bundle per GPU; more than five ranks on one bundle, or a rank of "
            "one role twice on a GPU, is more than a GPU",
            f"{cite} {SHARED_GROUP}",
        )
        for role in roles
    ]  # fmt: skip
    idle = Cause(
        FindingKind.IDLE_GPUS, "reward",
        f"OpenRLHF starts the reward group whenever {flag('reward.remote_url')} is not given, and loads a model in it only with {flag('reward.model_name_or_path')}",
        f"{cite} openrlhf/cli/train_ppo_ray.py train",
    )  # fmt: skip
    return (*pending, split, *shared, idle)
