"""verl 0.4.1's and 0.5.0's pools: one ``global_pool`` for every role (``verl/trainer/main_ppo.py``
and ``verl/trainer/ppo/ray_trainer.py`` at tag v0.4.1, commit 8d9e350e; the same at tag v0.5.0,
commit 8fdc4d3f: ``TaskRunner.run`` lines 168-214, ``RayPPOTrainer.__init__`` lines 347-386 and
``init_workers`` lines 830-915, where 0.5.0 adds the GPG estimator and nothing that moves a pool).

The driver maps ``actor_rollout`` and ``critic`` always, ``rm`` when ``reward_model.enable``,
``ref`` when a KL term needs the reference policy; the trainer starts the critic only for the
GAE estimator, and fuses every started role of a pool into one worker per GPU
(``max_colocate_count=1``). 0.4.1 has no other pool: keys that later versions read to make one
are ignored by it, so they are refused here rather than placed as if they counted.
"""

from __future__ import annotations

from solver_placement._frontends.verl.keys import GPU_LIMIT, NODE_LIMIT, VerlKeys
from solver_placement._frontends.verl.pools import SizeKeys, VerlPools, divisors, uniform_pool
from solver_placement._solver.nearest_sizes import StatedSize

#: The estimators 0.4.1's trainer accepts (``AdvantageEstimator`` members it lists); only GAE uses a critic.
ESTIMATORS = ("gae", "grpo", "grpo_passk", "reinforce_plus_plus", "remax", "rloo", "opo", "reinforce_plus_plus_baseline")
#: What later releases of these rules accept besides (0.5.0's ``ray_trainer.py`` line 382).
NEWER_ESTIMATORS = {"0.5.0": ("gpg",)}
#: Worker strategies 0.4.1's driver knows.
STRATEGIES = ("fsdp", "fsdp2", "megatron")
#: Keys 0.4.1 never reads that a user may write expecting a placement change, and what 0.4.1 does
#: instead; those of later verl's config first, so a newer config read as 0.4.1 says so.
IGNORED = {
    "trainer.use_v1": "it has one trainer (RayPPOTrainer); the v1 trainer came with verl 0.9.0: state the verl_version you run",
    "reward.reward_model": "its reward model is configured under reward_model:; reward.reward_model came with verl 0.7.1: state the verl_version you run",
    "distillation.enabled": "it has no distillation (teacher_pool came with verl 0.8.0): state the verl_version you run",
    "critic.enable": "it starts a critic exactly when algorithm.adv_estimator is gae (critic.enable came with verl 0.6.1)",
    "reward_model.enable_resource_pool": "it runs the reward model on global_pool; a separate reward pool came with verl 0.6.1",
    "reward_model.nnodes": "it runs the reward model on global_pool, sized by trainer.nnodes",
    "reward_model.n_gpus_per_node": "it runs the reward model on global_pool, sized by trainer.n_gpus_per_node",
    "actor_rollout_ref.rollout.nnodes": "its rollout runs inside the actor's processes (hybrid engine), on global_pool",
    "actor_rollout_ref.rollout.n_gpus_per_node": "its rollout runs inside the actor's processes (hybrid engine), on global_pool",
    "actor_rollout_ref.rollout.pipeline_model_parallel_size": "its rollout is sized by tensor_model_parallel_size alone",
    "actor_rollout_ref.rollout.data_parallel_size": "its rollout is sized by tensor_model_parallel_size alone",
}
#: ``trainer.use_legacy_worker_impl`` values 0.5.0's driver accepts (it raises on others); it picks
#: the critic's worker class, not its pool.
WORKER_IMPLS = ("auto", "enable", "disable")
GLOBAL_KEYS = SizeKeys("trainer.nnodes", "trainer.n_gpus_per_node")


def pools_v0_4(keys: VerlKeys) -> VerlPools:
    """The pools, mapping and started roles verl 0.4.1 (or 0.5.0) builds from ``keys``."""
    for key, why in IGNORED.items():
        keys.refuse(key, why)
    _check_strategies(keys)
    if keys.version != "0.4.1":
        keys.word("trainer.use_legacy_worker_impl", "auto", WORKER_IMPLS)
    if not keys.flag("actor_rollout_ref.hybrid_engine", True):
        raise keys.error(f"actor_rollout_ref.hybrid_engine=false: verl {keys.version}'s trainer supports only the hybrid engine (it asserts so)")
    estimator = keys.word("algorithm.adv_estimator", "gae", ESTIMATORS + NEWER_ESTIMATORS.get(keys.version, ()))
    nnodes = keys.count("trainer.nnodes", 1, limit=NODE_LIMIT)
    gpus = keys.count("trainer.n_gpus_per_node", 8, limit=GPU_LIMIT)
    tensor = keys.count("actor_rollout_ref.rollout.tensor_model_parallel_size", 2)
    if (nnodes * gpus) % tensor:
        key = "actor_rollout_ref.rollout.tensor_model_parallel_size"
        raise keys.size_error(
            f"{key}={tensor} does not divide global_pool's {nnodes * gpus} GPUs "
            f"(trainer.nnodes={nnodes} x trainer.n_gpus_per_node={gpus}); verl asserts the rollout world size is a multiple of it",
            (StatedSize(key, tensor, "global_pool", divisors(nnodes * gpus)),),
        )
    mapping = {"actor_rollout": "global_pool", "critic": "global_pool"}
    if keys.flag("reward_model.enable", False):
        mapping["rm"] = "global_pool"
    if keys.flag("algorithm.use_kl_in_reward", False) or keys.flag("actor_rollout_ref.actor.use_kl_loss", False):
        mapping["ref"] = "global_pool"
    workers = {role: pool for role, pool in mapping.items() if role != "critic" or estimator == "gae"}
    pool = uniform_pool(nnodes, gpus, 1, GLOBAL_KEYS)
    return VerlPools(keys.version, {"global_pool": pool}, mapping, workers, pool.process_on_nodes, idle=frozenset(mapping) - frozenset(workers))


def _check_strategies(keys: VerlKeys) -> None:
    """The driver's pairing of worker strategies: critic and reward model default to the actor's."""
    actor = keys.word("actor_rollout_ref.actor.strategy", "fsdp", STRATEGIES)
    critic = keys.word("critic.strategy", actor, STRATEGIES)
    if (actor == "megatron") != (critic == "megatron"):
        raise keys.error(f"critic.strategy={critic} with actor_rollout_ref.actor.strategy={actor}: verl {keys.version} needs both megatron or both fsdp/fsdp2")
    if keys.flag("reward_model.enable", False):
        keys.word("reward_model.strategy", actor, STRATEGIES)
