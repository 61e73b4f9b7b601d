"""Why OpenRLHF's code puts each role where it does, in its own flags, each rule cited (``explain``).

The rules are those ``layout.py`` follows, stated once more for the user: the placement group a
role is given, the bundle each rank takes, and for vLLM which bundles each engine takes. Lines
are those of each release read (``releases.py``), at its tag (``_BY_RELEASE``).
"""

from __future__ import annotations

from dataclasses import dataclass

from solver_placement._cluster.ranks import format_ranks
from solver_placement._frontends.openrlhf.job import Group, OpenRLHFJob
from solver_placement._prediction.explanation import Cause, Rationale, Reason
from solver_placement._prediction.findings import FindingKind
from solver_placement._prediction.layout import Prediction


@dataclass(frozen=True)
class _Lines:
    """Where each rule is written in one release (read at its tag; 0.11.2, on PyPI only, ships
    0.11.0's placement code, so it cites 0.11.0's lines)."""

    #: ``RayActorGroup._initiate_actors`` in ``launcher.py``.
    actors: str
    #: The shared placement group of ``train`` in ``train_ppo_ray.py``.
    shared: str
    #: The critic-and-reward group of ``train``.
    critic_reward: str
    #: The reward group started unless a remote reward is named, and loaded only with a model.
    reward: str
    #: Where engine ``i``'s bundle indices are computed in ``vllm_engine.py``.
    engines: str


_BY_RELEASE = {
    "0.7.0": _Lines("225-276", "61-69", "124-131", "146-150", "159"),
    "0.10.1.post2": _Lines("238-289", "41-49", "109-116", "132, 175", "256"),
    "0.11.0": _Lines("240-291", "41-49", "109-116", "132, 177", "258"),
}


def _lines(release: str) -> _Lines:
    return _BY_RELEASE.get(release, _BY_RELEASE["0.11.0"])

def explain_openrlhf(job: OpenRLHFJob, prediction: Prediction) -> Rationale:
    """Per role the rule that places its ranks (per engine for vLLM), and the cause of each finding."""
    cite = f"OpenRLHF {job.release}"
    lines = _lines(job.release)
    reasons = [*_engine_reasons(job, prediction, cite)] if job.engines is not None else []
    for group in job.groups:
        reasons.append(Reason(group.role, _group_text(job, group), f"{cite} {_rule_of(job, group, lines)}"))
    return Rationale(tuple(reasons), _causes(job, cite, lines))


def _rule_of(job: OpenRLHFJob, group: Group, lines: _Lines) -> str:
    """The group's own rule: the shared or critic-and-reward group it is given, else its own group."""
    actors = f"openrlhf/trainer/ray/launcher.py:{lines.actors} RayActorGroup._initiate_actors"
    if job.colocate_all or (group.role in ("actor", "ref") and job.colocate_actor_ref):
        return f"openrlhf/cli/train_ppo_ray.py:{lines.shared} train, {actors}"
    if group.role in ("critic", "reward") and job.colocate_critic_reward and job.group("critic") is not None:
        return f"openrlhf/cli/train_ppo_ray.py:{lines.critic_reward} train, {actors}"
    return actors


def _engine_rule(job: OpenRLHFJob) -> str:
    line = f"openrlhf/trainer/ray/vllm_engine.py:{_lines(job.release).engines} create_vllm_engines"
    return f"{line}, utils.py:7 get_bundle_indices" if job.rules.bundles_by_node else line


def _engine_reasons(job: OpenRLHFJob, prediction: Prediction, cite: str) -> list[Reason]:
    engines = job.engines
    if engines is None:
        return []
    flag = job.rules.flag
    tp = engines.tensor_parallel_size
    group = (
        f"the actor's shared placement group ({flag('train.colocate_all')}{_without_async(job)}: hybrid engines at 0.2 GPU)"
        if job.hybrid_engines
        else f"vLLM's own PACK placement group of {flag('vllm.num_engines')} {engines.count} x {flag('vllm.tensor_parallel_size')} {tp} = {engines.gpus} bundles"
    )
    if tp == 1:
        return [Reason("vllm", f"engine i takes bundle i of {group}", f"{cite} {_engine_rule(job)}")]
    order = "grouped by node, nodes in the order of their first bundle and bundles in index order" if job.rules.bundles_by_node else "consecutive, whatever node Ray put each on"
    reasons = []
    for engine in range(engines.count):
        bundles = [rank.bundle for rank in prediction.of_role("vllm") if rank.engine == engine and rank.bundle is not None]
        took = f"bundles {format_ranks(bundles)}" if bundles else f"{tp} bundles"
        reasons.append(
            Reason(
                "vllm", f"vLLM engine {engine} takes {took} of {group}, {order}; its {tp} workers see the engine's GPUs on their node",
                f"{cite} {_engine_rule(job)}", tuple(range(engine * tp, (engine + 1) * tp)),
            )
        )  # fmt: skip
    return reasons


