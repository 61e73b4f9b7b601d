"""verl's reward model and teacher replicas (0.7.1 has no teachers; 0.8.0 and 0.9.1 both), started by verl's own managers on a manager's
pools, with Ray's placement groups faked where the test says Ray lands them: which bundles each
replica's worker group takes, rank by rank (``driver_main.py`` prints them; import after
``stubs.install()``).

verl's real ``split_resource_pool``, ``RayResourcePool.get_placement_groups`` (with its sort by
node address), ``RayWorkerGroup._init_with_subresource_pool`` and the managers'
``_initialize_llm_servers`` run; only Ray (placement groups, nodes, actors) and the models are
stand-ins. A fake placement group of pool ``p`` created ``i``-th sits on node ``landing[p][i]``,
its node's address sorting as the node's rank does.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import itertools
import typing
from typing import Any

import ray
import verl.experimental.reward_loop.reward_model as reward_model
import verl.single_controller.ray.base as base
import verl.workers.rollout.replica as replica
from omegaconf import OmegaConf

_ids = itertools.count()


class _Group:
    """A placement group as verl sees it: an id, its bundle count, its pool and creation index."""

    def __init__(self, bundles: list[Any], name: str) -> None:
        self.id = next(_ids)
        self.bundle_count = len(bundles)
        self.pool, index = name.split("verl_group_")[0], name.rsplit(":", 1)[1]
        self.index = int(index)

    def ready(self) -> None:
        return None


def fake_ray(landing: dict[str, list[int]]) -> None:
    """Placement groups that land on ``landing``'s nodes; ``ray.nodes`` lists them."""
    groups: dict[int, _Group] = {}

    def create(bundles: list[Any], strategy: str, name: str, lifetime: Any = None) -> _Group:
        group = _Group(bundles, name)
        groups[group.id] = group
        return group

    def node_of(group_id: int) -> str:
        group = groups[group_id]
        return f"node-{landing[group.pool][group.index]:06d}"

    base.placement_group = create
    ray.get = lambda refs, **kwargs: refs
    ray.nodes = lambda: [{"NodeID": f"node-{n:06d}", "NodeManagerAddress": f"10.{n:06d}"} for pool in landing.values() for n in pool]
    ray._private.state.state.placement_group_table = lambda group_id: {"bundles_to_node_id": [node_of(group_id)]}


class _Recorded(base.RayWorkerGroup):
    """verl's worker group on a (sub) pool, recording each worker's placement group and bundle."""

    started: dict[str, dict[str, Any]] = {}

    def __init__(self, **kwargs: Any) -> None:
        self.ranks: list[list[Any]] = []
        super().__init__(**kwargs)
        _Recorded.started[self.name_prefix] = {"pool": self.ranks[0][0] if self.ranks else None, "workers": [r[1:] for r in self.ranks]}

    def _get_master_addr_port(self, *args: Any, **kwargs: Any) -> None:
        return None

    def _create_worker(self, rank: int, pg_idx: int, pg: Any, local_rank: int, **kwargs: Any) -> None:
        assert rank == len(self.ranks)
        self.ranks.append([pg.pool, pg.index, local_rank])


class _Replica(replica.RolloutReplica):  # verl's base replica: its sizing, names and worker group, no server
    async def launch_servers(self) -> None:
        return None

    def get_ray_class_with_init_args(self) -> Any:
        return None


def server_groups(config: Any, manager: Any, landing: dict[str, list[int]]) -> dict[str, dict[str, Any]]:
    """The reward model's and the teachers' worker groups: pool, and (group index, bundle) per rank."""
    fake_ray(landing)
    replica.RayWorkerGroup = _Recorded
    replica.omega_conf_to_dataclass = with_defaults  # Hydra is stubbed
    reward_model.get_rollout_replica_class = lambda name, *args: _Replica
    reward_model.HFModelConfig = _model
    manager.resource_pool_dict["global_pool"].get_placement_groups()  # the trainer's worker group asks first (its _setup, step 3)
    if config.reward.reward_model.enable:
        rm = object.__new__(reward_model.RewardModelManager)
        rm.config, rm.resource_pool = config.reward.reward_model, manager.resource_pool_dict[_pool_of(manager, "rm")]
        rm._run_all = lambda tasks: asyncio.run(_gather(tasks))
        rm._initialize_llm_servers()
    if config.get("distillation") is not None and config.distillation.enabled:  # 0.8.0 on
        import verl.experimental.teacher_loop.teacher_model as teacher_model
        import verl.workers.config.distillation as distillation

        teacher_model.get_rollout_replica_class = lambda name, *args: _Replica
        teacher_model.HFModelConfig = _model
        teacher_model.TeacherModelManager._initialize_load_balancer_handle = lambda self: setattr(self, "load_balancer_handle", None)
        distillation.omega_conf_to_dataclass = to_dataclass
        teachers = object.__new__(teacher_model.MultiTeacherModelManager)
        teachers.config, teachers.resource_pool = config, manager.resource_pool_dict["teacher_pool"]
        teachers.distillation_config = to_dataclass(config.distillation)
        teachers.teacher_model_managers, teachers.server_addresses, teachers.server_handles, teachers.load_balancer_handle = {}, {}, {}, {}
        teachers._initialize_teacher_model_managers()
    return dict(_Recorded.started)


def _model(**kwargs: Any) -> Any:
    """A model config with no model behind it: the replicas only need its processor (none)."""
    return type("Model", (), {"get_processor": lambda self: None})()


def with_defaults(section: Any) -> Any:
    """A rollout section with the defaults of verl's ``RolloutConfig`` under it, as the dataclass
    verl converts it to would hold them (0.7.1 composes no reward ``pipeline_model_parallel_size``)."""
    from verl.workers.config import RolloutConfig

    defaults = {field.name: field.default for field in dataclasses.fields(RolloutConfig) if isinstance(field.default, (int, float, str, bool))}
    return OmegaConf.merge(OmegaConf.create(defaults), section)


def to_dataclass(node: Any, dataclass_type: type | None = None) -> Any:
    """verl's ``omega_conf_to_dataclass`` without Hydra (stubbed here): each ``_target_`` section
    becomes its dataclass, fields converted alike, so the dataclasses' own checks run."""
    if dataclasses.is_dataclass(node):
        return node
    plain = OmegaConf.to_container(node, resolve=True) if not isinstance(node, dict) else node
    target = plain.pop("_target_", None)
    if dataclass_type is None:
        module, _, name = target.rpartition(".")
        dataclass_type = getattr(importlib.import_module(module), name)
    types = typing.get_type_hints(dataclass_type)
    known = {field.name for field in dataclasses.fields(dataclass_type)}
    return dataclass_type(**{key: _converted(value, types[key]) for key, value in plain.items() if key in known})


def _converted(value: Any, kind: Any) -> Any:
    """A field's value: a section with a ``_target_``, or typed as a dataclass, becomes one."""
    if not isinstance(value, dict):
        return value
    if "_target_" in value or dataclasses.is_dataclass(kind):
        return to_dataclass(value, None if "_target_" in value else kind)
    return {key: _converted(item, None) for key, item in value.items()}


def _pool_of(manager: Any, role: str) -> str:
    return next(pool for key, pool in manager.mapping.items() if str(key) == role)


async def _gather(tasks: list[Any]) -> None:
    await asyncio.gather(*tasks)
