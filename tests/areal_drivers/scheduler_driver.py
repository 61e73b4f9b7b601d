"""Run AReaL's own single-controller code up to the GPUs its local scheduler gives every worker.

Usage: ``python scheduler_driver.py AREAL_SOURCE < cases.json``, a JSON list of cases
``{"argv": ["train.py", "--config", "x.yaml", "scheduler.type=local", ...], "gpus": 8}`` (the
machine's GPU count). Prints one JSON line, a list with per case: per role, in creation order,
each worker's GPUs and the ``CUDA_VISIBLE_DEVICES`` AReaL sets for it, or ``{"error": ...}``
when AReaL refuses.

What runs for real: AReaL's command-line and config reading (``parse_cli_args``,
``to_structured_cfg`` into ``PPOConfig``, its defaults and checks), the trainer's
``_create_train_engine`` and ``_init_rollout`` (which build the controllers and the eval
rollout's colocated config), each controller's ``initialize`` up to its ``Job``, and
``LocalScheduler.create_workers`` with its GPU counter. Replaced: torch, SGLang and the other
missing packages (inert stand-ins, ``stubs.py``); the worker processes (``run_with_streaming_logs``
records the command and environment instead of starting one); a fork's HTTP exchange with its
target worker (its result, the target's GPUs and environment, is what
``LocalScheduler._fork_single_worker`` returns, local.py:437-446 at v1.0.4); and the wait for
workers, where the driver stops each role. The roles are created in ``PPOTrainer.__init__``'s
order (rl_trainer.py:288-316 at v1.0.4), which needs a model and datasets to run as a whole.
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

import stubs


class _Stop(Exception):  # noqa: N818 - a signal, not an error
    """Raised where a controller starts waiting for its workers: the GPUs are decided by then."""


class _Process:
    pid = 0
    returncode = None

    def poll(self) -> None:
        return None


class _Session:
    """The HTTP session a fork opens (``_create_forked_workers_async``); ``forked`` never uses it."""

    def __init__(self, **kwargs: Any) -> None:
        pass

    async def __aenter__(self) -> _Session:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None


def main() -> None:
    source = Path(sys.argv[1])
    logging.disable(logging.CRITICAL)  # AReaL's colour formatter is an inert stand-in here
    stubs.install_missing(source)
    from areal.api.cli_args import PPOConfig, parse_cli_args, to_structured_cfg
    from areal.infra.platforms.cuda import CudaPlatform
    from areal.infra.scheduler import local
    from areal.trainer.rl_trainer import PPOTrainer
    from omegaconf import OmegaConf

    local.current_platform = CudaPlatform()  # what AReaL detects on an NVIDIA machine (platforms/__init__.py)
    roles: dict[str, list[dict[str, Any]]] = {}
    local.run_with_streaming_logs = lambda cmd, log, merged, role, env_vars_in_cmd=None: _Process()

    async def forked(self: Any, session: Any, role: str, idx: int, target: Any, target_role: str, command: Any = None) -> Any:
        worker = local.Worker(id=f"{role}/{idx}", ip=target.worker.ip, worker_ports=list(target.worker.worker_ports), engine_ports=[])
        return local.WorkerInfo(
            worker=worker,
            process=None,
            role=role,
            gpu_devices=target.gpu_devices,
            created_at=time.time(),
            log_file="",
            env_vars=target.env_vars.copy(),
        )

    local.LocalScheduler._fork_single_worker = forked
    local.aiohttp = types.SimpleNamespace(ClientTimeout=lambda **kwargs: None, ClientSession=_Session)
    local.get_default_connector = lambda: None
    local.LocalScheduler._cleanup_workers = lambda self, workers: None  # nothing was started
    local.LocalScheduler.__del__ = lambda self: None
    local.time = types.SimpleNamespace(sleep=lambda seconds: None, time=time.time)  # no process to wait for

    def stop(self: Any, role: str, timeout: Any = None) -> None:
        roles[role] = [{"gpus": list(info.gpu_devices), "visible": info.env_vars.get("CUDA_VISIBLE_DEVICES")} for info in self._workers[role]]
        raise _Stop

    local.LocalScheduler.get_workers = stop
    answers: list[dict[str, Any]] = []
    for case in json.load(sys.stdin):
        roles.clear()
        try:
            raw, _ = parse_cli_args(case["argv"])
            config = OmegaConf.to_object(to_structured_cfg(raw, config_cls=PPOConfig))
            with tempfile.TemporaryDirectory() as scratch:
                scheduler = local.LocalScheduler(gpu_devices=list(range(case["gpus"])), log_dir=scratch, fileroot=scratch, nfs_record_root=scratch)
                _create(PPOTrainer, config, scheduler)
        except Exception as error:  # noqa: BLE001 - AReaL's refusal is the answer
            answers.append({"error": type(error).__name__, "message": str(error).splitlines()[0] if str(error) else ""})
            continue
        answers.append({"roles": dict(roles)})
    print(json.dumps(answers))


def _create(trainer_class: Any, config: Any, scheduler: Any) -> None:
    """The trainer's worker creation, in its order, each role stopped when its workers exist."""
    from areal.api.alloc_mode import ModelAllocation

    trainer = object.__new__(trainer_class)
    trainer.config, trainer.scheduler = config, scheduler
    trainer.actor_alloc = ModelAllocation.from_str(config.actor.backend, name="actor")
    trainer.rollout_alloc = ModelAllocation.from_str(config.rollout.backend, name="rollout")
    engines = [("actor", config.actor, trainer.actor_alloc)]
    if config.critic is not None:
        engines.append(("critic", config.critic, ModelAllocation.from_str(config.critic.backend, name="critic")))
    if config.actor.kl_ctl > 0 and config.ref is not None:
        engines.append(("ref", config.ref, ModelAllocation.from_str(config.ref.backend, name="ref")))
    for role, engine_config, allocation in engines:
        controller = _controller(trainer, role, engine_config, allocation)
        _stopped(controller.initialize, addr=None, ft_spec=None, role=role)
    _stopped(trainer._init_rollout, config.rollout, is_eval=False)
    agent = config.rollout.agent
    if not (agent is not None and agent.mode == "online"):
        trainer.rollout = types.SimpleNamespace(server_infos=[None] * trainer.rollout_alloc.parallel.dp_size)
        _stopped(trainer._init_rollout, config.rollout, is_eval=True)


def _controller(trainer: Any, role: str, engine_config: Any, allocation: Any) -> Any:
    """The trainer's controller for a training role. Archon's engine module cannot be imported
    over inert torch (a metaclass conflict), so for it the controller its ``as_controller``
    returns is built directly (``PPOActorController`` / ``PPOCriticController``, the same
    ``TrainController.initialize``)."""
    try:
        if role == "critic":
            return trainer._create_critic(engine_config, allocation)
        return trainer._create_train_engine(engine_config, allocation)
    except TypeError:
        if allocation.backend != "archon":
            raise
    from areal.trainer.ppo.actor import PPOActorController
    from areal.trainer.ppo.critic import PPOCriticController

    chosen = PPOCriticController if role == "critic" else PPOActorController
    return chosen(train_engine=None, config=engine_config, scheduler=trainer.scheduler)


def _stopped(call: Any, *args: Any, **kwargs: Any) -> None:
    """``call`` run until the driver stops it where it waits for its workers."""
    try:
        call(*args, **kwargs)
    except _Stop:
        return
    except Exception as error:
        if isinstance(error.__cause__, _Stop) or "_Stop" in repr(error):
            return
        raise


if __name__ == "__main__":
    main()
