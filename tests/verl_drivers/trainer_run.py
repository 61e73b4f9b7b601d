"""What verl's ``TaskRunner.run`` hands its trainer, and a worker group that records what the
trainer's ``init_workers`` spawns: the two steps ``driver_v0_4.py`` (0.4.1 to 0.6.1) and
``driver_v0_7.py`` (0.7.1, 0.8.0) share, since those releases build pools the same way
(``verl/trainer/main_ppo.py``: ``TaskRunner.run`` makes the ``ResourcePoolManager`` and passes
it to ``RayPPOTrainer``; its ``init_workers`` spawns one group per pool)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from inert_modules import Anything


class _Captured(Exception):
    pass


def trainer_arguments(main_ppo: ModuleType, config: Any) -> dict[str, Any]:
    """The keyword arguments verl's ``TaskRunner.run`` gives ``RayPPOTrainer`` for ``config``
    (it is stopped there), with datasets, tokenizers, checkpoints and batch-size checks skipped:
    none of them decides a pool."""
    import verl.utils
    import verl.utils.fs

    captured: dict[str, Any] = {}

    def trainer(**kwargs: Any) -> None:
        captured.update(kwargs)
        raise _Captured

    main_ppo.RayPPOTrainer = trainer  # type: ignore[attr-defined]
    main_ppo.create_rl_dataset = main_ppo.create_rl_sampler = lambda *args, **kwargs: None  # type: ignore[attr-defined]
    main_ppo.validate_config = lambda **kwargs: None  # type: ignore[attr-defined]  # 0.6.1 on: batch sizes and the like, not pools
    verl.utils.fs.copy_to_local = lambda *args, **kwargs: "/nonexistent"
    verl.utils.hf_tokenizer = verl.utils.hf_processor = lambda *args, **kwargs: None
    try:
        main_ppo.TaskRunner().run(config)  # type: ignore[attr-defined]
    except _Captured:
        pass
    return captured


def recording_group(groups: list[dict[str, Any]]) -> type:
    """A worker group class that appends each spawn (its pool, the pool's colocation count and
    the roles fused in it) to ``groups`` and starts nothing."""

    class Group:
        def __init__(self, resource_pool: Any, ray_cls_with_init: Any, **kwargs: Any) -> None:
            self.pool = resource_pool

        def spawn(self, prefix_set: Any) -> dict[str, Any]:
            pool = self.pool
            groups.append({"pool": pool.name_prefix, "max_colocate_count": pool.max_colocate_count, "roles": sorted(prefix_set)})
            return {role: Anything() for role in prefix_set}

    return Group
