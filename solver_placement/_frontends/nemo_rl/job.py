"""A NeMo-RL GRPO job once read: the values ``grpo.setup`` builds its Ray clusters from.

``grpo.setup`` (``nemo_rl/algorithms/grpo.py`` lines 759-1080 at 7ea279ab) turns ``cluster.num_nodes``,
``cluster.gpus_per_node`` and ``policy.generation.colocated`` into one ``RayVirtualCluster``
(colocated) or a training and an inference one; the parallel sizes decide how workers tie bundles
into engines.
"""

from __future__ import annotations

from dataclasses import dataclass

from solver_placement._cluster.cluster import Cluster


@dataclass(frozen=True)
class SglangServers:
    """``policy.generation.sglang_cfg.sglang_server_config`` as ``SGLangGeneration`` sizes its engines
    (``sglang_generation.py`` lines 91-95 at 7ea279ab): ``num_gpus`` for all engines together (not
    checked against the cluster) and ``num_gpus_per_engine`` (``tp_size x pp_size``) for one."""

    num_gpus: int
    gpus_per_engine: int
    #: ``sglang_cfg.pp_size`` (``tp_size`` is ``gpus_per_engine // pipeline``, NeMo-RL's assert).
    pipeline: int = 1


@dataclass(frozen=True)
class RewardModel:
    """The reward-model environment's ``env.reward_model`` sizes: the nodes and GPUs per node of
    its own ``RayVirtualCluster`` (``resources``) and its DTensor tensor-parallel size."""

    num_nodes: int
    gpus_per_node: int
    tensor_parallel: int


@dataclass(frozen=True)
class NemoRlJob:
    """The placement values of a NeMo-RL GRPO config.

    ``train_tensor_parallel`` is the policy's tensor-parallel size (``dtensor_cfg`` or
    ``megatron_cfg``, whichever is enabled); ``engine_size`` vLLM's ``tensor_parallel_size x
    pipeline_parallel_size`` (Megatron generation: its workers' tensor-parallel size); ``inference_nodes`` and
    ``inference_gpus_per_node`` the ``colocated.resources`` values (None as the YAML's null).
    """

    release: str
    num_nodes: int
    gpus_per_node: int
    colocated: bool
    backend: str
    engine_size: int
    train_tensor_parallel: int
    inference_nodes: int | None
    inference_gpus_per_node: int | None
    #: ``cluster.segment_size``: nodes per NVLink-domain segment (None: no topology-aware placement).
    segment_size: int | None = None
    #: Megatron generation's ``nvlink_domain_span`` (``megatron.py``); None for vLLM.
    megatron_span: int | None = None
    #: The algorithm whose ``setup`` builds the clusters (its config's top-level section): ``grpo``,
    #: or ``sft``/``dpo``/``rm``, which train one policy on one cluster and generate nothing.
    algorithm: str = "grpo"
    #: The SGLang servers' sizes when ``policy.generation.backend=sglang`` (None otherwise).
    sglang: SglangServers | None = None
    #: The reward-model environment when the data uses it (``env_name: reward_model``), else None.
    reward_model: RewardModel | None = None
    #: The YAML file read (``--config``), so fixes and the improvement restate it; None for a mapping.
    config_file: str | None = None
    #: The ``key=value`` overrides given after the config, in order (restated by the improvement).
    overrides: tuple[str, ...] = ()

    @property
    def trains_only(self) -> bool:
        """Whether the job has no generation: SFT, DPO and reward-model training."""
        return self.algorithm != "grpo"

    @property
    def policy_nodes(self) -> int:
        """The nodes left to the policy and generation (``grpo.py`` lines 772-779): all of them on
        one node, else ``cluster.num_nodes`` less the reward model's nodes."""
        if self.num_nodes == 1 or self.reward_model is None:
            return self.num_nodes
        return self.num_nodes - self.reward_model.num_nodes

    @property
    def reward_gpus_on_one_node(self) -> int:
        """GPUs the reward model takes from the only node (``grpo.py`` lines 813 and 882-885): its
        ``gpus_per_node`` when ``cluster.num_nodes`` is 1, else none (it has nodes of its own)."""
        return self.reward_model.gpus_per_node if self.reward_model is not None and self.num_nodes == 1 else 0

    def stated_cluster(self) -> Cluster:
        """``cluster.num_nodes`` nodes of ``cluster.gpus_per_node`` GPUs: what the config describes."""
        return Cluster(num_nodes=self.num_nodes, num_gpus_per_node=self.gpus_per_node)
