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
from omegaconf import OmegaConf  # noqa: E402
from trainer_run import recording_group, trainer_arguments  # noqa: E402

#: Role members as the trainer names their worker groups.
ROLE_NAMES = {"ActorRollout": "actor_rollout", "Critic": "critic", "RefPolicy": "ref", "RewardModel": "rm"}


def main() -> None:
    config = OmegaConf.merge(OmegaConf.load(sys.argv[1]), OmegaConf.from_dotlist(sys.argv[2:]))
    main_ppo.load_reward_manager = lambda *args, **kwargs: None
    captured = trainer_arguments(main_ppo, config)
    manager = captured["resource_pool_manager"]
    ray_trainer.RayPPOTrainer._validate_config = lambda self: None
    ray_trainer.RayPPOTrainer._create_dataloader = lambda self, *args, **kwargs: None
    ray_trainer.omega_conf_to_dataclass = lambda section, *args, **kwargs: section  # 0.6.1 on: the critic's dataclass; Hydra is stubbed
    ray_trainer.ResourcePoolManager._check_resource_available = lambda self: None
    groups: list[dict[str, Any]] = []
    Group = recording_group(groups)

    ray_trainer.RayPPOTrainer(
        config=config, tokenizer=None, role_worker_mapping=captured["role_worker_mapping"], resource_pool_manager=manager, ray_worker_group_cls=Group
    ).init_workers()
    mapping = {ROLE_NAMES[role.name]: pool for role, pool in manager.mapping.items()}
    print(json.dumps({"resource_pool_spec": manager.resource_pool_spec, "mapping": mapping, "groups": groups}))


if __name__ == "__main__":
    main()
