"""The job a SkyRL launch states, typed: the keys of ``trainer.placement`` and ``generator`` that
decide where SkyRL 0.4.0 puts its workers, and which models it creates at all."""

from __future__ import annotations

from dataclasses import dataclass

from solver_placement._cluster.cluster import Cluster

#: Node width assumed for a stated cluster whose engines are wider than every training group's
#: node (SkyRL's 235B examples: tensor-16 engines, 8-GPU nodes): the common 8-GPU machine.
ENGINE_NODE_WIDTH = 8
#: The SkyRL release read (PyPI ``skyrl-train`` 0.4.0, tag ``skyrl_train-v0.4.0``, commit 332c7cbc).
RELEASE = "0.4.0"


@dataclass(frozen=True)
class TrainingGroup:
    """One ``PPORayActorGroup`` (policy, ref or critic): ``num_nodes`` x ``num_gpus_per_node``
    ranks, as ``trainer.placement.<role>_num_nodes`` / ``_num_gpus_per_node`` say."""

    role: str
    num_nodes: int
    num_gpus_per_node: int

    @property
    def world_size(self) -> int:
        return self.num_nodes * self.num_gpus_per_node


@dataclass(frozen=True)
class SkyrlJob:
    """A SkyRL job as ``BasePPOExp`` and ``RayPPOTrainer.build_models`` see it.

    ``groups`` are the training groups SkyRL creates, in its order (policy, then ref when
    ``use_kl_loss`` or ``use_kl_in_reward``, then critic when ``trainer.critic.model.path`` is
    set); ``num_engines`` inference engines of ``tensor x pipeline x data`` GPUs each, started by
    SkyRL itself when ``run_engines_locally`` (else remote: no GPU of the cluster).
    """

    colocate_all: bool
    colocate_policy_ref: bool
    groups: tuple[TrainingGroup, ...]
    num_engines: int
    tensor_parallel: int
    pipeline_parallel: int
    data_parallel: int
    engines_local: bool
    #: The ``key=value`` overrides as given (empty for a YAML config), for the improved command.
    arguments: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    release: str = RELEASE

    @property
    def engine_gpus(self) -> int:
        """GPUs of one engine (``per_engine_gpu_count``, ray_wrapped_inference_engine.py:155)."""
        return self.tensor_parallel * self.pipeline_parallel * self.data_parallel

    @property
    def rollout_gpus(self) -> int:
        return self.num_engines * self.engine_gpus if self.engines_local else 0

    def group(self, role: str) -> TrainingGroup | None:
        return next((group for group in self.groups if group.role == role), None)

    def stated_cluster(self) -> Cluster:
        """SkyRL states no cluster: the smallest one its groups ask, nodes as wide as the widest
        group's per-node count or one engine (at most :data:`ENGINE_NODE_WIDTH`), as many as the
        GPUs asked need (every group apart, engines too; all on the policy's under colocate-all)."""
        width = max([group.num_gpus_per_node for group in self.groups] + [min(self.engine_gpus, ENGINE_NODE_WIDTH) if self.engines_local else 1])
        if self.colocate_all:
            total = self.groups[0].world_size
        else:
            shared = self.colocate_policy_ref and self.group("ref") is not None
            total = self.rollout_gpus + sum(group.world_size for group in self.groups if not (shared and group.role == "ref"))
        return Cluster(num_nodes=max(1, -(-total // width)), num_gpus_per_node=width)
