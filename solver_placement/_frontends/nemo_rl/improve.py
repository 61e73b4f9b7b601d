"""The solver's layout for a NeMo-RL job, and the NeMo-RL keys that ask NeMo-RL's code for it.

The job becomes declarative components named as NeMo-RL's roles: ``policy`` (one process per
training GPU, its tensor-parallel groups kept on one node) and ``generation`` (one process per
vLLM GPU, each engine whole on one node), nested in the policy's GPUs when colocated and apart
from them otherwise. NeMo-RL cannot be told which GPU a rank takes: its ranks follow the bundles
of whole "node" groups. So the keys offered only size those groups to the machines
(``cluster.num_nodes``, ``cluster.gpus_per_node``); ``predict.improve`` keeps them only when
NeMo-RL's code, predicted on them, gives exactly the solver's layout, and says why not otherwise.
"""

from __future__ import annotations

from typing import Any

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import PlacementConfigError
from solver_placement._frontends.nemo_rl.fixes import sizing_fix
from solver_placement._frontends.nemo_rl.job import NemoRlJob
from solver_placement._frontends.nemo_rl.virtual_clusters import reward_model_cluster, virtual_clusters
from solver_placement._overrides import override_text
from solver_placement._prediction.frameworks import Improvement
from solver_placement._solver.solve import solve


def improve_nemo_rl(job: NemoRlJob, cluster: Cluster) -> Improvement:
    """The solver's layout of ``job``'s workers on ``cluster`` and the overrides that size NeMo-RL to it."""
    largest = int(max(cluster.gpus_per_node))
    if job.engine_size > largest:
        raise PlacementConfigError(
            f"NeMo-RL: a vLLM engine of {job.engine_size} GPUs (tensor_parallel_size x pipeline_parallel_size) is larger than "
            f"every node ({largest} GPUs): the solver keeps an engine on one node, so there is no better layout to offer"
        )
    train, inference = virtual_clusters(job)
    serving = inference.total if inference else train.total
    engines = serving // job.engine_size * job.engine_size
    components: dict[str, dict[str, Any]] = {"policy": {"processes": train.total, "tensor_parallel_size": job.train_tensor_parallel}}
    placed = {"exclusive_with": ["policy"]} if inference else {"collocate_with": "policy"}
    if job.sglang is not None:  # SGLang starts num_gpus // engine size engines, whatever the cluster's bundles
        engines = min(job.sglang.num_gpus, serving) // job.engine_size * job.engine_size
    if inference or (job.megatron_span is None and not job.trains_only):  # colocated Megatron generation runs in the policy's own workers
        components["generation"] = {"processes": engines, "tensor_parallel_size": job.engine_size, **placed}
    reward = reward_model_cluster(job)
    if reward is not None:  # first, as NeMo-RL lands its cluster first; apart from every GPU the policy's roles take
        tensor = job.reward_model.tensor_parallel if job.reward_model else 1
        apart = ["policy", "generation"] if inference and "generation" in components else ["policy"]
        components = {"reward_model": {"processes": reward.total, "tensor_parallel_size": tensor, "exclusive_with": apart}, **components}
    solution = solve(
        {"cluster": {"num_nodes": cluster.num_nodes, "num_gpus_per_node": [int(n) for n in cluster.gpus_per_node], "component_placement": components}}
    )
    if job.config_file is None:
        return Improvement(
            solution, None, ("NeMo-RL reads its config from a file: give the YAML file to get the overrides that ask for this layout",)
        )
    words = [override_text(key, value) for key, value in sizing_fix(job, cluster)]
    return Improvement(solution, ("--config", job.config_file, *job.overrides, *words))
