"""Fixes in SkyRL's own keys for what its layout gets wrong, found by predicting each candidate.

* A placement group that is never ready (without colocate-all): reshape the group to nodes no
  wider than the cluster's (``<role>_num_nodes`` x ``<role>_num_gpus_per_node`` kept equal; policy
  and ref together when they share a group), else share the policy's GPUs with the ref
  (``colocate_policy_ref=true``), else colocate everything (``colocate_all=true``, which SkyRL
  allows when every group has as many GPUs as the rollout). With colocate-all already on, the one
  group of one-GPU bundles is the fewest GPUs SkyRL can ask: no fix (the cluster is too small).
* An engine split across nodes: a smaller tensor-parallel size dividing the old one, with more
  engines so the rollout keeps its GPUs (and colocate-all's equal-GPU rule holds).

A candidate is kept when SkyRL's layout, predicted with it, has no error; ``predict.py`` then
checks it again by reading the fixed input.
"""

from __future__ import annotations

from dataclasses import replace

from solver_placement._cluster.cluster import Cluster
from solver_placement._frontends.skyrl.job import SkyrlJob, TrainingGroup
from solver_placement._frontends.skyrl.layout import predict_layout
from solver_placement._prediction.findings import Finding, FindingKind, Fix
from solver_placement._prediction.layout import Prediction

_PLACEMENT = "trainer.placement."
_TENSOR = "generator.inference_engine_tensor_parallel_size"
_ENGINES = "generator.num_inference_engines"


def predict_skyrl(job: SkyrlJob, cluster: Cluster) -> Prediction:
    """SkyRL's layout of ``job`` with a fix attached to each error that has one."""
    prediction = predict_layout(job, cluster)
    findings = tuple(finding.with_fix(_fix(job, cluster, finding)) if finding.is_error else finding for finding in prediction.findings)
    return replace(prediction, findings=findings)


def _fix(job: SkyrlJob, cluster: Cluster, finding: Finding) -> Fix:
    candidates = _pending(job, cluster, finding.role) if finding.kind == FindingKind.PENDING else _split(job) if finding.kind == FindingKind.SPLIT_ENGINE else []
    for fix in candidates:
        if not predict_layout(applied(job, fix), cluster).errors:
            return fix
    return ()


def _pending(job: SkyrlJob, cluster: Cluster, role: str) -> list[Fix]:
    if job.colocate_all:
        return []
    widest = int(max(cluster.gpus_per_node))
    candidates: list[Fix] = []
    group = job.group(role)
    if group is not None:
        together = job.colocate_policy_ref and job.group("ref") is not None and role in ("policy", "ref")
        roles = ("policy", "ref") if together else (role,)
        for width in _divisors(group.world_size):
            if width < group.num_gpus_per_node and width <= widest:
                candidates.append(tuple(pair for name in roles for pair in _shape(name, group.world_size // width, width)))
    if job.group("ref") is not None and not job.colocate_policy_ref and _same_shape(job.groups[0], job.group("ref")):
        candidates.append(((_PLACEMENT + "colocate_policy_ref", "true"),))
    policy = job.groups[0].world_size
    if job.engines_local and job.rollout_gpus == policy and all(group.world_size == policy for group in job.groups):
        candidates.append(((_PLACEMENT + "colocate_all", "true"),))
    return candidates


def _split(job: SkyrlJob) -> list[Fix]:
    return [
        ((_TENSOR, str(size)), (_ENGINES, str(job.num_engines * job.tensor_parallel // size)))
        for size in _divisors(job.tensor_parallel)
        if size < job.tensor_parallel
    ]


def applied(job: SkyrlJob, fix: Fix) -> SkyrlJob:
    """``job`` as SkyRL reads it with the fix's keys set (the keys this module writes)."""
    values = dict(fix)
    groups = []
    for group in job.groups:
        nodes = values.get(f"{_PLACEMENT}{group.role}_num_nodes")
        width = values.get(f"{_PLACEMENT}{group.role}_num_gpus_per_node")
        groups.append(TrainingGroup(group.role, int(nodes) if nodes else group.num_nodes, int(width) if width else group.num_gpus_per_node))
    return replace(
        job,
        groups=tuple(groups),
        colocate_all=values.get(_PLACEMENT + "colocate_all", str(job.colocate_all).lower()) == "true",
        colocate_policy_ref=values.get(_PLACEMENT + "colocate_policy_ref", str(job.colocate_policy_ref).lower()) == "true",
        tensor_parallel=int(values.get(_TENSOR) or job.tensor_parallel),
        num_engines=int(values.get(_ENGINES) or job.num_engines),
    )


def _shape(role: str, nodes: int, width: int) -> Fix:
    return ((f"{_PLACEMENT}{role}_num_nodes", str(nodes)), (f"{_PLACEMENT}{role}_num_gpus_per_node", str(width)))


def _same_shape(one: TrainingGroup, other: TrainingGroup | None) -> bool:
    return other is not None and (one.num_nodes, one.num_gpus_per_node) == (other.num_nodes, other.num_gpus_per_node)


def _divisors(number: int) -> list[int]:
    """The divisors of ``number``, largest first (found up to its square root)."""
    small = [size for size in range(1, int(number**0.5) + 1) if number % size == 0]
    return sorted({*small, *(number // size for size in small)}, reverse=True)