def _without_async(job: OpenRLHFJob) -> str:
    """`` without --train.async_enable`` where the release has the flag (asynchronous training gives vLLM its own group)."""
    return f" without {job.rules.flag('train.async_enable')}" if job.rules.has_async else ""


def _group_text(job: OpenRLHFJob, group: Group) -> str:
    flag = job.rules.flag
    size = f"{flag(f'{group.role}.num_nodes')} {group.num_nodes} x {flag(f'{group.role}.num_gpus_per_node')} {group.num_gpus_per_node}"
    if group.role in ("actor", "ref") and (job.colocate_actor_ref or job.colocate_all):
        switch = flag("train.colocate_all") if job.colocate_all else flag("train.colocate_actor_ref")
        return f"rank r takes bundle r of the actor's shared PACK placement group at 0.2 GPU, asked by {switch}"
    if group.role in ("critic", "reward") and job.colocate_all:
        return f"rank r takes bundle r of the actor's shared PACK placement group at 0.2 GPU, asked by {flag('train.colocate_all')}"
    if group.role in ("critic", "reward") and job.colocate_critic_reward and job.group("critic") is not None:
        return f"rank r takes bundle r of a PACK group the size of the critic, shared with the reward at 0.2 GPU, asked by {flag('train.colocate_critic_reward')}"
    if group.num_gpus_per_node > 1:
        return f"rank r takes bundle r of its own PACK placement group of {size} = {group.world_size} one-GPU bundles; {flag(f'{group.role}.num_nodes')} only sizes it"
    return f"{size}: one GPU per node, so OpenRLHF asks no placement group and Ray's scheduler gives each rank a whole GPU where it finds a free one"


def _causes(job: OpenRLHFJob, cite: str, lines: _Lines) -> tuple[Cause, ...]:
    flag = job.rules.flag
    roles = ["vllm", *(group.role for group in job.groups)]
    shared = f"openrlhf/cli/train_ppo_ray.py:{lines.shared} train"
    pending = [
        Cause(
            FindingKind.PENDING, role,
            "OpenRLHF asks each group's bundles in one PACK placement group sized by its num_nodes x num_gpus_per_node and waits in "
            "pg.ready() before asking the next; it never compares the size with the nodes, so a group larger than the free GPUs "
            "waits forever and the groups after it are never asked",
            f"{cite} {shared if role == 'actor' and (job.colocate_actor_ref or job.colocate_all) else _rule_of(job, job.group(role) or job.groups[0], lines)}",
        )
        for role in roles
    ]  # fmt: skip
    split = Cause(
        FindingKind.SPLIT_ENGINE, "vllm",
        f"{'engines take bundles grouped by node, and a node holds fewer than ' + flag('vllm.tensor_parallel_size') + ' bundles of the group' if job.rules.bundles_by_node else 'engine i takes the consecutive bundles i*tp..(i+1)*tp-1 of vLLM group whatever node Ray put each on, OpenRLHF#889, #759, #865'}",
        f"{cite} {_engine_rule(job)}",
    )  # fmt: skip
    colocated = [
        Cause(
            FindingKind.SHARED_GPU, role,
            "colocated groups ask 0.2 GPU per rank on one shared bundle per GPU; more than five ranks on one bundle, or a rank of "
            "one role twice on a GPU, is more than a GPU",
            f"{cite} {shared}",
        )
        for role in roles
    ]  # fmt: skip
    idle = Cause(
        FindingKind.IDLE_GPUS, "reward",
        f"OpenRLHF starts the reward group whenever {flag('reward.remote_url')} is not given, and loads a model in it only with {flag('reward.model_name_or_path')}",
        f"{cite} openrlhf/cli/train_ppo_ray.py:{lines.reward} train",
    )  # fmt: skip
    return (*pending, split, *colocated, idle)
