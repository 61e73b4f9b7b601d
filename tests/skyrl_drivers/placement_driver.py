"""Run SkyRL's own placement code on cases read as JSON from stdin; print where every rank lands.

Usage: ``python placement_driver.py SOURCE`` with SOURCE a directory holding ``skyrl_train``.
Each case is ``{"overrides": [...], "gpus_per_node": [...]}``. SkyRL's config is composed by
Hydra from SkyRL's own ``ppo_base_config.yaml`` with the overrides, checked by SkyRL's
``validate_cfg``, then ``BasePPOExp.get_colocate_pg``, ``create_ray_wrapped_inference_engines_from_config``
and ``RayPPOTrainer.build_models`` run as ``BasePPOExp`` calls them, on the Ray recorder. The
answer per case: ``{"refused": reason}`` or ``{"roles": {role: [{node, gpus, share}, ...]}, "pending": bool}``.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import inert
import ray_recorder

#: Overrides of keys that place nothing, so ``validate_cfg`` passes on a machine without W&B.
NEEDED = ["trainer.logger=console"]
ROLES = {"PolicyWorker": "policy", "RefWorker": "ref", "CriticWorker": "critic"}


def main() -> None:
    source = Path(sys.argv[1])
    sys.path.insert(0, str(source))
    ray_recorder.install([1])
    inert.install()
    from hydra import compose, initialize_config_dir
    from skyrl_train.entrypoints.main_base import BasePPOExp, create_ray_wrapped_inference_engines_from_config
    from skyrl_train.trainer import RayPPOTrainer
    from skyrl_train.utils import ppo_utils
    from skyrl_train.utils.utils import validate_cfg

    # The function registries sync through a named Ray actor; with none, they list their own
    # functions, which is what the actor would answer in one process.
    ppo_utils.BaseFunctionRegistry._get_or_create_actor = classmethod(lambda cls: None)

    workers = {name: ray_recorder.remote(num_gpus=1)(type(name, (), {})) for name in ROLES}
    answers = []
    for case in json.loads(sys.stdin.read()):
        ray_recorder.STATE["cluster"] = ray_recorder.Cluster(case["gpus_per_node"])
        try:
            with initialize_config_dir(config_dir=str(source / "skyrl_train" / "config"), version_base=None):
                cfg = compose(config_name="ppo_base_config", overrides=[*NEEDED, *case["overrides"]])
            _validate_placement(validate_cfg, cfg)
        except Exception as error:  # Hydra's and SkyRL's refusals, compared as refusals
            if "-v" in sys.argv:
                import traceback

                traceback.print_exc()
            answers.append({"refused": f"{type(error).__name__}: {error}"})
            continue
        pending = False
        try:
            pg = BasePPOExp.get_colocate_pg(types.SimpleNamespace(cfg=cfg))
            if cfg.generator.run_engines_locally:
                create_ray_wrapped_inference_engines_from_config(cfg, pg, inert.Inert())
            trainer = types.SimpleNamespace(cfg=cfg, colocate_pg=pg, total_training_steps=None, tokenizer=inert.Inert())
            RayPPOTrainer.build_models(trainer, workers["PolicyWorker"], workers["CriticWorker"], workers["RefWorker"])
        except RuntimeError as error:
            if "Failed to create placement group" not in str(error):
                raise
            pending = True
        waiting = any(actor.node is None for actor in ray_recorder.STATE["cluster"].actors)  # an actor Ray never schedules
        answers.append({"roles": _roles(), "pending": pending or waiting})
    print(json.dumps(answers))


def _validate_placement(validate_cfg: Any, cfg: Any) -> None:
    """SkyRL's ``validate_cfg``; its checks of batch sizes and other keys that place nothing
    fail on a bare config only if the base config's own values do, so it runs whole."""
    validate_cfg(cfg)


def _roles() -> dict[str, list[dict[str, Any]]]:
    roles: dict[str, list[dict[str, Any]]] = {"rollout": [], "policy": [], "ref": [], "critic": []}
    for actor in ray_recorder.STATE["cluster"].actors:
        role = ROLES.get(actor.cls)
        if role is not None:
            share = float(actor.options.get("num_gpus", 0))
            roles[role].append({"rank": actor.kwargs["rank"], "node": actor.node, "gpus": list(actor.gpus), "share": share})
        elif actor.workers:
            share = float(actor.kwargs.get("num_gpus", 1))
            roles["rollout"] += [{"node": node, "gpus": [] if gpu < 0 else [gpu], "share": share} for _, node, gpu in actor.workers]
        else:
            roles["rollout"].append({"node": actor.node, "gpus": list(actor.gpus), "share": float(actor.options.get("num_gpus", 0))})
    for role in ("policy", "ref", "critic"):
        roles[role].sort(key=lambda rank: rank.pop("rank"))
    placed = {role: [rank for rank in ranks if rank["node"] is not None] for role, ranks in roles.items()}
    return {role: ranks for role, ranks in placed.items() if ranks}


if __name__ == "__main__":
    main()
