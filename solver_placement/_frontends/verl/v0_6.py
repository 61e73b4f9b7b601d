"""verl 0.6.1's pools: ``global_pool`` and, with ``reward_model.enable_resource_pool``, a
``reward_pool`` of its own (``verl/trainer/main_ppo.py`` and ``verl/trainer/ppo/ray_trainer.py``
at tag v0.6.1, commit d62da495).

The driver's ``TaskRunner`` maps ``actor_rollout`` and ``critic`` to global_pool always
(``init_resource_pool_mgr``, lines 176-199), ``rm`` when ``reward_model.enable``, to reward_pool
when ``enable_resource_pool`` else to global_pool (``add_reward_model_worker``, lines 201-225), and
``ref`` when a KL term needs the reference policy (``add_ref_policy_worker``, lines 227-233). It
makes reward_pool whenever ``enable_resource_pool`` is true, even with the reward model off, and
the trainer then fails building a worker group of no roles there (refused here). The trainer
starts the critic when ``critic.enable`` says so, else for the GAE estimator (``need_critic`` in
``verl/trainer/ppo/utils.py``, lines 85-96), every other mapped role always (the reference policy
too with a LoRA adapter: it is then never initialised, but spawned), and fuses the started roles
of each pool into one worker per GPU (``init_workers``, lines 682-745; ``ResourcePoolManager``
gives every pool ``max_colocate_count=1``, line 88).
"""

from __future__ import annotations

from solver_placement._frontends.verl.keys import GPU_LIMIT, NODE_LIMIT, VerlKeys
from solver_placement._frontends.verl.pools import SizeKeys, VerlPool, VerlPools, divisors, uniform_pool
from solver_placement._solver.nearest_sizes import StatedSize

#: Worker strategies 0.6.1's driver knows for the actor, the critic and the reward model.
STRATEGIES = ("fsdp", "fsdp2", "megatron")
#: ``trainer.use_legacy_worker_impl`` values the driver accepts (it raises on others).
WORKER_IMPLS = ("auto", "enable", "disable")
#: Keys 0.6.1 never reads that a user may write expecting a placement change.
IGNORED = {
    "trainer.use_v1": "it has one trainer (RayPPOTrainer); the v1 trainer came with verl 0.9.0: state the verl_version you run",
    "reward.reward_model": "its reward model is configured under reward_model:; reward.reward_model came with verl 0.7.1: state the verl_version you run",
    "distillation.enabled": "it has no distillation (teacher_pool came with verl 0.8.0): state the verl_version you run",
    "actor_rollout_ref.rollout.nnodes": "its rollout runs inside the actor's processes (hybrid engine), on global_pool",
}
GLOBAL_KEYS = SizeKeys("trainer.nnodes", "trainer.n_gpus_per_node")
REWARD = "reward_model"
REWARD_KEYS = SizeKeys(f"{REWARD}.nnodes", f"{REWARD}.n_gpus_per_node", f"{REWARD}.enable_resource_pool=false (the reward model then shares global_pool)")


