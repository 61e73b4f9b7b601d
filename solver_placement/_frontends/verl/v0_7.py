"""verl 0.7.1's and 0.8.0's pools: the trainer's ``global_pool``, ``reward_pool`` for a reward model
on GPUs of its own, and from 0.8.0 ``teacher_pool`` (``verl/trainer/main_ppo.py`` and
``verl/trainer/ppo/ray_trainer.py`` of the PyPI wheels verl 0.7.1 and 0.8.0).

Before anything, ``main`` migrates the old top-level reward keys (``migrate_legacy_reward_impl``,
``verl/experimental/reward_loop/reward_loop.py`` lines 38-89): a non-null
``reward_model.{enable,enable_resource_pool,nnodes,n_gpus_per_node}`` or ``reward_model.rollout.*``
overrides its ``reward.reward_model`` twin, so here the key read is the one the user wrote.

``TaskRunner`` maps the actor to global_pool: under 0.7.1's legacy workers
(``trainer.use_legacy_worker_impl`` auto or enable) as ``actor_rollout``, with ``ref`` beside it
when a KL term needs the reference policy; under the model-engine workers (0.7.1's ``disable``,
0.8.0 always) as ``actor_rollout_ref`` when the reference policy is needed and no LoRA adapter
stands in for it, else ``actor_rollout`` (0.7.1 lines 123-178, 0.8.0 lines 126-146). ``critic``
is mapped always (0.7.1 line 216, 0.8.0 line 156) and started when ``need_critic`` says so;
``rm`` is mapped when ``reward.reward_model.enable``, to reward_pool when
``enable_resource_pool`` (which makes the pool even with the reward model off, counted against
the cluster and never asked for GPUs) else to global_pool (0.7.1 lines 218-253, 0.8.0 lines
158-203); 0.8.0 maps ``teacher`` to teacher_pool when ``distillation.enabled`` (lines 178-186,
205-212). Every pool gets ``max_colocate_count=3`` (``ResourcePoolManager`` in
``verl/single_controller/ray/base.py``). The trainer fuses actor, reference and critic into one
worker per GPU; the reward model and the teachers serve in replicas, each a worker group of its
own on a slice of its pool (``servers``): 0.7.1's ``RewardModelManager`` cuts the pool by
``tensor_model_parallel_size`` alone (``reward_model.py`` line 51), 0.8.0's by
``tensor x data x pipeline`` as 0.9 does. No release of these has standalone rollout in
``main_ppo``: ``actor_rollout_ref.rollout.nnodes`` is read only by verl's fully-async recipe.
"""

from __future__ import annotations

from solver_placement._frontends.verl.keys import GPU_LIMIT, NODE_LIMIT, VerlKeys
from solver_placement._frontends.verl.pools import SizeKeys, VerlPool, VerlPools, uniform_pool
from solver_placement._frontends.verl.replicas import check_divides, replica_size
from solver_placement._frontends.verl.servers import idle_roles, reward_replicas, teacher_replicas
from solver_placement._frontends.verl.v0_6 import need_critic
from solver_placement._frontends.verl.v0_9 import distillation

#: ``ResourcePoolManager``'s ``max_colocate_count`` for every pool.
TRAINER_COLOCATE = 3
#: The roles the trainer fuses into one worker per GPU.
TRAINER_ROLES = ("actor_rollout", "actor_rollout_ref", "ref", "critic")
#: ``trainer.use_legacy_worker_impl`` values 0.7.1's driver accepts (0.8.0 has no such key).
WORKER_IMPLS = ("auto", "enable", "disable")
#: Actor strategies 0.7.1's legacy workers take (veomni and torchtitan need ``disable``).
LEGACY_STRATEGIES = ("fsdp", "fsdp2", "megatron")
ROLLOUT, REWARD, LEGACY = "actor_rollout_ref.rollout", "reward.reward_model", "reward_model"
IGNORED = {
    "trainer.use_v1": "it has one trainer (RayPPOTrainer); the v1 trainer came with verl 0.9.0: state the verl_version you run",
    f"{ROLLOUT}.nnodes": "main_ppo's rollout runs inside the actor's processes on global_pool; only verl's fully-async recipe reads it",
}
GLOBAL_KEYS = SizeKeys("trainer.nnodes", "trainer.n_gpus_per_node")
TEACHER_KEYS = SizeKeys("distillation.nnodes", "distillation.n_gpus_per_node")


