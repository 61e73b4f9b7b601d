"""The solver's layout for a ROLL job, and the ``device_mapping`` values that ask ROLL for it.

The job becomes declarative components named as ROLL's sections: each GPU section
``processes: world_size`` of ``hardware_per_process: num_gpus_per_worker`` GPUs (a vLLM engine
whole on one node), Megatron's ``tensor_parallel_size`` kept on a node, and ROLL's sharing of
device numbers stated as ``collocate_with`` (a section on exactly an earlier one's devices) or
``exclusive_with`` (sections sharing none); sections sharing some devices may share GPUs, as in ROLL. The solver's verified answer is then written
back in ROLL's numbering: GPU ``g`` of a cluster node is device ``r x num_gpus_per_node + g - first``
where node rank ``r``'s group lands on that node with its first GPU ``first`` (as
``resource_manager.py`` predicts the groups), so ROLL's own code puts every worker where the
solver did; ``predict.improve`` checks that by predicting the offered keys. GPUs no group of ROLL
reaches (beyond ``num_gpus_per_node`` on a larger node, or on a node no group lands on) cannot be
asked for, and the answer says so.
"""

from __future__ import annotations

from typing import Any

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import PlacementConfigError
from solver_placement._frontends.roll.fixes import mapping_text
from solver_placement._frontends.roll.job import RollJob, RollWorker
from solver_placement._frontends.roll.layout import gpus_per_node
from solver_placement._frontends.roll.resource_manager import land_groups
from solver_placement._overrides import override_text
from solver_placement._prediction.frameworks import Improvement
from solver_placement._solver.solve import solve


def improve_roll(job: RollJob, cluster: Cluster) -> Improvement:
    """The solver's layout of ``job`` on ``cluster`` and the ``device_mapping`` overrides that realise it."""
    workers = [worker for worker in job.workers if worker.devices]
    if not workers:
        raise PlacementConfigError("ROLL: no section has a device_mapping, so no worker holds a GPU and there is no layout to improve")
    solution = solve({"cluster": {"component_placement": components(workers)}}, cluster=cluster)
    size = gpus_per_node(job, cluster)
    nodes = [int(gpus) for gpus in cluster.gpus_per_node]
    able = sum(1 for gpus in nodes if size and gpus >= size)
    groups = land_groups(nodes, size, able) if size else []
    device_of = {(group.node, group.first_gpu + gpu): group.node_rank * size + gpu for group in groups for gpu in range(size)}
    overrides, cannot = [], []
    for worker in workers:
        devices = [device_of.get((p.cluster_node_rank, gpu)) for p in solution.placements(worker.role) for gpu in sorted(p.local_hardware_ranks)]
        if None in devices:
            cannot.append(
                f"{worker.role}: the solver uses GPUs no node rank of ROLL reaches (num_gpus_per_node={size}, groups on nodes {sorted({g.node for g in groups if g.node is not None})})"
            )
            continue
        overrides.append(override_text(f"{worker.role}.device_mapping", mapping_text([d for d in devices if d is not None])))
    return Improvement(solution, None if cannot else tuple(overrides), tuple(cannot))


def components(workers: list[RollWorker]) -> dict[str, dict[str, Any]]:
    """The declarative components of the GPU sections (largest first, the collocation targets)."""
    ordered = sorted(workers, key=lambda worker: -len(set(worker.devices or ())))
    placed: dict[str, dict[str, Any]] = {}
    for index, worker in enumerate(ordered):
        own = set(worker.devices or ())
        spec: dict[str, Any] = {"processes": worker.world_size, "hardware_per_process": worker.gpus_per_worker}
        if worker.tensor_parallel > 1:
            spec["tensor_parallel_size"] = worker.tensor_parallel
        host = next((other.role for other in ordered[:index] if own == set(other.devices or ())), None)
        if host is not None:
            spec["collocate_with"] = host
        apart = [other.role for other in ordered[:index] if not own & set(other.devices or ())]
        if apart:
            spec["exclusive_with"] = apart
        placed[worker.role] = spec
    return {worker.role: placed[worker.role] for worker in workers}
