"""NeMo-RL's layout checked node by node: what hangs, what splits, what idles.

* pending: a cluster whose bundles exceed the Ray cluster's GPUs (NeMo-RL retries six times, about
  a minute, then raises ``ResourceInsufficientError``), or a group Ray cannot place once the other
  cluster holds its GPUs (NeMo-RL waits 180 s, then ``TimeoutError``): nothing starts;
* an engine split across nodes: a policy tensor-parallel group or a vLLM engine whose bundles
  landed on two machines, because a "node" group larger than a node spilled over (PACK is best
  effort). Engines larger than every node span nodes by design and are not reported;
* reserved GPUs idle: inference bundles no vLLM engine takes (a per-node group's remainder).
"""

from __future__ import annotations

from collections.abc import Sequence

from solver_placement._cluster.cluster import Cluster
from solver_placement._frontends.nemo_rl.job import NemoRlJob
from solver_placement._frontends.nemo_rl.layout import GENERATION, POLICY, LandedCluster, reserved_gpus
from solver_placement._prediction.checks import idle_gpus, split_engines
from solver_placement._prediction.findings import Finding, FindingKind
from solver_placement._prediction.layout import PredictedRank


def nemo_rl_findings(job: NemoRlJob, cluster: Cluster, train: LandedCluster, inference: LandedCluster | None, ranks: Sequence[PredictedRank]) -> list[Finding]:
    """The findings of one prediction, without fixes (``fixes.py`` adds them)."""
    findings = []
    together = (POLICY,) if inference or job.megatron_span is not None or job.trains_only else (POLICY, GENERATION)  # no generation workers of its own
    for landed, roles in ((train, together), (inference, (GENERATION,))):
        if landed is not None and not landed.placed:
            findings += [_pending(landed, role, cluster) for role in roles]
    largest = int(max(cluster.gpus_per_node))
    sizes = {POLICY: job.train_tensor_parallel, GENERATION: job.engine_size}
    findings += [finding for finding in split_engines(ranks) if sizes[finding.role] <= largest]
    if inference is not None and inference.placed:
        findings += idle_gpus(GENERATION, reserved_gpus(inference), ranks)
    return findings


def _pending(landed: LandedCluster, role: str, cluster: Cluster) -> Finding:
    name, total = landed.cluster.name, int(sum(cluster.gpus_per_node))
    if landed.over_total:
        message = (
            f"{name} asks {landed.cluster.total} GPUs and the cluster has {total}: NeMo-RL retries six times, then raises "
            "ResourceInsufficientError"
        )
    else:
        message = f"a placement group of {name} finds no GPUs free once the groups before it landed: NeMo-RL waits 180 s, then raises TimeoutError"
    return Finding(FindingKind.PENDING, role, None, landed.cluster.total, message)
