"""Fixes in OpenRLHF's own flags for what its layout gets wrong, each tried before it is offered.

For each error finding a short list of flag changes is tried in order, the least intrusive first
(switch on the colocation OpenRLHF offers, pairs before ``colocate_all``, a group resized to the
actor's where colocating asks it, then fewer vLLM engines or a smaller tensor-parallel
size that keeps the GPUs, then a smaller group); the first whose flags, read and placed again,
clear the finding without a new error is attached. ``predict.py`` checks it once more on the
user's own input. A finding none of them clears keeps no fix (an engine split by Ray's bundle
order in 0.7.0 has none: the remedy is a release that regroups bundles by node).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import PlacementError
from solver_placement._frontends.openrlhf.job import Group, OpenRLHFJob
from solver_placement._frontends.openrlhf.read import read_job
from solver_placement._prediction.findings import Finding, FindingKind, Fix
from solver_placement._prediction.flags import with_flags
from solver_placement._prediction.launch_input import LaunchInput
from solver_placement._prediction.layout import PredictedRank

#: Candidate fixes tried per finding (each costs one reading and one prediction).
MAX_CANDIDATES = 24

#: What predicts a job: ``layout.predict_layout``, passed in (this module is imported by it).
Predictor = Callable[[OpenRLHFJob, Cluster], tuple[list[PredictedRank], list[Finding], list[str]]]


def with_fixes(job: OpenRLHFJob, cluster: Cluster, findings: list[Finding], predictor: Predictor) -> list[Finding]:
    """``findings`` with the first candidate fix that clears each error attached."""
    errors = {(finding.kind, finding.role) for finding in findings if finding.is_error}
    fixed = []
    for finding in findings:
        if finding.kind is FindingKind.PENDING or _splits(finding):
            for fix in _limited(_candidates(job, finding, max(int(gpus) for gpus in cluster.gpus_per_node))):
                if _clears(job, cluster, finding, fix, errors, predictor):
                    finding = finding.with_fix(fix)
                    break
        fixed.append(finding)
    return fixed


def _splits(finding: Finding) -> bool:
    """A split engine the layout shows node by node (not 0.7.0's unstable order, node None)."""
    return finding.kind is FindingKind.SPLIT_ENGINE and finding.node is not None


def _limited(candidates: Iterator[Fix]) -> Iterator[Fix]:
    seen: set[Fix] = set()
    for fix in candidates:
        if fix not in seen:
            seen.add(fix)
            yield fix
        if len(seen) >= MAX_CANDIDATES:
            return


def _clears(job: OpenRLHFJob, cluster: Cluster, finding: Finding, fix: Fix, before: set[tuple[FindingKind, str]], predictor: Predictor) -> bool:
    try:
        again = read_job(LaunchInput(arguments=with_flags(job.arguments, fix)), job.release)
        _, after, _ = predictor(again, cluster)
    except PlacementError:
        return False
    if any(other.kind is finding.kind and other.role == finding.role for other in after):
        return False
    return not {(other.kind, other.role) for other in after if other.is_error} - before


def _candidates(job: OpenRLHFJob, finding: Finding, largest_node: int) -> Iterator[Fix]:
    flag = job.rules.flag
    actor = job.groups[0]
    ref, critic, reward, engines = job.group("ref"), job.group("critic"), job.group("reward"), job.engines
    if finding.kind is FindingKind.PENDING:
        pair_ref = ref is not None and not (job.colocate_actor_ref or job.colocate_all) and _same_size(ref, actor)
        pair_critic = critic is not None and reward is not None and not job.colocate_critic_reward and _same_size(critic, reward)
        if pair_ref:
            yield ((flag("train.colocate_actor_ref"), ""),)
        if pair_critic:
            yield ((flag("train.colocate_critic_reward"), ""),)
        if pair_ref and pair_critic:
            yield ((flag("train.colocate_actor_ref"), ""), (flag("train.colocate_critic_reward"), ""))
        if ref is not None and not (job.colocate_actor_ref or job.colocate_all) and not _same_size(ref, actor):
            yield (*_sized_like(job, ref, actor), (flag("train.colocate_actor_ref"), ""))  # OpenRLHF asserts a colocated ref is the actor's size
        if not job.colocate_all:
            shared = _sized_for_colocate_all(job)
            if engines is None or engines.gpus == actor.world_size:
                yield ((flag("train.colocate_all"), ""), *shared)
            if engines is not None and actor.world_size % engines.tensor_parallel_size == 0:
                yield ((flag("train.colocate_all"), ""), *shared, (flag("vllm.num_engines"), str(actor.world_size // engines.tensor_parallel_size)))
        if finding.role == "vllm" and engines is not None:
            yield from _fewer_engines(job)
        group = job.group(finding.role)
        if group is not None:
            for gpus in range(min(group.num_gpus_per_node - 1, largest_node), 0, -1):  # a group larger than a node's GPUs never helps
                yield ((flag(f"{group.role}.num_gpus_per_node"), str(gpus)),)
    elif _splits(finding) and engines is not None:
        yield from _fewer_engines(job)
        for size in range(engines.tensor_parallel_size - 1, 0, -1):
            if engines.tensor_parallel_size % size == 0:
                yield ((flag("vllm.tensor_parallel_size"), str(size)), (flag("vllm.num_engines"), str(engines.gpus // size)))


def _fewer_engines(job: OpenRLHFJob) -> Iterator[Fix]:
    """Fewer engines of the same size (not for hybrid engines, which must fill the actor's GPUs)."""
    if job.engines is None or job.hybrid_engines:
        return
    for count in range(job.engines.count - 1, 0, -1):
        yield ((job.rules.flag("vllm.num_engines"), str(count)),)


def _sized_like(job: OpenRLHFJob, group: Group, like: Group) -> Fix:
    """``group``'s ``num_nodes`` and ``num_gpus_per_node`` set to ``like``'s (only those that differ)."""
    flag = job.rules.flag
    sizes = (("num_nodes", group.num_nodes, like.num_nodes), ("num_gpus_per_node", group.num_gpus_per_node, like.num_gpus_per_node))
    return tuple((flag(f"{group.role}.{key}"), str(wanted)) for key, had, wanted in sizes if had != wanted)


def _sized_for_colocate_all(job: OpenRLHFJob) -> Fix:
    """What ``colocate_all`` needs of the other groups (``read.py``'s ``_check_train``): a ref of
    the actor's size (OpenRLHF's assertion), and no group in the actor's shared placement group
    larger than the actor (Ray refuses a bundle index past it): those are sized like the actor."""
    actor, ref = job.groups[0], job.group("ref")
    fix = _sized_like(job, ref, actor) if ref is not None else ()
    shared = [job.group("critic")] if job.colocate_critic_reward else [job.group("critic"), job.group("reward")]
    for group in shared:
        if group is not None and group.world_size > actor.world_size:
            fix += _sized_like(job, group, actor)
    return fix


def _same_size(one: Group, other: Group) -> bool:
    return (one.num_nodes, one.num_gpus_per_node) == (other.num_nodes, other.num_gpus_per_node)
