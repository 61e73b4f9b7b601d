"""verl 0.9's pools, as its v1 trainer builds them (``verl/trainer/ppo/v1/trainer_base.py``
``_init_resource_pool_mgr``; the same at tag v0.9.0, commit 483b8a00, on main at 1dda039b, and
at v0.9.1 but for ``hybrid_engine=false``, below).

``global_pool`` holds the actor (``actor_rollout_ref`` when a KL term needs the reference policy
and no LoRA adapter stands in for it, else ``actor_rollout``) and the critic when
``critic.enable`` (or, when null, the GAE estimator) asks for one. The reward model runs on
``reward_pool`` when ``reward.reward_model.enable_resource_pool``, else on global_pool; the teacher
on ``teacher_pool`` when ``distillation.enabled``. ``separate_async`` adds a pool per standalone
rollout replica (``replicas``). Trainer pools get ``max_colocate_count=3``. The trainer fuses the
actor and critic into one worker per GPU; each replica of the reward model and of a teacher
starts a worker group of its own on a slice of its pool (``servers``; on ``global_pool`` too: one
more worker per GPU), and each standalone rollout replica one on its own pool.

Main's driver no longer migrates the old top-level ``reward_model.*`` keys (only verl's
fully-async entry point does), and reads a pool size only where a switch turns its pool on;
such keys are refused here, with the key that does count.

From 0.9.1 (``trainer_separate_async.py``'s ``_enable_hybrid_replicas``, lines 53 and 82),
``separate_async`` reads ``actor_rollout_ref.hybrid_engine=false``: rollout runs on the standalone
replicas alone, numbered from 0, and the trainer maps ``actor`` (and ``ref`` beside it when a KL
term needs the reference policy, ``trainer_base.py`` lines 801-809), fused as ever. 0.9.0, and
every other mode, ignore the key (0.9.0's ``_init_resource_pool_mgr``, ``trainer_base.py`` line
746, maps ``actor_rollout``/``actor_rollout_ref`` whatever it says, and its ``_setup``, line 351,
always starts the hybrid replicas), so false is refused there as every ignored key is. That is the
only placement difference between the v0.9.0 and v0.9.1 wheels: their ``_generated_ppo_trainer.yaml``
compose the same pool keys and defaults, and ``replica.py``'s sizing, ``llm_server.py``'s
``_initialize_llm_servers``, ``ResourcePoolManager`` (``single_controller/ray/base.py``) and the
reward and teacher managers build the same pools and slices (0.9.1 changes only their request
routing and the runtime environment of workers); ``test_verl_differential.py`` runs both.
"""

from __future__ import annotations

from solver_placement._frontends.verl.keys import GPU_LIMIT, NODE_LIMIT, VerlKeys
from solver_placement._frontends.verl.pools import SizeKeys, VerlPool, VerlPools, uniform_pool
from solver_placement._frontends.verl.replicas import check_divides, replica_size, standalone_pools
from solver_placement._frontends.verl.servers import idle_roles, reward_replicas, teacher_replicas
from solver_placement._frontends.verl.v0_6 import need_critic

#: ``ResourcePoolManager``'s ``max_colocate_count`` for the trainer's pools.
TRAINER_COLOCATE = 3
#: The roles the trainer fuses into one worker per GPU (``_setup``); the reward model, the
#: teacher and standalone rollout replicas start worker groups of their own.
TRAINER_ROLES = ("actor_rollout", "actor_rollout_ref", "actor", "ref", "critic")
#: The versions whose ``separate_async`` reads ``actor_rollout_ref.hybrid_engine=false``.
STANDALONE_ONLY = ("0.9.1", "main")
#: ``trainer.v1.trainer_mode`` values with a registered trainer.
MODES = ("sync", "colocate_async", "separate_async")
_LEGACY = "main_ppo no longer migrates the top-level reward_model: section; write it as reward.reward_model.{}"
IGNORED = {f"reward_model.{key}": _LEGACY.format(key) for key in ("enable", "enable_resource_pool", "nnodes", "n_gpus_per_node")}
ROLLOUT, REWARD = "actor_rollout_ref.rollout", "reward.reward_model"
GLOBAL_KEYS = SizeKeys("trainer.nnodes", "trainer.n_gpus_per_node")
REWARD_KEYS = SizeKeys(f"{REWARD}.nnodes", f"{REWARD}.n_gpus_per_node", f"{REWARD}.enable_resource_pool=false (the reward model then shares global_pool)")
TEACHER_KEYS = SizeKeys("distillation.nnodes", "distillation.n_gpus_per_node")


