"""The solver's layout for an OpenRLHF job, and whether OpenRLHF's flags can ask for it.

The job becomes declarative components named as OpenRLHF's roles: ``vllm`` with
``num_engines * tp`` one-GPU processes in tensor-parallel groups of ``tp`` (each engine whole on a
node), ``actor``, ``ref``, ``critic`` and ``reward`` with one process per rank; the groups OpenRLHF
colocates (``colocate_actor_ref``, ``colocate_critic_reward``, ``colocate_all`` with hybrid
engines) are collocated with the actor (or the critic), and every other pair shares no GPU, as
separate placement groups never do. The cluster is the one the prediction used.

OpenRLHF's flags size its groups but name no node or GPU: Ray's ``PACK`` groups choose them. So
the flags that realise the solver's layout are the job's own flags when OpenRLHF's layout already
is the solver's (the core checks that by predicting them); otherwise the difference is stated.
"""

from __future__ import annotations

from typing import Any

from solver_placement._cluster.cluster import Cluster
from solver_placement._frontends.openrlhf.job import OpenRLHFJob
from solver_placement._frontends.openrlhf.layout import predict_layout
from solver_placement._prediction.frameworks import Improvement
from solver_placement._prediction.layout import Prediction
from solver_placement._prediction.predict import layout_differences
from solver_placement._solver.solve import solve


def improve_job(job: OpenRLHFJob, cluster: Cluster) -> Improvement:
    """The verified solver layout of ``job`` on ``cluster`` and the flags that ask OpenRLHF for it."""
    solution = solve({"cluster": {"num_nodes": cluster.num_nodes, "num_gpus_per_node": [int(g) for g in cluster.gpus_per_node],
                                  "component_placement": components(job)}}, cluster=cluster)  # fmt: skip
    ranks, findings, _ = predict_layout(job, cluster)
    prediction = Prediction("OpenRLHF", job.release, cluster, tuple(ranks), tuple(findings))
    differences = layout_differences(prediction, solution)
    if not differences and not prediction.errors:
        return Improvement(solution, job.arguments)
    reasons = [
        "OpenRLHF's flags only size its placement groups; Ray's PACK strategy picks their nodes and GPUs, so no flag asks for this layout",
        *(f"OpenRLHF would place differently: {difference}" for difference in differences),
        *(f"OpenRLHF's own layout fails: {finding.describe()}" for finding in prediction.errors),
    ]
    return Improvement(solution, None, tuple(reasons))


def components(job: OpenRLHFJob) -> dict[str, dict[str, Any]]:
    """The declarative ``component_placement`` of the job (see the module docstring)."""
    sets = _colocated(job)
    spec: dict[str, dict[str, Any]] = {}
    if job.engines is not None:
        spec["vllm"] = {"processes": job.engines.gpus}
        if job.engines.tensor_parallel_size > 1:
            spec["vllm"]["tensor_parallel_size"] = job.engines.tensor_parallel_size
    for group in job.groups:
        spec[group.role] = {"processes": group.world_size}
    for members in sets:
        root = members[0]
        for member in members[1:]:
            spec[member]["collocate_with"] = root
    for name, entry in spec.items():
        mine = next((members for members in sets if name in members), (name,))
        others = [other for other in spec if other not in mine]
        if others:
            entry["exclusive_with"] = others
    return spec


def _colocated(job: OpenRLHFJob) -> list[tuple[str, ...]]:
    """The roles that share GPUs, each set led by the role whose group they share."""
    roles = {group.role for group in job.groups}
    actor_set = ["actor"]
    if job.colocate_actor_ref or job.colocate_all:
        actor_set += [role for role in ("ref",) if role in roles]
    if job.hybrid_engines:
        actor_set.append("vllm")
    critic_set: list[str] = []
    if job.colocate_critic_reward and "critic" in roles:
        critic_set = [role for role in ("critic", "reward") if role in roles]
    elif job.colocate_all:
        actor_set += [role for role in ("critic", "reward") if role in roles]
    return [tuple(members) for members in (actor_set, critic_set) if len(members) > 1]
