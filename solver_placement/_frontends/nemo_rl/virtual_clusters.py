"""The ``RayVirtualCluster`` values ``grpo.setup`` builds from a job, with NeMo-RL's own checks.

Colocated (``nemo_rl/algorithms/grpo.py`` lines 811-851 at 7ea279ab): one cluster of
``cluster.num_nodes`` per-node groups of ``cluster.gpus_per_node`` bundles, two worker groups per
bundle (``max_colocated_worker_groups=2`` for vLLM), so policy and vLLM each take half of a GPU.
Non-colocated (lines 853-1080): a training and an inference cluster, one worker group each. On one
node inference takes ``colocated.resources.gpus_per_node`` GPUs of it and training the rest; on
several nodes inference takes ``colocated.resources.num_nodes`` whole nodes (its ``gpus_per_node``
must equal ``cluster.gpus_per_node``) and training the others. A failed ``assert`` of NeMo-RL is
refused here with NeMo-RL's own message.

Placement groups (``nemo_rl/distributed/virtual_cluster.py`` lines 834-960): one ``PACK`` group per
"node" entry, unless vLLM's engine (``tensor_parallel_size x pipeline_parallel_size``) is larger
than the cluster's ``num_gpus_per_node`` (``vllm_generation.py`` lines 77-87 and 185-196): then one
unified group of all bundles, ``PACK`` when not colocated, the cluster's default ``SPREAD`` when
colocated (``strategy=None``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

from solver_placement._errors import PlacementConfigError
from solver_placement._frontends.nemo_rl.job import NemoRlJob


@dataclass(frozen=True)
class VirtualCluster:
    """One ``RayVirtualCluster``: its name, bundles per "node" entry, worker groups per bundle,
    and whether vLLM makes it one unified placement group (with that group's strategy)."""

    name: str
    bundles_per_node: tuple[int, ...]
    max_colocated: int
    unified: bool
    strategy: str

    @property
    def gpus_per_node(self) -> int:
        """``num_gpus_per_node`` as NeMo-RL passes it: the per-node bundle count."""
        return self.bundles_per_node[0]

    @property
    def total(self) -> int:
        return sum(self.bundles_per_node)


def virtual_clusters(job: NemoRlJob) -> tuple[VirtualCluster, VirtualCluster | None]:
    """The training cluster (colocated: the only one) and the inference cluster (None when colocated)."""
    if job.colocated:
        gpus = job.gpus_per_node
        unified = job.engine_size > gpus
        return _engines_fit(job, VirtualCluster("grpo_policy_cluster", (gpus,) * job.num_nodes, 2, unified, "SPREAD")), None
    train_gpus, train_nodes = job.gpus_per_node, job.num_nodes
    inference_gpus, inference_nodes = job.inference_gpus_per_node, job.inference_nodes
    if job.num_nodes == 1:
        if inference_gpus is None or inference_gpus <= 0:
            _refuse(
                "policy.generation.colocated.resources.gpus_per_node must be explicitly set to a value > 0 when policy_nodes = 1 "
                f"and inference is non-colocated, but got {inference_gpus}.", "grpo.py line 867",
            )  # fmt: skip
        if inference_nodes not in (None, 1):
            _refuse(
                "policy.generation.colocated.resources.num_nodes must be 1 or set to null when policy_nodes = 1 and inference is "
                f"non-colocated, but got {inference_nodes}.", "grpo.py line 874",
            )  # fmt: skip
        inference_nodes = 1
        train_gpus -= inference_gpus
        if train_gpus <= 0:
            _refuse(
                f"No enough GPUs for training, train_gpus_per_node:{train_gpus} = cluster_config['gpus_per_node']:{job.gpus_per_node} "
                f"- inference_gpus_per_node:{inference_gpus}", "grpo.py line 886",
            )  # fmt: skip
    else:
        if inference_nodes is None:
            _refuse("'>' not supported between instances of 'NoneType' and 'int' (policy.generation.colocated.resources.num_nodes is null)", "grpo.py line 897")
        if inference_nodes <= 0:
            _refuse(
                "policy.generation.colocated.resources.num_nodes must be > 0 when cluster.num_nodes > 1 and inference is "
                f"non-colocated, but got {inference_nodes}.", "grpo.py line 897",
            )  # fmt: skip
        if inference_gpus != job.gpus_per_node:
            _refuse(
                "policy.generation.colocated.resources.gpus_per_node must be explicitly set and equal to cluster.gpus_per_node when "
                f"cluster.num_nodes > 1 and inference is non-colocated, but got inference_gpus_per_node={inference_gpus}, "
                f"cluster.gpus_per_node={job.gpus_per_node}.", "grpo.py line 902",
            )  # fmt: skip
        train_nodes -= inference_nodes
    if train_nodes <= 0 or inference_nodes <= 0:
        _refuse(
            f"Non-colocated mode requires train_nodes > 0 and inference_nodes > 0, got train_nodes={train_nodes}, "
            f"inference_nodes={inference_nodes}", "grpo.py line 912",
        )  # fmt: skip
    train = VirtualCluster("grpo_train_cluster", (train_gpus,) * train_nodes, 1, False, "PACK")
    inference = VirtualCluster("grpo_inference_cluster", (inference_gpus,) * inference_nodes, 1, job.engine_size > inference_gpus, "PACK")
    return train, _engines_fit(job, inference)


def _engines_fit(job: NemoRlJob, serving: VirtualCluster) -> VirtualCluster:
    """``serving`` unless one vLLM engine is larger than all its GPUs: ``VllmGeneration.__init__``
    asserts the GPUs are a whole number of engines (``vllm_generation.py`` line 121 at 7ea279ab),
    so NeMo-RL never starts such a job, where the layout would show no engine at all. (A cluster
    that is not a multiple of a smaller engine fails the same assert; the layout tests read that
    case as GPUs left idle, so only the case of no engine is refused here.)"""
    if job.engine_size > serving.total:
        _refuse(
            "World size must be a multiple of model parallel size. Got world size "
            f"{serving.total} and model parallel size (TP * PP) {job.engine_size} "
            "(policy.generation.vllm_cfg.tensor_parallel_size x pipeline_parallel_size).", "vllm_generation.py line 121",
        )  # fmt: skip
    return serving


def _refuse(message: str, where: str) -> NoReturn:
    raise PlacementConfigError(f"NeMo-RL refuses this config ({where} at 7ea279ab): {message}")
