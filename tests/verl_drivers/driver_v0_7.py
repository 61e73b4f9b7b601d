"""Run verl 0.7.1's or 0.8.0's own driver (``migrate_legacy_reward_impl``, ``TaskRunner.run``) and
trainer (``RayPPOTrainer.init_workers``, up to its fused worker groups) on a config, with Ray and
the models stubbed, and print the pools, the mapping and the worker groups it makes as JSON.
Usage: ``PYTHONPATH=<verl>:tests/verl_drivers python driver_v0_7.py CONFIG [KEY=VALUE]...``.

With ``VERL_DRIVER_LANDING`` set (as for ``driver_main.py``), it also starts the reward model's
and the teachers' replicas on those pools as verl's managers do (``model_servers``)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import ray.experimental.state.api  # noqa: F401  (before the stubs: Ray must see its optional packages missing)
import stubs

stubs.install()

import verl.experimental.reward_loop as reward_loop  # noqa: E402
import verl.trainer.main_ppo as main_ppo  # noqa: E402
import verl.trainer.ppo.ray_trainer as ray_trainer  # noqa: E402
import verl.workers.engine_workers as engine_workers  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from trainer_run import recording_group, trainer_arguments  # noqa: E402
from verl.trainer.ppo.utils import need_critic  # noqa: E402


def main() -> None:
    config = OmegaConf.merge(OmegaConf.load(sys.argv[1]), OmegaConf.from_dotlist(sys.argv[2:]))
    config = reward_loop.migrate_legacy_reward_impl(config)  # what main() does before the TaskRunner
    captured = trainer_arguments(main_ppo, config)
    manager = captured["resource_pool_manager"]
    ray_trainer.RayPPOTrainer._validate_config = lambda self: None
    ray_trainer.RayPPOTrainer._create_dataloader = lambda self, *args, **kwargs: None
    ray_trainer.omega_conf_to_dataclass = lambda *args, **kwargs: stubs.Anything()  # the critic's dataclasses; Hydra is stubbed
    engine_workers.TrainingWorkerConfig = stubs.Anything  # 0.8.0 converts the critic's config into the engine worker's
    manager.__class__._check_resource_available = lambda self: None
    groups: list[dict[str, Any]] = []
    Group = recording_group(groups)

    class Stop(Exception):
        pass

    def stop(**kwargs: Any) -> None:
        raise Stop  # the reward loop comes after the fused groups: they are all made by now

    reward_loop.RewardLoopManager = stop
    trainer_object = ray_trainer.RayPPOTrainer(
        config=config, tokenizer=None, role_worker_mapping=captured["role_worker_mapping"], resource_pool_manager=manager, ray_worker_group_cls=Group
    )
    try:
        trainer_object.init_workers()
    except Stop:
        pass
    servers = {}
    landing = os.environ.get("VERL_DRIVER_LANDING")
    if landing:
        from model_servers import server_groups

        servers = server_groups(config, manager, json.loads(landing))
    out = {
        "resource_pool_spec": dict(manager.resource_pool_spec),
        "mapping": {str(role): pool for role, pool in manager.mapping.items()},
        "max_colocate_count": manager.resource_pool_dict[next(iter(manager.resource_pool_dict))].max_colocate_count,
        "critic": need_critic(config),
        "groups": groups,
        "servers": servers,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
