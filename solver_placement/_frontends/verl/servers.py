"""verl's model servers on slices of a pool: the reward model's replicas and each teacher's, one
worker group per replica with ranks from 0 (0.7.1's reward model, 0.8.0's reward model and
teachers, v0.9.0 and v0.9.1, and main at 1dda039b alike: the managers below are the same files
in each but for 0.7.1 sizing a reward replica by tensor parallel alone, ``v0_7``).

``RewardModelManager`` (``verl/experimental/reward_loop/reward_model.py``) cuts the reward model's
pool (``reward_pool``, else ``global_pool`` beside the trainer) with ``split_resource_pool`` into
``world_size // replica size`` slices in bundle order and starts each replica's worker group on
its own slice (``RolloutReplica.init_colocated``), named ``rollout_reward_colocate_<rank>``.
``MultiTeacherModelManager`` (``verl/experimental/teacher_loop/teacher_model.py``) cuts
``teacher_pool`` into one sub-pool per teacher, in ``distillation.teacher_models`` order, of
``num_replicas x per_replica_world_size`` GPUs, and each teacher cuts its sub-pool into replicas
named ``rollout_teacher_colocate_<rank>_<key>`` (``/`` in the key written ``_``). A lone teacher
(the ``teacher_model`` entry) is keyed ``default`` and fills the pool (``DistillationConfig``
sets its ``num_replicas``); with several, ``teacher_model`` is dropped.
"""

from __future__ import annotations

from collections.abc import Mapping

from solver_placement._errors import agreeing, cut, shown
from solver_placement._frontends.verl.keys import VerlKeys
from solver_placement._frontends.verl.pools import VerlPool
from solver_placement._frontends.verl.replicas import check_divides, replica_size
from solver_placement._limits import check

#: verl's names of the worker group of a reward model's and of a teacher's replica, before the rank.
REWARD_REPLICA, TEACHER_REPLICA = "rollout_reward_colocate_", "rollout_teacher_colocate_"
TEACHERS = "distillation.teacher_models"
#: The entry of ``teacher_models`` verl's composed config always holds: the lone teacher's, and
#: the key verl gives it (the suffix of its replicas' names).
LONE, LONE_KEY = "teacher_model", "default"


def idle_roles(mapping: Mapping[str, str], workers: Mapping[str, str]) -> frozenset[str]:
    """The roles of ``mapping`` verl never starts: neither a worker group of their own nor served
    by a replica (``rm`` by ``rollout_reward_colocate_<rank>``, ``teacher`` by its teachers')."""
    served = {"rm": any(name.startswith(REWARD_REPLICA) for name in workers), "teacher": any(name.startswith(TEACHER_REPLICA) for name in workers)}
    return frozenset(role for role in mapping if role not in workers and not served.get(role, False))


