"""Run verl's own pool construction from 0.9 on (the v1 trainer's ``_init_resource_pool_mgr`` and, for
``separate_async``, ``LLMServerManager``'s standalone replicas with verl's base replica class) on a
config, with Ray and the models stubbed, and print the pools and the mapping as JSON. Usage:
``PYTHONPATH=<verl 0.9.0, 0.9.1 or main>:tests/verl_drivers python driver_main.py CONFIG [KEY=VALUE]...``.

With ``VERL_DRIVER_LANDING`` set to JSON ``{pool: [node of each placement group, in creation
order]}``, it also starts the reward model's and the teachers' replicas on those pools as verl's
managers do (``model_servers``) and prints each replica's worker group under ``servers``."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import ray.experimental.state.api  # noqa: F401  (before the stubs: Ray must see its optional packages missing)
import stubs

stubs.install()

import verl.single_controller.ray.base as base  # noqa: E402
import verl.workers.rollout.replica as replica  # noqa: E402
from model_servers import server_groups  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from verl.trainer.ppo.utils import need_critic, need_reward_model  # noqa: E402
from verl.trainer.ppo.v1.trainer_base import PPOTrainer  # noqa: E402
from verl.trainer.ppo.v1.trainer_separate_async import PPOTrainerSeparateAsync  # noqa: E402
from verl.workers.rollout.llm_server import LLMServerManager  # noqa: E402


class _Holder:
    config: Any
    resource_pool_manager: Any
    _enable_hybrid_replicas: bool


def standalone_pools(config: Any, trainer_gpus: int, hybrid_replicas: bool) -> dict[str, Any]:
    """The pools verl's standalone rollout replicas make, ranks counted after the hybrid ones
    (none without hybrid replicas: ``LLMServerManager.create_empty``)."""
    base.ResourcePoolManager._check_resource_available = lambda self: None
    replica.RayWorkerGroup = lambda **kwargs: stubs.Anything()
    replica.omega_conf_to_dataclass = lambda section: section  # the dataclass holds the same fields; Hydra is stubbed

    class Group:
        world_size = trainer_gpus
        workers = [None] * trainer_gpus

    class Replica(replica.RolloutReplica):  # verl's base replica: its sizing and its pool, no server
        async def launch_servers(self) -> None:
            return None

    class Manager(LLMServerManager):
        rollout_replica_class = Replica

    start = 0
    if hybrid_replicas:
        hybrid = Manager(config, worker_group=Group())
        asyncio.run(LLMServerManager._initialize_llm_servers(hybrid))
        start = len(hybrid.rollout_replicas)
    standalone = Manager(config, start_rank=start)
    asyncio.run(LLMServerManager._initialize_llm_servers(standalone))
    pools = [server.resource_pool for server in standalone.rollout_replicas]
    return {pool.name_prefix: {"process_on_nodes": list(pool.store), "max_colocate_count": pool.max_colocate_count} for pool in pools}


def hybrid_replicas(config: Any) -> bool:
    """What the release's separate_async trainer sets ``_enable_hybrid_replicas`` to before its
    ``_setup`` (other trainers leave it unset: True). 0.9.1 reads ``actor_rollout_ref.hybrid_engine``
    (``trainer_separate_async.py``: the class default ``_enable_hybrid_replicas = True``, line 53,
    and ``__init__``, line 82); 0.9.0's trainer has neither, and its base trainer always starts
    hybrid replicas (``trainer_base.py`` ``_setup``, line 351: ``LLMServerManager.create`` with the
    actor's worker group), so the key is ignored there."""
    if not hasattr(PPOTrainerSeparateAsync, "_enable_hybrid_replicas"):
        return True
    return bool(config.actor_rollout_ref.get("hybrid_engine", True))


def main() -> None:
    config = OmegaConf.merge(OmegaConf.load(sys.argv[1]), OmegaConf.from_dotlist(sys.argv[2:]))
    OmegaConf.resolve(config)
    holder = _Holder()
    holder.config = config
    separate = config.trainer.v1.trainer_mode == "separate_async"
    holder._enable_hybrid_replicas = not separate or hybrid_replicas(config)
    PPOTrainer._init_resource_pool_mgr(holder)
    manager = holder.resource_pool_manager
    landing = os.environ.get("VERL_DRIVER_LANDING")
    servers = {}
    if landing:
        base.ResourcePoolManager._check_resource_available = lambda self: None
        manager.create_resource_pool()
        servers = server_groups(config, manager, json.loads(landing))
    out = {
        "resource_pool_spec": dict(manager.resource_pool_spec),
        "mapping": {str(role): pool for role, pool in manager.mapping.items()},
        "max_colocate_count": manager.max_colocate_count,
        "critic": need_critic(config),
        "reward_model": bool(need_reward_model(config)),
        "servers": servers,
        "standalone": standalone_pools(config, sum(manager.resource_pool_spec["global_pool"]), holder._enable_hybrid_replicas) if separate else {},
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
