"""NeMo-RL as the prediction core sees it: read, predict, fix, improve (registered in ``_frontends/__init__.py``)."""

from __future__ import annotations

from solver_placement._cluster.cluster import Cluster
from solver_placement._frontends.nemo_rl.checks import nemo_rl_findings
from solver_placement._frontends.nemo_rl.fixes import fixed_input, with_fixes
from solver_placement._frontends.nemo_rl.improve import improve_nemo_rl
from solver_placement._frontends.nemo_rl.job import NemoRlJob
from solver_placement._frontends.nemo_rl.keys import read_nemo_rl
from solver_placement._frontends.nemo_rl.layout import landed_clusters, predicted_ranks
from solver_placement._frontends.nemo_rl.reasons import explain_nemo_rl
from solver_placement._frontends.nemo_rl.releases import COMMIT, RELEASES
from solver_placement._frontends.nemo_rl.segments import DOMAIN_LABEL, TOPO_RANK_LABEL, UNKNOWN_DOMAIN, UNKNOWN_RANK, cluster_topology, knows_domains
from solver_placement._prediction.frameworks import Framework
from solver_placement._prediction.layout import Prediction


def predict_nemo_rl(job: NemoRlJob, cluster: Cluster) -> Prediction:
    """Every policy, generation (vLLM, SGLang, Megatron) and reward-model worker of ``job`` where NeMo-RL's code puts it on ``cluster``, with findings and proposed fixes."""
    landed = landed_clusters(job, cluster)
    ranks = predicted_ranks(job, landed, cluster)
    findings = with_fixes(job, cluster, nemo_rl_findings(job, cluster, landed, ranks))
    unified = landed.train.cluster.unified or bool(landed.inference and landed.inference.cluster.unified)
    return Prediction("NeMo-RL", job.release, cluster, tuple(ranks), tuple(findings), _notes(job, unified, cluster))


def _notes(job: NemoRlJob, unified: bool, cluster: Cluster) -> tuple[str, ...]:
    generation = {"vllm": ", VllmGeneration", "sglang": ", SGLangGeneration", "megatron": ", MegatronGeneration"}.get(job.backend, "")
    code = f"{job.algorithm}.setup, RayVirtualCluster, RayWorkerGroup{generation}" + (", RewardModelEnvironment" if job.reward_model else "")
    notes = [
        f"rules of NeMo-RL at commit {COMMIT[:8]} ({code})",
        "NeMo-RL checks only the cluster's total GPUs; each 'node' group is a PACK placement group Ray may spread over machines",
    ]
    if job.segment_size is not None and not knows_domains(cluster_topology(cluster), range(cluster.num_nodes)):
        notes.append(
            f"cluster.segment_size={job.segment_size} and no node carries an NVLink domain (node label '{DOMAIN_LABEL}'): NeMo-RL "
            "falls back to unordered allocation, as on machines without an NVLink fabric"
        )
    if job.trains_only:
        notes.append(f"{job.algorithm}: one cluster, one policy worker a GPU (whole GPUs), no generation")
    if job.megatron_span is not None:
        notes.append(
            "policy.generation.backend=megatron: "
            + (
                "generation runs in the policy's own workers (one worker a GPU)"
                if job.colocated
                else "generation is a second Megatron policy, one worker a GPU"
            )
            + f"; its NVLink span (tensor x context, expert-tensor x expert) is {job.megatron_span}"
        )
    if job.sglang is not None:
        notes.append(
            "policy.generation.backend=sglang: one unified PACK group for policy and SGLang; each engine actor holds 0.2 of one "
            "bundle's GPU and its server drives the GPUs from that GPU upward (base_gpu_id), seeing every GPU of its node "
            "(CUDA_VISIBLE_DEVICES left alone, or the driver's own value when it sets one)"
        )
    if job.reward_model is not None:
        notes.append(
            "the reward model's cluster (grpo_reward_model_cluster) is created by its environment actor, started before grpo.setup: "
            "its groups are taken to land first"
        )
    if not job.colocated:
        notes.append("training and inference start concurrently: their groups are taken to land training first")
    if unified and any(node.domain != UNKNOWN_DOMAIN or node.topo_rank != UNKNOWN_RANK for node in cluster_topology(cluster)):
        notes.append(
            "a unified placement group is sorted by (its NVLink domain's lowest topo_rank, topo_rank, GPU), as the nodes' labels "
            f"'{DOMAIN_LABEL}' and '{TOPO_RANK_LABEL}' say; LOCAL_RANK is the bundle index, so it can exceed a node's GPUs"
        )
    elif unified:
        notes.append(
            "a unified placement group is sorted by (Ray node ID, GPU): nodes are numbered here in cluster order, on a live cluster "
            "in the order of their Ray IDs; LOCAL_RANK is the bundle index, so it can exceed a node's GPUs"
        )
    return tuple(notes)


NEMO_RL = Framework(
    name="nemo-rl", title="NeMo-RL", releases=RELEASES, read=read_nemo_rl, predict=predict_nemo_rl, fixed=fixed_input, improve=improve_nemo_rl,
    reads_yaml=False, explain=explain_nemo_rl,
)  # fmt: skip