def pools_v0_7(keys: VerlKeys) -> VerlPools:
    """The pools, mapping and started roles verl 0.7.1 or 0.8.0 builds from ``keys``."""
    for key, why in IGNORED.items():
        if key != f"{ROLLOUT}.nnodes" or keys.count(key, 0, allow_zero=True):
            keys.refuse(key, why)
    if keys.version == "0.7.1" and keys.flag("distillation.enabled", False):
        keys.refuse("distillation.enabled", "it has no distillation (teacher_pool came with verl 0.8.0): state the verl_version you run")
    if not keys.flag("actor_rollout_ref.hybrid_engine", True):
        raise keys.error(f"actor_rollout_ref.hybrid_engine=false: verl {keys.version}'s trainer supports only the hybrid engine (it asserts so)")
    nnodes = keys.count("trainer.nnodes", 1, limit=NODE_LIMIT)
    gpus = keys.count("trainer.n_gpus_per_node", 8, limit=GPU_LIMIT)
    check_divides(keys, "global_pool", nnodes * gpus, replica_size(keys, ROLLOUT, gpus), ROLLOUT)
    pools: dict[str, VerlPool] = {"global_pool": uniform_pool(nnodes, gpus, TRAINER_COLOCATE, GLOBAL_KEYS)}
    mapping = dict.fromkeys(_actor_roles(keys), "global_pool")
    mapping["critic"] = "global_pool"
    workers = {role: pool for role, pool in mapping.items() if role != "critic" or need_critic(keys)}
    reward = _reward_pool(keys, nnodes)
    if reward is not None:
        pools["reward_pool"] = reward
    slices: dict[str, tuple[int, int]] = {}
    if keys.flag(_reward_key(keys, "enable"), False):
        mapping["rm"] = "reward_pool" if reward is not None else "global_pool"
        slices.update(_reward_replicas(keys, mapping["rm"], pools[mapping["rm"]]))
        workers.update(dict.fromkeys(slices, mapping["rm"]))
    if keys.version != "0.7.1" and distillation(keys):
        pools["teacher_pool"] = uniform_pool(
            keys.count("distillation.nnodes", 0, limit=NODE_LIMIT), keys.count("distillation.n_gpus_per_node", 8, limit=GPU_LIMIT), TRAINER_COLOCATE, TEACHER_KEYS
        )
        mapping["teacher"] = "teacher_pool"
        teachers = teacher_replicas(keys, pools["teacher_pool"])
        slices.update(teachers)
        workers.update(dict.fromkeys(teachers, "teacher_pool"))
    nodes = tuple(gpu for pool in pools.values() for gpu in pool.process_on_nodes)
    return VerlPools(keys.version, pools, mapping, workers, nodes, frozenset(workers) - frozenset(TRAINER_ROLES), slices, idle_roles(mapping, workers))


def _actor_roles(keys: VerlKeys) -> list[str]:
    """The actor's roles by the workers the driver picks (module docstring)."""
    reference = keys.flag("algorithm.use_kl_in_reward", False) or keys.flag("actor_rollout_ref.actor.use_kl_loss", False)
    if keys.version == "0.7.1" and keys.word("trainer.use_legacy_worker_impl", "auto", WORKER_IMPLS) != "disable":
        strategy = keys.word("actor_rollout_ref.actor.strategy", "fsdp")
        if strategy not in LEGACY_STRATEGIES:
            raise keys.error(f"actor_rollout_ref.actor.strategy={strategy} needs trainer.use_legacy_worker_impl=disable in verl 0.7.1 (its legacy workers raise otherwise)")
        return ["actor_rollout", "ref"] if reference else ["actor_rollout"]
    lora = keys.count("actor_rollout_ref.model.lora.rank", 0, allow_zero=True) or keys.count("actor_rollout_ref.model.lora_rank", 0, allow_zero=True)
    ref_in_actor = lora > 0 or keys.stated("actor_rollout_ref.model.lora_adapter_path")
    return ["actor_rollout_ref" if reference and not ref_in_actor else "actor_rollout"]


def _reward_key(keys: VerlKeys, name: str) -> str:
    """The key verl reads for ``reward.reward_model.<name>`` after its migration: the legacy
    ``reward_model.<name>`` when the user set it (non-null), else the new one."""
    legacy = f"{LEGACY}.{name}"
    return legacy if keys.stated(legacy) else f"{REWARD}.{name}"


def _reward_pool(keys: VerlKeys, nnodes: int) -> VerlPool | None:
    """``reward_pool`` when ``enable_resource_pool`` (with the reward model on or off), else None."""
    switch = _reward_key(keys, "enable_resource_pool")
    nodes_key, gpus_key = _reward_key(keys, "nnodes"), _reward_key(keys, "n_gpus_per_node")
    if not keys.flag(switch, False):
        if keys.count(nodes_key, 0, allow_zero=True):
            keys.refuse(nodes_key, f"with {switch}=false verl overwrites it with trainer.nnodes={nnodes}")
        return None
    pool_nodes = keys.count(nodes_key, 0, allow_zero=True, limit=NODE_LIMIT)
    pool_gpus = keys.count(gpus_key, 8, allow_zero=True, limit=GPU_LIMIT)
    if pool_nodes == 0 or pool_gpus == 0:
        raise keys.error(f"{switch}=true needs {nodes_key} and {gpus_key} above 0 (verl raises otherwise), got {pool_nodes} and {pool_gpus}")
    return uniform_pool(pool_nodes, pool_gpus, TRAINER_COLOCATE, SizeKeys(nodes_key, gpus_key, f"{switch}=false (the reward model then shares global_pool)"))


def _reward_replicas(keys: VerlKeys, name: str, pool: VerlPool) -> dict[str, tuple[int, int]]:
    """The reward model's replicas; 0.7.1 counts them by tensor parallel alone, so a replica of
    more GPUs (data or pipeline parallel) would not match its slice."""
    section = f"{LEGACY}.rollout" if any(keys.stated(f"{LEGACY}.rollout.{part}") for part in ("tensor_model_parallel_size", "data_parallel_size", "pipeline_model_parallel_size")) else f"{REWARD}.rollout"
    if keys.version == "0.7.1":
        for part in ("data_parallel_size", "pipeline_model_parallel_size"):
            value = keys.count(f"{section}.{part}", 1)
            if value != 1:
                raise keys.error(
                    f"{section}.{part}={value}: verl 0.7.1's RewardModelManager cuts {name} into replicas of tensor_model_parallel_size GPUs "
                    f"while each replica asks for tensor x data x pipeline; set {section}.{part}=1"
                )
    return reward_replicas(keys, name, pool, section)
