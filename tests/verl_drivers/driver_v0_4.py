"""Run verl 0.4.1's, 0.5.0's or 0.6.1's own driver (``TaskRunner.run``) and trainer (``RayPPOTrainer.init_workers``) on
a config, with Ray and the models stubbed, and print the pools, the mapping and the worker groups
it makes as JSON. Usage: ``PYTHONPATH=<verl 0.4.1>:tests/verl_drivers python driver_v0_4.py CONFIG [KEY=VALUE]...``."""

from __future__ import annotations

import json
import sys
from typing import Any

import stubs

stubs.install()

import verl.trainer.main_ppo as main_ppo  # noqa: E402
import verl.trainer.ppo.ray_trainer as ray_trainer  # noqa: E402
import verl.utils  # noqa: E402
import verl.utils.fs  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402

#: Role members as the trainer names their worker groups.
ROLE_NAMES = {"ActorRollout": "actor_rollout", "Critic": "critic", "RefPolicy": "ref", "RewardModel": "rm"}


class _Captured(Exception):
    pass


def main() -> None:
    config = OmegaConf.merge(OmegaConf.load(sys.argv[1]), OmegaConf.from_dotlist(sys.argv[2:]))
    captured: dict[str, Any] = {}

    def trainer(**kwargs: Any) -> None:
        captured.update(kwargs)
        raise _Captured

    main_ppo.RayPPOTrainer = trainer
    main_ppo.load_reward_manager = main_ppo.create_rl_dataset = main_ppo.create_rl_sampler = lambda *args, **kwargs: None
    main_ppo.validate_config = lambda **kwargs: None  # 0.6.1: batch sizes and the like, not pools
    verl.utils.fs.copy_to_local = lambda *args, **kwargs: "/nonexistent"
    verl.utils.hf_tokenizer = verl.utils.hf_processor = lambda *args, **kwargs: None
    try:
        main_ppo.TaskRunner().run(config)
    except _Captured:
        pass
    manager = captured["resource_pool_manager"]
    ray_trainer.RayPPOTrainer._validate_config = lambda self: None
    ray_trainer.RayPPOTrainer._create_dataloader = lambda self, *args, **kwargs: None
    ray_trainer.omega_conf_to_dataclass = lambda section, *args, **kwargs: section  # 0.6.1 on: the critic's dataclass; Hydra is stubbed
    ray_trainer.ResourcePoolManager._check_resource_available = lambda self: None
    groups: list[dict[str, Any]] = []

    class Group:
        def __init__(self, resource_pool: Any, ray_cls_with_init: Any, **kwargs: Any) -> None:
            self.pool = resource_pool

        def spawn(self, prefix_set: Any) -> dict[str, Any]:
            pool = self.pool
            groups.append({"pool": pool.name_prefix, "max_colocate_count": pool.max_colocate_count, "roles": sorted(prefix_set)})
            return {role: stubs.Anything() for role in prefix_set}

    ray_trainer.RayPPOTrainer(
        config=config, tokenizer=None, role_worker_mapping=captured["role_worker_mapping"], resource_pool_manager=manager, ray_worker_group_cls=Group
    ).init_workers()
    mapping = {ROLE_NAMES[role.name]: pool for role, pool in manager.mapping.items()}
    print(json.dumps({"resource_pool_spec": manager.resource_pool_spec, "mapping": mapping, "groups": groups}))


main()
