"""NeMo-RL's layout checked node by node: what hangs, what splits, what collides, what idles.

* pending: a cluster whose bundles exceed the Ray cluster's GPUs (NeMo-RL retries six times, about
  a minute, then raises ``ResourceInsufficientError``), or a group Ray cannot place once the other
  clusters hold their GPUs (NeMo-RL waits 180 s, then ``TimeoutError``): nothing starts; and an
  SGLang engine spanning nodes whose node parts are not all started (its node 0 waits forever);
* an engine split across nodes: a policy or reward-model tensor-parallel group or a vLLM engine
  whose bundles landed on two machines, because a "node" group larger than a node spilled over
  (PACK is best effort). Engines larger than every node span nodes by design and are not reported;
* SGLang (``sglang_engines.py``): a server driving GPUs that are not the bundles reserved for it
  (its range from ``base_gpu_id`` crosses its node's GPUs, or runs into the next engine's), and
  two servers driving one GPU;
* reserved GPUs idle: inference bundles no vLLM engine takes (a per-node group's remainder).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import agreeing
from solver_placement._frontends.nemo_rl.job import NemoRlJob
from solver_placement._frontends.nemo_rl.layout import GENERATION, POLICY, REWARD_MODEL, LandedCluster, LandedClusters, engine_actors, reserved_gpus
from solver_placement._frontends.nemo_rl.sglang_engines import SglangActor
from solver_placement._prediction.checks import idle_gpus, shared_gpus, split_engines
from solver_placement._prediction.findings import Finding, FindingKind
from solver_placement._prediction.layout import PredictedRank


def nemo_rl_findings(job: NemoRlJob, cluster: Cluster, landed: LandedClusters, ranks: Sequence[PredictedRank]) -> list[Finding]:
    """The findings of one prediction, without fixes (``fixes.py`` adds them)."""
    findings = []
    inference = landed.inference
    together = (
        (POLICY,) if inference or job.megatron_span is not None or job.trains_only else (POLICY, GENERATION)
    )  # no generation workers of its own
    for cluster_landed, roles in ((landed.reward_model, (REWARD_MODEL,)), (landed.train, together), (inference, (GENERATION,))):
        if cluster_landed is not None and not cluster_landed.placed:
            findings += [_pending(cluster_landed, role, cluster) for role in roles]
    largest = int(max(cluster.gpus_per_node))
    sizes = {
        POLICY: job.train_tensor_parallel,
        GENERATION: job.engine_size,
        REWARD_MODEL: job.reward_model.tensor_parallel if job.reward_model else 1,
    }
    if job.sglang is not None and landed.train.placed:
        actors = engine_actors(job.sglang, landed.train)
        findings += _incomplete_engines(actors)
        findings += [finding for actor in actors for finding in _wrong_devices(actor, cluster)]
        findings += shared_gpus(ranks)
    findings += [finding for finding in split_engines(ranks) if sizes[finding.role] <= largest]
    if inference is not None and inference.placed:
        findings += idle_gpus(GENERATION, reserved_gpus(inference), ranks)
    return findings


def _pending(landed: LandedCluster, role: str, cluster: Cluster) -> Finding:
    name, total = landed.cluster.name, int(sum(cluster.gpus_per_node))
    if landed.over_total:
        message = (
            f"{name} asks {landed.cluster.total} GPUs and the cluster has {total}: NeMo-RL retries six times, then raises ResourceInsufficientError"
        )
    else:
        message = f"a placement group of {name} finds no GPUs free once the groups before it landed: NeMo-RL waits 180 s, then raises TimeoutError"
    return Finding(FindingKind.PENDING, role, None, landed.cluster.total, message)


def _incomplete_engines(actors: Sequence[SglangActor]) -> list[Finding]:
    """SGLang engines spanning nodes that miss a node part (``num_gpus`` not whole engines)."""
    parts: dict[int, list[SglangActor]] = defaultdict(list)
    for actor in actors:
        parts[actor.engine].append(actor)
    findings = []
    for engine, members in sorted(parts.items()):
        nnodes, started = members[0].nnodes, sorted(actor.node_rank for actor in members)
        if started != list(range(nnodes)):
            findings.append(
                Finding(
                    FindingKind.PENDING, GENERATION, members[0].node, nnodes - len(started),
                    f"SGLang engine {engine} spans {nnodes} nodes but NeMo-RL starts its node {agreeing(len(started), 'part')} {started} only "
                    "(sglang_server_config.num_gpus is not a whole number of engines): the server waits for the missing part forever",
                )
            )  # fmt: skip
    return findings


def _wrong_devices(actor: SglangActor, cluster: Cluster) -> list[Finding]:
    """GPUs an SGLang server drives that are not the bundles reserved for its actor."""
    if actor.node is None:
        return []
    reserved = {(bundle.node, bundle.gpu) for _, bundle in actor.reserved if bundle is not None}
    wrong = [gpu for gpu in actor.driven if (actor.node, gpu) not in reserved]
    if not wrong:
        return []
    node_gpus = int(cluster.gpus_per_node[actor.node])
    missing = [gpu for gpu in wrong if gpu >= node_gpus]
    absent = f" (node {actor.node} has no GPU {', '.join(map(str, missing))})" if missing else ""
    held = ", ".join(f"{bundle.node}:{bundle.gpu}" for _, bundle in actor.reserved if bundle is not None)
    return [
        Finding(
            FindingKind.WRONG_DEVICE, GENERATION, actor.node, len(wrong),
            f"SGLang engine {actor.engine} (actor rank {actor.rank}) is told base_gpu_id {actor.base_gpu} and drives "
            f"{agreeing(len(actor.driven), 'GPU')} {', '.join(map(str, actor.driven))} of node {actor.node}{absent}, but Ray reserved "
            f"node:GPU {held} for it",
        )
    ]  # fmt: skip