def pools_v0_9(keys: VerlKeys) -> VerlPools:
    """The pools, mapping and started roles verl 0.9 (and main) builds from ``keys``."""
    mode = _trainer_mode(keys)
    hybrid_replicas = _hybrid_replicas(keys, mode)
    nnodes = keys.count("trainer.nnodes", 1, limit=NODE_LIMIT)
    gpus = keys.count("trainer.n_gpus_per_node", 8, limit=GPU_LIMIT)
    pools: dict[str, VerlPool] = {"global_pool": uniform_pool(nnodes, gpus, TRAINER_COLOCATE, GLOBAL_KEYS)}
    mapping = dict.fromkeys(_actor_roles(keys, hybrid_replicas), "global_pool")
    if need_critic(keys):
        mapping["critic"] = "global_pool"
    workers = dict(mapping)
    reward = _reward_pool(keys, mode, nnodes)
    if reward is not None:
        pools["reward_pool"] = reward
    mapping["rm"] = "reward_pool" if reward is not None else "global_pool"
    slices: dict[str, tuple[int, int]] = {}
    if keys.flag(f"{REWARD}.enable", False):
        slices.update(reward_replicas(keys, mapping["rm"], pools[mapping["rm"]]))
        workers.update(dict.fromkeys(slices, mapping["rm"]))
    if distillation(keys):
        teacher_nodes = keys.count("distillation.nnodes", 0, limit=NODE_LIMIT)
        pools["teacher_pool"] = uniform_pool(teacher_nodes, keys.count("distillation.n_gpus_per_node", 8, limit=GPU_LIMIT), TRAINER_COLOCATE, TEACHER_KEYS)
        mapping["teacher"] = "teacher_pool"
        teachers = teacher_replicas(keys, pools["teacher_pool"])
        slices.update(teachers)
        workers.update(dict.fromkeys(teachers, "teacher_pool"))
    nodes = tuple(gpu for pool in pools.values() for gpu in pool.process_on_nodes)
    hybrid = replica_size(keys, ROLLOUT, keys.count(f"{ROLLOUT}.n_gpus_per_node", gpus, limit=GPU_LIMIT))
    if hybrid_replicas:
        check_divides(keys, "global_pool", nnodes * gpus, hybrid, ROLLOUT)
    if mode == "separate_async":
        standalone, rollout_nodes = standalone_pools(keys, nnodes * gpus // hybrid if hybrid_replicas else 0)
        pools.update(standalone)
        workers.update({name.replace("pool", "standalone"): name for name in standalone})
        nodes += rollout_nodes
    elif keys.count(f"{ROLLOUT}.nnodes", 0, allow_zero=True):
        keys.refuse(f"{ROLLOUT}.nnodes", "only trainer.v1.trainer_mode=separate_async starts rollout replicas on GPUs of their own")
    return VerlPools(keys.version, pools, mapping, workers, nodes, frozenset(workers) - frozenset(TRAINER_ROLES), slices, idle_roles(mapping, workers))


def _trainer_mode(keys: VerlKeys) -> str:
    """``trainer.v1.trainer_mode``, after refusing what main's driver would not read as written."""
    for key, why in IGNORED.items():
        keys.refuse(key, why)
    if not keys.flag("trainer.use_v1", True):
        raise keys.error("trainer.use_v1=false selects the deprecated legacy trainer (main_ppo_v0.py), whose pools solver-placement does not read")
    if keys.flag(f"{ROLLOUT}.disaggregation.enabled", False):
        raise keys.error(f"{ROLLOUT}.disaggregation.enabled=true (prefill/decode replicas) is not modelled by solver-placement")
    return keys.word("trainer.v1.trainer_mode", "sync", MODES)


def _hybrid_replicas(keys: VerlKeys, mode: str) -> bool:
    """Whether rollout replicas run inside the actor's workers (``actor_rollout_ref.hybrid_engine``),
    refusing false where this version's trainer does not read it."""
    if keys.flag("actor_rollout_ref.hybrid_engine", True):
        return True
    if mode == "separate_async" and keys.version in STANDALONE_ONLY:
        return False
    if mode != "separate_async":
        why = f"only trainer.v1.trainer_mode=separate_async reads it (from verl 0.9.1 on), and trainer_mode={mode} starts rollout replicas inside the actor's workers"
        fix = "or set trainer.v1.trainer_mode=separate_async (verl 0.9.1 or later) to roll out on standalone replicas alone"
    else:
        why = f"its separate_async trainer starts rollout replicas inside the actor's workers too (verl {STANDALONE_ONLY[0]} added reading the key)"
        fix = f"or run verl {STANDALONE_ONLY[0]} or later and state verl_version: {STANDALONE_ONLY[0]} to roll out on standalone replicas alone"
    label = keys.label if mode != "separate_async" else keys.version  # in separate_async only the releases before 0.9.1 ignore it
    raise keys.error(f"actor_rollout_ref.hybrid_engine=false is ignored by verl {label}: {why}; remove it (verl then builds the same pools), {fix}")


def _actor_roles(keys: VerlKeys, hybrid_replicas: bool) -> list[str]:
    """``actor_rollout_ref`` when the reference policy is needed and no LoRA adapter stands in for
    it, else ``actor_rollout``; without hybrid replicas ``actor``, then ``ref`` when needed."""
    lora = keys.count("actor_rollout_ref.model.lora.rank", 0, allow_zero=True) or keys.count("actor_rollout_ref.model.lora_rank", 0, allow_zero=True)
    ref_in_actor = lora > 0 or keys.stated("actor_rollout_ref.model.lora_adapter_path")
    reference = keys.flag("algorithm.use_kl_in_reward", False) or keys.flag("actor_rollout_ref.actor.use_kl_loss", False)
    if not hybrid_replicas:
        return ["actor", "ref"] if reference and not ref_in_actor else ["actor"]
    return ["actor_rollout_ref" if reference and not ref_in_actor else "actor_rollout"]


def _reward_pool(keys: VerlKeys, mode: str, nnodes: int) -> VerlPool | None:
    """``reward_pool`` when ``enable_resource_pool`` (else None: the reward model shares global_pool).
    verl makes the pool with the reward model off too: it counts against the cluster, ``rm`` is
    mapped to it, and no worker group ever asks for its GPUs."""
    enabled = keys.flag(f"{REWARD}.enable", False)
    if not keys.flag(f"{REWARD}.enable_resource_pool", False):
        if enabled and mode == "separate_async":
            raise keys.error(f"{REWARD}.enable_resource_pool=false: separate_async needs a standalone reward model (verl asserts it; set it to true)")
        if keys.count(f"{REWARD}.nnodes", 0, allow_zero=True):
            keys.refuse(f"{REWARD}.nnodes", f"with {REWARD}.enable_resource_pool=false verl overwrites it with trainer.nnodes={nnodes}")
        return None
    pool_nodes = keys.count(f"{REWARD}.nnodes", 0, allow_zero=True, limit=NODE_LIMIT)
    pool_gpus = keys.count(f"{REWARD}.n_gpus_per_node", 8, allow_zero=True, limit=GPU_LIMIT)
    if pool_nodes == 0 or pool_gpus == 0:
        raise keys.error(f"{REWARD}.enable_resource_pool=true needs {REWARD}.nnodes and {REWARD}.n_gpus_per_node above 0 (verl raises otherwise), got {pool_nodes} and {pool_gpus}")
    return uniform_pool(pool_nodes, pool_gpus, TRAINER_COLOCATE, REWARD_KEYS)


def distillation(keys: VerlKeys) -> bool:
    """Whether a teacher pool is made (0.8.0 and later); a teacher pool size without
    ``distillation.enabled`` is refused."""
    if keys.flag("distillation.enabled", False):
        if keys.count("distillation.nnodes", 0, allow_zero=True) == 0 or keys.count("distillation.n_gpus_per_node", 8, allow_zero=True) == 0:
            raise keys.error("distillation.enabled=true needs distillation.nnodes and distillation.n_gpus_per_node above 0 (verl raises otherwise)")
        return True
    if keys.count("distillation.nnodes", 0, allow_zero=True):
        keys.refuse("distillation.nnodes", "verl makes teacher_pool only when distillation.enabled=true")
    return False
