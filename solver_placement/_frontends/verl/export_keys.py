"""The trainer keys a verl export writes (``export``): the Hydra overrides of verl's trainer config
that make its driver build the exported pools and start the exported roles, release by release,
and the config they make, from which the export reads verl's own role mapping back.

Only the keys that decide pools and roles are written, each one set (a key read only with a
switch on is written with the switch): the critic starts by the advantage estimator up to 0.5.0
(GAE or not: the only key those releases read for it), by ``critic.enable`` after; the reference
policy with the KL loss; the reward model under ``reward_model`` up to 0.6.1, under
``reward.reward_model`` from 0.7.1, where each replica's size is stated as tensor parallel; one
teacher as verl's lone ``teacher_model``, several each as an entry named and keyed by its key
(the replicas' names hold the key with ``/`` written ``_``, so that is the key written; each
entry's ``model_path`` is the user's to add).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from solver_placement._frontends.verl.export_names import FUSED_RM
from solver_placement._frontends.verl.resource_pools import ResourcePool
from solver_placement._frontends.verl.servers import LONE, LONE_KEY, TEACHERS
from solver_placement._frontends.verl.versions import VERSION_KEY


def config_of(overrides: Sequence[str], version: str) -> dict[str, Any]:
    """The trainer config the overrides make (the keys they leave out at verl's defaults): what
    the export's mapping is read from, as verl's driver would build it."""
    config: dict[str, Any] = {VERSION_KEY: version, "trainer": {}, "actor_rollout_ref": {}}
    for override in overrides:
        key, _, value = override.partition("=")
        *sections, leaf = key.split(".")
        node = config
        for section in sections:
            node = node.setdefault(section, {})
        node[leaf] = yaml.safe_load(value)
    return config


def trainer_overrides(
    pools: Mapping[str, ResourcePool], mapping: Mapping[str, str], replicas: Mapping[tuple[str, str], Sequence[int]], version: str
) -> tuple[str, ...]:
    """The trainer keys that decide verl's pools and roles, each set (the ones read only with a
    switch on): the critic starts by the estimator up to 0.5.0 (GAE), by ``critic.enable`` after;
    the reference policy with the KL loss; the reward model where each release reads it; from
    0.7.1 every ``rm`` and ``teacher`` is a replica (``export_names.check_roles``), so each has its size."""
    trainer = pools["global_pool"].process_on_nodes
    keys = [f"trainer.nnodes={len(trainer)}", f"trainer.n_gpus_per_node={trainer[0]}"]
    critic = "critic" in mapping
    if version in ("0.4.1", "0.5.0"):
        keys.append(f"algorithm.adv_estimator={'gae' if critic else 'grpo'}")
    else:
        keys.append(f"critic.enable={_flag(critic)}")
    keys += [f"actor_rollout_ref.actor.use_kl_loss={_flag('ref' in mapping or 'actor_rollout_ref' in mapping)}", "algorithm.use_kl_in_reward=false"]
    if version == "0.7.1":
        keys.append(f"trainer.use_legacy_worker_impl={'disable' if 'actor_rollout_ref' in mapping else 'auto'}")
    reward = mapping.get("rm")
    if version in FUSED_RM:
        keys.append(f"reward_model.enable={_flag(reward is not None)}")
        if version == "0.6.1":
            keys.append(f"reward_model.enable_resource_pool={_flag(reward == 'reward_pool')}")
            keys += _sizes("reward_model", pools.get("reward_pool"))
        return tuple(keys)
    keys.append(f"reward.reward_model.enable={_flag(reward is not None)}")
    if reward is not None:
        keys.append(f"reward.reward_model.enable_resource_pool={_flag(reward == 'reward_pool')}")
        keys += _sizes("reward.reward_model", pools.get("reward_pool"))
        keys += _replica_size("reward.reward_model.rollout", replicas["rm", ""][0], ("data_parallel_size", "pipeline_model_parallel_size"))
    if version == "0.7.1":
        return tuple(keys)
    teacher = pools.get("teacher_pool")
    keys.append(f"distillation.enabled={_flag(teacher is not None)}")
    keys += _sizes("distillation", teacher)
    teachers = {key: counts for (role, key), counts in replicas.items() if role == "teacher"}
    if list(teachers) == [LONE_KEY]:  # the lone teacher fills the pool; its inference section has no pipeline key to override
        return (*keys, *_replica_size(f"{TEACHERS}.{LONE}.inference", teachers[LONE_KEY][0], ("data_parallel_size",)))
    for key, counts in teachers.items():  # several: an entry each, keyed and sized, in the pool's order
        entry = f"{TEACHERS}.{key}"
        keys += [f"{entry}.key={key}", f"{entry}.num_replicas={len(counts)}", *_replica_size(f"{entry}.inference", counts[0], ("data_parallel_size",))]
    return tuple(keys)


def _replica_size(section: str, size: int, others: tuple[str, ...]) -> list[str]:
    """A model's replica size, stated as tensor parallel (the other sizes 1)."""
    return [f"{section}.tensor_model_parallel_size={size}", *(f"{section}.{key}=1" for key in others)]


def _sizes(section: str, pool: ResourcePool | None) -> list[str]:
    if pool is None:
        return []
    return [f"{section}.nnodes={len(pool.process_on_nodes)}", f"{section}.n_gpus_per_node={pool.process_on_nodes[0]}"]


def _flag(value: bool) -> str:
    return "true" if value else "false"
