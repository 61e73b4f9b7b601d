"""ROLL's own placement code run on a recorded Ray: the reference the differential test compares with.

Run as a script with a ROLL checkout first on ``sys.path`` (``regenerate.py`` does so); reads
cases as JSON on stdin and prints, per case, every worker ROLL creates: its rank, the node and
GPUs of the placement group it is scheduled into, and the ``CUDA_VISIBLE_DEVICES`` ROLL gives it.

What runs for real is ROLL's: ``WorkerConfig.__post_init__`` (``device_mapping`` through ROLL's
``eval``, ``num_gpus_per_worker`` and ``world_size``), the ``num_nodes`` block of
``BaseConfig.__post_init__`` (its statements, taken from ROLL's source and run on the workers, as
the whole config class needs dacite and dozens of unrelated fields), ``ResourceManager`` and
``Cluster._create_workers``. torch and everything else ROLL imports but placement never uses are
inert stand-ins (``roll_stubs.py``); ``torch.cuda`` says an NVIDIA GPU is there, with as many
devices as the driver's node has. Ray is a recorder (``ray_recorder.py``) that lands each
placement group as Ray's GCS does: the feasible node scoring highest, per asked resource
``(free - asked) / free`` summed, ties to the lowest node, GPUs the node's lowest free ones.
"""

from __future__ import annotations

import ast
import inspect
import json
import sys
import textwrap
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(1, str(Path(__file__).parent))

import ray_recorder  # noqa: E402
import roll_stubs  # noqa: E402


def main() -> None:
    cases = json.load(sys.stdin)
    print(json.dumps({name: run(case) for name, case in cases.items()}, sort_keys=True))


def run(case: dict[str, Any]) -> dict[str, Any]:
    recorder = ray_recorder.install(case["nodes"], case["cpus"])
    roll_stubs.install(driver_gpus=case["nodes"][0])
    from roll.configs.worker_config import StrategyArguments, WorkerConfig
    from roll.distributed.executor.cluster import Cluster
    from roll.distributed.scheduler.resource_manager import ResourceManager

    config = case["config"]
    try:
        workers = {role: worker_config(WorkerConfig, StrategyArguments, role, section) for role, section in sections(config)}
        gpus_per_node = case["nodes"][0] if case["driver_decides"] else config.get("num_gpus_per_node", 8)
        num_nodes = required_nodes(WorkerConfig, workers, gpus_per_node, config.get("num_nodes", 1))
        manager = ResourceManager(num_gpus_per_node=gpus_per_node, num_nodes=num_nodes)
        roles = {}
        for role, worker in workers.items():
            cluster = Cluster.__new__(Cluster)
            cluster.cluster_name, cluster.resource_manager, cluster.worker_config = role, manager, worker
            cluster.worker_cls, cluster.workers, cluster.world_size = recorder.actor_class(), [], worker.world_size
            cluster.master_addr = cluster.master_port = cluster.placement_groups = None
            cluster._create_workers()
            roles[role] = recorder.workers(cluster.worker_cls)
    except ray_recorder.Pending as pending:
        return {"pending": str(pending)}
    except (AssertionError, TypeError, ValueError, KeyError, ZeroDivisionError) as error:  # ROLL's own refusal (an assert, its eval)
        return {"refused": f"{type(error).__name__}: {error}", "where": traceback.format_exc(limit=-1).splitlines()[-3].strip()}
    return {"roles": roles}


def sections(config: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for key, value in config.items():
        if (
            isinstance(value, dict)
            and key in ("rewards", "teacher")
            and not any(k in value for k in ("device_mapping", "world_size", "strategy_args"))
        ):
            found += [(f"{key}.{name}", inner) for name, inner in value.items()]
        elif isinstance(value, dict):
            found.append((key, value))
    return found


def worker_config(worker_class: Any, strategy_class: Any, role: str, section: dict[str, Any]) -> Any:
    strategy = section.get("strategy_args")
    given = {key: section[key] for key in ("device_mapping", "num_gpus_per_worker", "world_size") if key in section}
    if strategy is not None:
        given["strategy_args"] = strategy_class(**strategy)
    return worker_class(name=role, **given)


def required_nodes(worker_class: Any, workers: dict[str, Any], gpus_per_node: int, num_nodes: int) -> int:
    """``num_nodes`` by the statements of ``BaseConfig.__post_init__`` from ``total_devices = []``
    on, run on a stand-in holding the workers as attributes (``rewards`` as the dict ROLL has)."""
    from roll.configs import base_config

    source = textwrap.dedent(inspect.getsource(base_config.BaseConfig.__post_init__))
    body = ast.parse(source).body[0].body  # type: ignore[attr-defined]
    start = next(index for index, statement in enumerate(body) if ast.unparse(statement).startswith("total_devices = []"))
    block = "def block(self):\n" + textwrap.indent("\n".join(ast.unparse(statement) for statement in body[start:]), "    ")
    namespace: dict[str, Any] = {"WorkerConfig": worker_class}
    exec(compile(block, base_config.__file__, "exec"), namespace)  # noqa: S102 -- ROLL's own statements
    holder = SimpleNamespace(num_gpus_per_node=gpus_per_node, num_nodes=num_nodes, rewards={})
    for role, worker in workers.items():
        if role.startswith("rewards."):
            holder.rewards[role.split(".", 1)[1]] = worker
        elif role.startswith("teacher."):
            holder.__dict__.setdefault("_reference_configs", {})[role] = worker
        else:
            setattr(holder, role, worker)
    namespace["block"](holder)
    return int(holder.num_nodes)


if __name__ == "__main__":
    main()
