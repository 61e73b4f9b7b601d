"""An OpenRLHF PPO job as its placement code sees it: the groups it starts and how they share.

Each model group (``actor``, ``ref``, ``critic``, ``reward``) is a ``RayActorGroup`` of
``num_nodes * num_gpus_per_node`` ranks (``openrlhf/trainer/ray/launcher.py``,
``_initiate_actors``); ``vllm`` is ``num_engines`` engines of ``tensor_parallel_size`` GPUs each
(``create_vllm_engines`` in ``vllm_engine.py``). The role names are the flag prefixes of 0.11.
"""

from __future__ import annotations

from dataclasses import dataclass

from solver_placement._cluster.cluster import Cluster
from solver_placement._frontends.openrlhf.releases import Release

#: The roles in the order ``train_ppo_ray.train`` creates them (vLLM engines before the models).
ROLES = ("vllm", "actor", "ref", "critic", "reward")


@dataclass(frozen=True)
class Group:
    """One model group: ``num_nodes * num_gpus_per_node`` ranks, one per bundle or GPU.

    ``loaded`` is False for a group OpenRLHF starts but never gives a model (0.10 and 0.11 start
    the reward group whenever no remote reward is named, and load it only if a reward model is).
    """

    role: str
    num_nodes: int
    num_gpus_per_node: int
    loaded: bool = True

    @property
    def world_size(self) -> int:
        return self.num_nodes * self.num_gpus_per_node


@dataclass(frozen=True)
class Engines:
    """The vLLM engines: ``count`` engines of ``tensor_parallel_size`` GPUs each."""

    count: int
    tensor_parallel_size: int

    @property
    def gpus(self) -> int:
        return self.count * self.tensor_parallel_size


@dataclass(frozen=True)
class OpenRLHFJob:
    """What ``train_ppo_ray`` places, read from its flags with one release's rules.

    ``groups`` are the model groups it starts, in creation order; ``engines`` None when vLLM is
    off. ``colocate_actor_ref``/``colocate_all``/``colocate_critic_reward``/``async_enable`` are
    the switches as OpenRLHF uses them; ``noset_visible_devices`` whether the workers' environment
    sets ``RAY_EXPERIMENTAL_NOSET_*_VISIBLE_DEVICES`` (Ray then leaves ``CUDA_VISIBLE_DEVICES``
    alone). ``arguments`` are the flags as given (fixes are written against them).
    """

    release: str
    rules: Release
    groups: tuple[Group, ...]
    engines: Engines | None
    colocate_actor_ref: bool
    colocate_all: bool
    colocate_critic_reward: bool
    async_enable: bool
    noset_visible_devices: bool
    arguments: tuple[str, ...]

    def group(self, role: str) -> Group | None:
        return next((group for group in self.groups if group.role == role), None)

    @property
    def hybrid_engines(self) -> bool:
        """vLLM shares the actor's placement group (``colocate_all`` without async training)."""
        return self.engines is not None and self.colocate_all and not self.async_enable

    @property
    def gpus_asked(self) -> int:
        """The GPUs the job's placement groups and lone ranks hold together (shared groups once)."""
        actor = self.groups[0].world_size
        shared = self.colocate_actor_ref or self.colocate_all
        total = actor + (self.engines.gpus if self.engines is not None and not self.hybrid_engines else 0)
        ref, critic, reward = self.group("ref"), self.group("critic"), self.group("reward")
        total += ref.world_size if ref is not None and not shared else 0
        if critic is not None and self.colocate_critic_reward:
            return total + critic.world_size
        if self.colocate_all:
            return total
        return total + sum(group.world_size for group in (critic, reward) if group is not None)

    def stated_cluster(self) -> Cluster:
        """The smallest cluster of the nodes the flags describe that holds every group: nodes of
        the largest ``num_gpus_per_node``, as many as the largest ``num_nodes`` or as the GPUs asked
        need (OpenRLHF checks neither: Ray's placement groups decide)."""
        gpus = max(group.num_gpus_per_node for group in self.groups)
        nodes = max(max(group.num_nodes for group in self.groups), -(-self.gpus_asked // gpus))
        return Cluster(num_nodes=nodes, num_gpus_per_node=gpus)