def pools_v0_6(keys: VerlKeys) -> VerlPools:
    """The pools, mapping and started roles verl 0.6.1 builds from ``keys``."""
    for key, why in IGNORED.items():
        keys.refuse(key, why)
    _check_workers(keys)
    if not keys.flag("actor_rollout_ref.hybrid_engine", True):
        raise keys.error("actor_rollout_ref.hybrid_engine=false: verl 0.6.1's trainer supports only the hybrid engine (it asserts so)")
    nnodes = keys.count("trainer.nnodes", 1, limit=NODE_LIMIT)
    gpus = keys.count("trainer.n_gpus_per_node", 8, limit=GPU_LIMIT)
    _check_rollout_divides(keys, nnodes * gpus)
    pools: dict[str, VerlPool] = {"global_pool": uniform_pool(nnodes, gpus, 1, GLOBAL_KEYS)}
    if keys.flag(f"{REWARD}.enable_resource_pool", False):
        pool_nodes = keys.count(f"{REWARD}.nnodes", 0, allow_zero=True, limit=NODE_LIMIT)
        pool_gpus = keys.count(f"{REWARD}.n_gpus_per_node", 0, allow_zero=True, limit=GPU_LIMIT)
        if pool_nodes == 0 or pool_gpus == 0:
            raise keys.error(
                f"{REWARD}.enable_resource_pool=true needs {REWARD}.nnodes and {REWARD}.n_gpus_per_node above 0 (verl raises otherwise), "
                f"got {pool_nodes} and {pool_gpus}"
            )
        if not keys.flag(f"{REWARD}.enable", False):
            raise keys.error(
                f"{REWARD}.enable_resource_pool=true with {REWARD}.enable=false: verl 0.6.1 makes reward_pool and then fails at start, "
                f"building a worker group of no roles on it (ray_trainer.py init_workers, lines 679 and 739-740: IndexError); "
                f"set {REWARD}.enable_resource_pool=false, or {REWARD}.enable=true"
            )
        pools["reward_pool"] = uniform_pool(pool_nodes, pool_gpus, 1, REWARD_KEYS)
    mapping = {"actor_rollout": "global_pool", "critic": "global_pool"}
    if keys.flag(f"{REWARD}.enable", False):
        mapping["rm"] = "reward_pool" if "reward_pool" in pools else "global_pool"
    if keys.flag("algorithm.use_kl_in_reward", False) or keys.flag("actor_rollout_ref.actor.use_kl_loss", False):
        mapping["ref"] = "global_pool"
    workers = {role: pool for role, pool in mapping.items() if role != "critic" or need_critic(keys)}
    nodes = tuple(gpu for pool in pools.values() for gpu in pool.process_on_nodes)
    return VerlPools(keys.version, pools, mapping, workers, nodes, idle=frozenset(mapping) - frozenset(workers))


def need_critic(keys: VerlKeys) -> bool:
    """``critic.enable`` when stated, else whether the estimator is GAE (verl's ``need_critic``)."""
    enable = keys.optional_flag("critic.enable")
    return enable if enable is not None else keys.word("algorithm.adv_estimator", "gae") == "gae"


def _check_workers(keys: VerlKeys) -> None:
    """The strategies the driver picks worker classes by (it raises ``NotImplementedError`` on
    others), and ``use_legacy_worker_impl``, which it reads for the critic and the reward model."""
    actor = keys.word("actor_rollout_ref.actor.strategy", "fsdp", STRATEGIES)
    keys.word("critic.strategy", actor, STRATEGIES)
    keys.word("trainer.use_legacy_worker_impl", "auto", WORKER_IMPLS)
    if keys.flag(f"{REWARD}.enable", False):
        keys.word(f"{REWARD}.strategy", actor, STRATEGIES)


def _check_rollout_divides(keys: VerlKeys, gpus: int) -> None:
    """The actor's workers split global_pool into rollout groups of ``tensor x data x pipeline``
    parallel GPUs and assert they fill it (``verl/workers/fsdp_workers.py``, lines 588-592)."""
    rollout = "actor_rollout_ref.rollout"
    sizes = {part: keys.count(f"{rollout}.{part}", 2 if part.startswith("tensor") else 1) for part in ("tensor_model_parallel_size", "data_parallel_size", "pipeline_model_parallel_size")}
    size = sizes["tensor_model_parallel_size"] * sizes["data_parallel_size"] * sizes["pipeline_model_parallel_size"]
    if gpus % size:
        key, tensor = f"{rollout}.tensor_model_parallel_size", sizes["tensor_model_parallel_size"]
        others = size // tensor
        raise keys.size_error(
            f"{rollout}.tensor_model_parallel_size={sizes['tensor_model_parallel_size']} (x data_parallel_size={sizes['data_parallel_size']} x "
            f"pipeline_model_parallel_size={sizes['pipeline_model_parallel_size']}: {size} GPUs) does not divide global_pool's {gpus} GPUs "
            f"(trainer.nnodes x trainer.n_gpus_per_node); verl asserts the rollout world size is a multiple of it",
            (StatedSize(key, tensor, "global_pool", divisors(gpus, others)),),
        )
