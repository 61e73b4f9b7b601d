"""The solver's layout for a SkyRL job, and whether SkyRL's keys can ask for it.

The job becomes declarative components named as SkyRL's roles: ``policy``, ``ref`` and ``critic``
one process per GPU, ``rollout`` one process per engine GPU in tensor x pipeline groups kept on a
node. Under colocate-all every role is ``collocate_with`` the policy (SkyRL's one shared group);
with colocate-policy-ref the ref is; every other role is ``exclusive_with`` the rest.

SkyRL's keys name no node and no GPU: Ray picks them. So the input offered is the user's own,
with the checked fixes of its errors appended (``key=value``, the last of a key wins in Hydra);
``predict.improve`` keeps it only when SkyRL's code, predicted on it, lands every role's engines
where the solver does, and says why not otherwise.
"""

from __future__ import annotations

from typing import Any

from solver_placement._cluster.cluster import Cluster
from solver_placement._frontends.skyrl.fixes import predict_skyrl
from solver_placement._frontends.skyrl.job import SkyrlJob
from solver_placement._overrides import override_text
from solver_placement._prediction.frameworks import Improvement
from solver_placement._solver.solve import solve


def improve_skyrl(job: SkyrlJob, cluster: Cluster) -> Improvement:
    solution = solve({"cluster": {"component_placement": components(job)}}, cluster=cluster)
    fixes = [override_text(key, value) for finding in predict_skyrl(job, cluster).errors for key, value in finding.fix if value is not None]
    cannot = () if job.engines_local else ("the inference engines are remote (generator.run_engines_locally=false): SkyRL places none of them on this cluster",)
    return Improvement(solution, (*job.arguments, *fixes), cannot)


def components(job: SkyrlJob) -> dict[str, dict[str, Any]]:
    """The declarative components of the job's GPU roles (see the module docstring)."""
    specs: dict[str, dict[str, Any]] = {}
    for group in job.groups:
        specs[group.role] = {"processes": group.world_size, "hardware_per_process": 1}
    if job.engines_local:
        rollout: dict[str, Any] = {"processes": job.rollout_gpus, "hardware_per_process": 1}
        if job.tensor_parallel > 1:
            rollout["tensor_parallel_size"] = job.tensor_parallel
        if job.pipeline_parallel > 1:
            rollout["pipeline_parallel_size"] = job.pipeline_parallel
        specs["rollout"] = rollout
    if job.colocate_all:
        for role in specs:
            if role != "policy":
                specs[role]["collocate_with"] = "policy"
        return specs
    if job.colocate_policy_ref and "ref" in specs:
        specs["ref"]["collocate_with"] = "policy"
    apart = [role for role, spec in specs.items() if "collocate_with" not in spec]
    for role in apart:
        if len(apart) > 1:
            specs[role]["exclusive_with"] = [other for other in apart if other != role]
    return specs
