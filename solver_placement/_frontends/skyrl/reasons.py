"""Why SkyRL's code puts each worker where it does, in its own keys, each rule cited (``explain``).

The rules ``layout.py`` follows, stated for the user per role (and per inference engine): the
placement group a role gets (the colocate-all group, the policy-and-ref pair, its own, or none),
the bundle each rank takes, and the consecutive bundles of each engine. Lines are those of SkyRL
at tag ``skyrl_train-v0.4.0``. Kept apart from the layout modules so the reading and the wording
change independently.
"""

from __future__ import annotations

from solver_placement._cluster.ranks import format_ranks
from solver_placement._frontends.skyrl.job import SkyrlJob, TrainingGroup
from solver_placement._prediction.explanation import Cause, Rationale, Reason
from solver_placement._prediction.findings import FindingKind
from solver_placement._prediction.layout import Prediction

SHARED_GROUP = "skyrl_train/entrypoints/main_base.py:185-208 BasePPOExp.__init__"
ENGINES = "skyrl_train/inference_engines/ray_wrapped_inference_engine.py:141-260 create_ray_wrapped_inference_engines"
REORDERED = "skyrl_train/utils/utils.py:755-783 get_reordered_bundle_indices"
BUILD = "skyrl_train/trainer.py:377-470 build_models"
ACTORS = "skyrl_train/workers/worker.py:414-530 PPORayActorGroup._initiate_actors"
PLACEMENT = "trainer.placement"


def explain_skyrl(job: SkyrlJob, prediction: Prediction) -> Rationale:
    """Per role the rule that places its workers (per engine for the rollout), and the cause of each finding."""
    cite = f"SkyRL {job.release}"
    reasons = _engine_reasons(job, prediction, cite)
    rule = f"{SHARED_GROUP}, {BUILD}, {REORDERED}" if job.colocate_all else f"{BUILD}, {ACTORS}"
    reasons += [Reason(group.role, _group_text(job, group), f"{cite} {rule}") for group in job.groups]
    return Rationale(tuple(reasons), _causes(cite))


def _engine_reasons(job: SkyrlJob, prediction: Prediction, cite: str) -> list[Reason]:
    width = job.tensor_parallel * job.pipeline_parallel
    group = (
        f"the colocate-all group ({PLACEMENT}.colocate_all=true) at 0.2 GPU, in the group's raw bundle order"
        if job.colocate_all
        else f"the engines' own PACK group of generator.num_inference_engines {job.num_engines} x {job.engine_gpus} one-GPU bundles"
    )
    ranks = prediction.of_role("rollout")
    reasons = []
    for engine in sorted({rank.engine for rank in ranks if rank.engine is not None}):
        members = [rank for rank in ranks if rank.engine == engine]
        bundles = [rank.bundle for rank in members if rank.bundle is not None]
        took = f"bundles {format_ranks(bundles)}" if bundles else f"{width} bundles"
        reasons.append(
            Reason(
                "rollout",
                f"engine {engine // job.data_parallel}'s data-parallel rank {engine % job.data_parallel} takes the consecutive {took} of {group}: "
                f"inference_engine_tensor_parallel_size {job.tensor_parallel} x pipeline {job.pipeline_parallel} workers",
                f"{cite} {SHARED_GROUP + ', ' if job.colocate_all else ''}{ENGINES}", tuple(rank.rank for rank in members),
            )
        )  # fmt: skip
    return reasons


def _group_text(job: SkyrlJob, group: TrainingGroup) -> str:
    keys = f"{PLACEMENT}.{group.role}_num_nodes {group.num_nodes} x {group.role}_num_gpus_per_node {group.num_gpus_per_node}"
    if job.colocate_all:
        return f"rank r takes bundle r of the colocate-all group re-sorted by node and GPU, at 0.2 GPU ({keys}; SkyRL#338)"
    if group.role in ("policy", "ref") and job.colocate_policy_ref and job.group("ref") is not None:
        share = "0.75" if group.role == "policy" else "0.25"
        return f"rank r shares the policy-and-ref PACK group of {group.num_nodes} whole-node bundles ({PLACEMENT}.colocate_policy_ref) at {share} GPU, bundle r // num_gpus_per_node ({keys})"
    if group.num_gpus_per_node > 1:
        return f"rank r takes bundle r // {group.num_gpus_per_node} of its own PACK group of {group.num_nodes} whole-node bundles ({keys})"
    return f"one GPU per node ({keys}): SkyRL asks no placement group, each rank a whole GPU where Ray finds one, rank 0 first"


def _causes(cite: str) -> tuple[Cause, ...]:
    return (
        Cause(
            FindingKind.PENDING, None,
            "SkyRL asks each group as a PACK placement group (or lone whole-GPU actors) without comparing it with the cluster; a group "
            "Ray cannot place is never ready, SkyRL raises after SKYRL_RAY_PG_TIMEOUT_IN_S and starts nothing after it",
            f"{cite} {ACTORS}, {ENGINES}",
        ),
        Cause(
            FindingKind.SPLIT_ENGINE, None,
            "an engine takes consecutive bundles of its group in Ray's raw order (not re-sorted), and PACK put them on two nodes",
            f"{cite} {ENGINES}",
        ),
        Cause(
            FindingKind.SHARED_GPU, None,
            "ranks that share a group ask fractions of its bundles (0.2 colocate-all, 0.75 and 0.25 policy and ref); more ranks on one "
            "bundle than the fractions allow are more than a GPU", f"{cite} {BUILD}",
        ),
    )  # fmt: skip
