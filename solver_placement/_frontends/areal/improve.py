"""The solver's layout for an AReaL job, and whether AReaL can be asked for it.

Each role with GPUs becomes a declarative component named as AReaL names the role: as many
processes as AReaL starts workers, each holding the GPUs a worker asks (a rollout worker holds
its whole ``tp*pp`` engine; training ranks hold one GPU each, in tensor-parallel groups of
``t`` kept on a node); a colocated role (``scheduling_strategy: colocation``, the eval rollout)
is ``collocate_with`` its target; roles AReaL places apart are ``exclusive_with`` each other.
The solver places them on the whole cluster.

AReaL's local scheduler and launcher can only be asked for one layout: the GPUs of the machine
they run on, handed out in creation order. So the input that asks for the solver's layout is
the user's own input, kept only when AReaL's code, predicted on it, lands every role exactly
where the solver does (``predict.improve`` checks that); a layout on other nodes or in another
order is stated as what AReaL cannot be asked for.
"""

from __future__ import annotations

from typing import Any

from solver_placement._cluster.cluster import Cluster
from solver_placement._frontends.areal.job import ArealJob, RoleRequest
from solver_placement._prediction.frameworks import Improvement
from solver_placement._solver.solve import solve


def improve_areal(job: ArealJob, cluster: Cluster) -> Improvement:
    components: dict[str, dict[str, Any]] = {}
    cannot = []
    for request in job.roles:
        component = _component(request, job)
        if component is None:
            cannot.append(f"{request.role} asks no GPU, so the solver has nothing of it to place")
            continue
        components[request.role] = component
    separate = [name for name, component in components.items() if "collocate_with" not in component]
    for name in separate:
        if len(separate) > 1:
            components[name]["exclusive_with"] = [other for other in separate if other != name]
    mapping = {"cluster": {"num_nodes": cluster.num_nodes, "num_gpus_per_node": cluster.gpus_per_node.tolist(), "component_placement": components}}
    solution = solve(mapping)
    used = sorted({p.cluster_node_rank for name in solution.components for p in solution.placements(name)})
    if used != [0]:
        cannot.append(
            f"the solver uses nodes {', '.join(map(str, used))}; AReaL's local scheduler and launcher use the GPUs of the machine they run on only (scheduler.type=ray places on several, and is not modelled here)"
        )
        return Improvement(solution, None, tuple(cannot))
    arguments = job.arguments or (("--config", job.config_path) if job.config_path else None)
    if arguments is None:
        cannot.append("the config was given as a mapping: AReaL reads it from a file (--config FILE)")
    return Improvement(solution, arguments, tuple(cannot))


def _component(request: RoleRequest, job: ArealJob) -> dict[str, Any] | None:
    if request.colocate_with is not None:
        target = _holder(job, request)
        if target is None:
            return None
        return {"processes": request.replicas, "gpus_per_process": max(target.gpus), "collocate_with": request.colocate_with}
    if not any(request.gpus):
        return None
    component: dict[str, Any] = {"processes": request.replicas, "gpus_per_process": max(request.gpus)}
    if request.engine_size is None and request.allocation.tensor > 1 and max(request.gpus) == 1:
        component["tensor_parallel_size"] = request.allocation.tensor
    return component


def _holder(job: ArealJob, request: RoleRequest) -> RoleRequest | None:
    """The role whose GPUs a colocated role uses (following colocation to its anchor), if it has any."""
    while request.colocate_with is not None:
        target = job.role(request.colocate_with)
        if target is None:
            return None
        request = target
    return request if any(request.gpus) else None