def reward_replicas(keys: VerlKeys, name: str, pool: VerlPool, section: str = "reward.reward_model.rollout") -> dict[str, tuple[int, int]]:
    """The reward model's replicas on ``pool``: worker group name -> (first GPU of the pool, count),
    sized by the engine keys under ``section`` (0.7 and 0.8 may read the legacy ``reward_model.rollout``)."""
    size = replica_size(keys, section, pool.process_on_nodes[0])
    check_divides(keys, name, pool.gpus, size, section)
    check("max_components", pool.gpus // size, section, "the number of reward model replicas (a component each)")
    return {f"{REWARD_REPLICA}{rank}": (rank * size, size) for rank in range(pool.gpus // size)}


def teacher_replicas(keys: VerlKeys, pool: VerlPool) -> dict[str, tuple[int, int]]:
    """Every teacher's replicas on ``teacher_pool``, teachers in their order, after verl's checks."""
    gpus_per_node = pool.process_on_nodes[0]
    stated = keys.names(TEACHERS)
    entries = stated if LONE in stated else [LONE, *stated]  # a composed config always holds the lone teacher's entry
    if len(entries) == 1:
        inference = f"{TEACHERS}.{LONE}.inference"
        size = replica_size(keys, inference, gpus_per_node)
        check_divides(keys, "teacher_pool", pool.gpus, size, inference)
        replicas = keys.count(f"{TEACHERS}.{LONE}.num_replicas", 0, allow_zero=True)
        if replicas and replicas != pool.gpus // size:
            raise keys.error(
                f"{TEACHERS}.{LONE}.num_replicas={replicas} is ignored by verl {keys.label}: a lone teacher fills teacher_pool, "
                f"so verl sets it to {pool.gpus // size} ({pool.gpus} GPUs / replicas of {size})"
            )
        teachers = [(LONE_KEY, pool.gpus // size, size)]
    else:
        keys.refuse(f"{TEACHERS}.{LONE}.model_path", f"with several {TEACHERS} verl drops the {LONE} entry; give it another name")
        check("max_components", len(entries) - 1, TEACHERS, "the number of teachers (a component each at least)")
        teachers = [_teacher(keys, entry, gpus_per_node) for entry in entries if entry != LONE]
    return _split(keys, teachers, pool.gpus, gpus_per_node)


def _teacher(keys: VerlKeys, entry: str, gpus_per_node: int) -> tuple[str, int, int]:
    """One of several teachers: its key, replicas and replica size."""
    where = f"{TEACHERS}.{entry}"
    if not keys.stated(f"{where}.key"):
        raise keys.error(f"{where}.key is not set; verl needs a key for each of several teachers (it routes examples by it)")
    key = keys.word(f"{where}.key", "")
    return key, keys.count(f"{where}.num_replicas", 0), replica_size(keys, f"{where}.inference", gpus_per_node)


def _split(keys: VerlKeys, teachers: list[tuple[str, int, int]], gpus: int, gpus_per_node: int) -> dict[str, tuple[int, int]]:
    """The teachers' replicas in bundle order, refused where verl raises: keys twice, sizes that
    do not sum to the pool, a replica across more nodes than its size needs; and keys that name
    the same replicas once ``/`` is written ``_`` (``x/y`` and ``x_y``), which would be one
    component here and one Ray name in verl, half of the replicas lost."""
    spelled: dict[str, str] = {}  # replica-name suffix -> the key it came from
    for key, _, _ in teachers:
        suffix = key.replace("/", "_")
        if suffix in spelled and spelled[suffix] == key:
            raise keys.error(f"{TEACHERS}: teacher key {shown(key)} is given twice; verl raises on a duplicate teacher key")
        if suffix in spelled:
            raise keys.error(
                f"{TEACHERS}: teacher keys {shown(spelled[suffix])} and {shown(key)} both name replicas {TEACHER_REPLICA}<rank>_{cut(suffix, 60)} "
                "(verl writes '/' in a key as '_'), so one teacher's replicas would take the other's names; rename one of them"
            )
        spelled[suffix] = key
    check("max_components", sum(replicas for _, replicas, _ in teachers), TEACHERS, "the number of teacher replicas (a component each)")
    total = sum(replicas * size for _, replicas, size in teachers)
    if total != gpus:
        raise keys.error(
            f"{TEACHERS}: the teachers take {total} GPUs (num_replicas x tensor x data x pipeline parallel each) but teacher_pool has {gpus} "
            "(distillation.nnodes x distillation.n_gpus_per_node); verl raises unless they are equal"
        )
    slices: dict[str, tuple[int, int]] = {}
    first = 0
    for key, replicas, size in teachers:
        for rank in range(replicas):
            span = (first + size - 1) // gpus_per_node - first // gpus_per_node + 1
            if span != -(-size // gpus_per_node):
                raise keys.error(
                    f"{TEACHERS}: teacher {key!r} replica {rank} takes GPUs {first} to {first + size - 1} of teacher_pool, across {span} "
                    f"{agreeing(span, 'node')} of {gpus_per_node}, where a replica of {size} needs {-(-size // gpus_per_node)}; verl raises (reorder the "
                    "teachers or change their num_replicas or parallel sizes so replicas align with nodes)"
                )
            slices[f"{TEACHER_REPLICA}{rank}_{key.replace('/', '_')}"] = (first, size)
            first += size
    return slices
