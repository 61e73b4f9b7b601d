"""Why NeMo-RL's code puts each worker where it does, in its own keys, each rule cited (``explain``).

The rules ``virtual_clusters.py`` and ``layout.py`` follow, stated for the user per role (and per
vLLM engine): the ``RayVirtualCluster`` the role runs in, its placement groups, the bundle order
and the engine slices. Lines are those of NeMo-RL at the commit read. Kept apart from the
layout modules so the reading and the wording change independently.
"""

from __future__ import annotations

from solver_placement._cluster.ranks import format_ranks
from solver_placement._frontends.nemo_rl.job import NemoRlJob
from solver_placement._frontends.nemo_rl.layout import GENERATION, POLICY, REWARD_MODEL
from solver_placement._frontends.nemo_rl.virtual_clusters import VirtualCluster, reward_model_cluster, virtual_clusters
from solver_placement._prediction.explanation import Cause, Rationale, Reason
from solver_placement._prediction.findings import FindingKind
from solver_placement._prediction.layout import PredictedRank, Prediction

CLUSTERS = "nemo_rl/algorithms/grpo.py:811-1080 setup"
GROUPS = "nemo_rl/distributed/virtual_cluster.py:834-960 RayVirtualCluster"
POLICY_RANKS = "nemo_rl/distributed/worker_groups.py:365-560, virtual_cluster.py:680-684, lm_policy.py:284-297"
ENGINES = "nemo_rl/models/generation/vllm/vllm_generation.py:330-455"
SGLANG_ENGINES = "nemo_rl/models/generation/sglang/sglang_generation.py:80-248, sglang_worker.py:376-405"
REWARD_CLUSTER = "nemo_rl/environments/reward_model_environment.py:149-156, examples/run_grpo.py:131"
TOTAL_CHECK = "nemo_rl/distributed/virtual_cluster.py:880-899"


def explain_nemo_rl(job: NemoRlJob, prediction: Prediction) -> Rationale:
    """Per role the rule that places its workers (per engine for vLLM), and the cause of each finding."""
    cite = f"NeMo-RL {job.release[:8]}"
    train, inference = virtual_clusters(job)
    serving = inference or train
    reasons = [
        Reason(
            POLICY,
            f"one worker per bundle of {_cluster_words(train)}, {_order(train)}; tensor-parallel groups are consecutive ranks",
            f"{cite} {CLUSTERS}, {POLICY_RANKS}",
        )
    ]
    reward = reward_model_cluster(job)
    if reward is not None:
        reasons.append(
            Reason(
                REWARD_MODEL, f"one reward-model worker per bundle of {_cluster_words(reward)}, {_order(reward)}, landed before the "
                "policy's clusters (its environment actor builds it before grpo.setup runs)", f"{cite} {REWARD_CLUSTER}",
            )
        )  # fmt: skip
    ranks = prediction.of_role(GENERATION)
    if job.sglang is not None:
        return Rationale((*reasons, *_sglang_reasons(job, ranks, serving, cite)), _causes(cite))
    if job.engine_size == 1:
        reasons.append(
            Reason(GENERATION, f"one vLLM worker per bundle of {_cluster_words(serving)}, {_order(serving)}", f"{cite} {CLUSTERS}, {ENGINES}")
        )
    for engine in sorted({rank.engine for rank in ranks if rank.engine is not None}):
        members = tuple(rank.rank for rank in ranks if rank.engine == engine)
        bundles = [rank.bundle for rank in ranks if rank.engine == engine and rank.bundle is not None]
        slice_of = "of the unified group sorted by node and GPU" if serving.unified else "of one per-node group"
        reasons.append(
            Reason(
                GENERATION,
                f"vLLM engine {engine} takes tensor_parallel_size x pipeline_parallel_size = {job.engine_size} consecutive bundles, "
                f"{format_ranks(bundles)}, {slice_of} of {_cluster_words(serving)}; its workers see the engine's GPUs on their node",
                f"{cite} {ENGINES}", members,
            )
        )  # fmt: skip
    return Rationale(tuple(reasons), _causes(cite))


def _sglang_reasons(job: NemoRlJob, ranks: list[PredictedRank], serving: VirtualCluster, cite: str) -> list[Reason]:
    """Per SGLang engine: the bundle its actor runs on and the GPUs its server counts up to."""
    reasons = []
    for engine in sorted({rank.engine for rank in ranks if rank.engine is not None}):
        members = [rank for rank in ranks if rank.engine == engine]
        gpus = ", ".join(f"{rank.node}:{rank.gpus[0]}" for rank in members if rank.node is not None and rank.gpus)
        reasons.append(
            Reason(
                GENERATION,
                f"SGLang engine {engine}: num_gpus_per_engine = {job.engine_size}; its actor runs on the bundle min(num_gpus_per_engine, "
                f"gpus_per_node) x its rank of {_cluster_words(serving)} sorted by node and GPU, and its server drives the GPUs counting up "
                f"from that bundle's GPU (base_gpu_id): node:GPU {gpus or 'none (pending)'}",
                f"{cite} {SGLANG_ENGINES}", tuple(rank.rank for rank in members),
            )
        )  # fmt: skip
    return reasons


def _cluster_words(cluster: VirtualCluster) -> str:
    shape = f"{len(cluster.bundles_per_node)} x {cluster.gpus_per_node} bundles"
    groups = f"one {cluster.strategy} placement group of all its bundles" if cluster.unified else "one PACK placement group per node entry"
    share = f", {cluster.max_colocated} worker groups per bundle" if cluster.max_colocated > 1 else ""
    return f"{cluster.name} ({shape}: {groups}{share})"


def _order(cluster: VirtualCluster) -> str:
    return "bundles sorted by node and GPU" if cluster.unified else "group after group, bundle after bundle"


def _causes(cite: str) -> tuple[Cause, ...]:
    pending = [
        Cause(
            FindingKind.PENDING, role,
            "NeMo-RL checks only that the Ray cluster's total GPUs cover a virtual cluster's bundles, then asks one PACK group per "
            "node entry without checking any node; a group Ray cannot place is waited for (180 s) and the run stops", f"{cite} {TOTAL_CHECK}, {GROUPS}",
        )
        for role in (POLICY, GENERATION, REWARD_MODEL)
    ]  # fmt: skip
    return (
        *pending,
        Cause(
            FindingKind.SPLIT_ENGINE,
            None,
            "a node entry's PACK group larger than a machine spills over to another (PACK is best effort), and engines and "
            "tensor-parallel groups take consecutive bundles of it",
            f"{cite} {GROUPS}, {ENGINES}",
        ),
        Cause(
            FindingKind.WRONG_DEVICE,
            GENERATION,
            "an SGLang server drives the GPUs counting up from its actor's bundle GPU (base_gpu_id) on the actor's node; NeMo-RL never "
            "checks that they are the bundles reserved for it or that the node has them",
            f"{cite} {SGLANG_ENGINES}",
        ),
        Cause(
            FindingKind.SHARED_GPU,
            GENERATION,
            "two SGLang servers count up from base GPUs closer together than an engine's GPUs (an engine size that does not divide "
            "the node's GPUs), so both drive the same GPU",
            f"{cite} {SGLANG_ENGINES}",
        ),
        Cause(
            FindingKind.IDLE_GPUS,
            GENERATION,
            "vLLM engines take whole slices of tensor_parallel_size x pipeline_parallel_size bundles per node group; the bundles left "
            "over are reserved and never used",
            f"{cite} {ENGINES}",
        ),
    )
