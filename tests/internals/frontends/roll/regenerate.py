"""Record ROLL's own layouts for the differential test: ``tests/data/roll/layouts.json`` (main,
0.3.0's rules) and ``layouts_0_1_0.json`` (v0.1.0), for the sources named.

    ROLL_SOURCE=<a checkout of ROLL's main> [ROLL_COMMIT=<its commit>] \
    ROLL_0_1_0_SOURCE=<a checkout of v0.1.0> [ROLL_0_1_0_COMMIT=<its commit>] python tests/internals/frontends/roll/regenerate.py

Every example config of the checkout (``examples/**/*.yaml``, composed by Hydra as ROLL's start
scripts compose them) is cut to what placement reads and run, with the hand-made edges below,
through ROLL's own placement code (``roll_driver.py``: ROLL's ``WorkerConfig``, ``num_nodes``
block, ``ResourceManager`` and ``Cluster._create_workers`` on a recorded Ray). An example runs on
the cluster it describes: nodes of its ``num_gpus_per_node`` (default 8), as many as its highest
device number needs, 64 CPUs each. The file keeps the inputs, ROLL's answers and the commit, so
``test_roll_differential.py`` compares the front end with them without ROLL, and a change on
either side shows as a diff of this file or a failing test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from run_roll import run_roll

ROOT = Path(__file__).resolve().parents[4]
OUTPUT = ROOT / "tests" / "data" / "roll" / "layouts.json"
#: The keys placement reads, per worker section and at the top (``keys.py``).
SECTION_KEYS = ("device_mapping", "num_gpus_per_worker", "world_size")
PARALLEL_KEYS = ("tensor_parallel_size", "pipeline_parallel_size", "tensor_model_parallel_size")
TOP_KEYS = ("num_gpus_per_node", "num_nodes")
CPUS = 64


def section(mapping: str | None, strategy: str = "megatron_train", **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"strategy_args": {"strategy_name": strategy, "strategy_config": extra.pop("parallel", {})}, **extra}
    if mapping is not None:
        body["device_mapping"] = mapping
    return body


#: Hand-made edges: uneven nodes, too few GPUs, engines across node ranks, sizes that do not divide.
EDGES: dict[str, dict[str, Any]] = {
    "edge/two node ranks on one 32-GPU node": {
        "nodes": [4, 32],
        "config": {
            "actor_train": section("list(range(0,8))"),
            "actor_infer": section("list(range(0,8))", "vllm", parallel={"tensor_parallel_size": 2}),
        },
    },
    "edge/driver node smaller than the others": {"nodes": [4, 8], "config": {"actor_train": section("list(range(0,8))")}},
    "edge/vllm engine across node ranks": {
        "nodes": [8, 8],
        "config": {"actor_infer": section("list(range(2,10))", "vllm", parallel={"tensor_parallel_size": 4})},
    },
    "edge/megatron tensor parallel across nodes": {
        "nodes": [8, 8],
        "config": {"actor_train": section("list(range(6,14))", parallel={"tensor_model_parallel_size": 4})},
    },
    "edge/idle GPUs of the last node rank": {
        "nodes": [8, 8],
        "config": {"actor_train": section("list(range(0,12))"), "rewards": {"math": section(None, "hf_infer", world_size=5)}},
    },
    "edge/too few nodes": {"nodes": [8], "config": {"actor_train": section("list(range(0,16))")}},
    "edge/too few GPUs": {"nodes": [8, 4], "config": {"actor_train": section("list(range(0,16))")}},
    "edge/engine size does not divide": {
        "nodes": [8],
        "config": {"actor_infer": section("list(range(0,6))", "vllm", parallel={"tensor_parallel_size": 4})},
    },
    "edge/rewards beyond num_nodes": {
        "nodes": [8, 8],
        "config": {"actor_train": section("list(range(0,8))"), "rewards": {"judge": section("list(range(8,12))", "vllm")}},
    },
    "edge/device_mapping as a YAML list": {"nodes": [8], "config": {"actor_train": {"device_mapping": [0, 1, 2, 3]}}},
    "edge/sglang two GPUs per worker on three uneven nodes": {
        "nodes": [8, 16, 8],
        "config": {
            "actor_infer": section("list(range(0,24))", "sglang", num_gpus_per_worker=2),
            "reference": section("list(range(0,8))", "hf_infer"),
        },
    },
}


def trimmed(config: dict[str, Any]) -> dict[str, Any]:
    """The keys of ``config`` placement reads (``keys.py``), worker sections at any depth ROLL has them."""
    out: dict[str, Any] = {key: config[key] for key in TOP_KEYS if key in config}
    for key, value in config.items():
        if not isinstance(value, dict):
            continue
        if any(k in value for k in (*SECTION_KEYS, "strategy_args")):
            out[key] = _section(value)
        elif key in ("rewards", "teacher"):
            inner = {
                name: _section(body)
                for name, body in value.items()
                if isinstance(body, dict) and any(k in body for k in (*SECTION_KEYS, "strategy_args"))
            }
            if inner:
                out[key] = inner
    return out


def _section(body: dict[str, Any]) -> dict[str, Any]:
    kept = {key: body[key] for key in SECTION_KEYS if key in body and body[key] is not None}
    strategy = body.get("strategy_args") or {}
    if strategy:
        parallel = {key: value for key, value in (strategy.get("strategy_config") or {}).items() if key in PARALLEL_KEYS}
        kept["strategy_args"] = {"strategy_name": strategy.get("strategy_name"), "strategy_config": parallel}
    return kept


def stated_nodes(config: dict[str, Any]) -> list[int]:
    """Nodes of the example's ``num_gpus_per_node``, as many as its highest device number needs."""
    gpus = config.get("num_gpus_per_node", 8)
    highest = max((d for body in _bodies(config) for d in _devices(body.get("device_mapping"))), default=0)
    return [gpus] * (highest // gpus + 1)


def _bodies(config: dict[str, Any]) -> list[dict[str, Any]]:
    bodies = []
    for key, value in config.items():
        if isinstance(value, dict):
            bodies += list(value.values()) if key in ("rewards", "teacher") and "device_mapping" not in value else [value]
    return [body for body in bodies if isinstance(body, dict)]


def _devices(text: Any) -> list[int]:
    """The example's own device numbers, for sizing its cluster (ROLL's configs are literals)."""
    return list(eval(text, {"__builtins__": {"list": list, "range": range}})) if isinstance(text, str) else []  # noqa: S307 -- ROLL's own example files


#: The sources recorded: the variable naming a checkout, the release whose rules it has, whether
#: the driver's GPU count is ``num_gpus_per_node`` (``releases.py``), and the file written.
SOURCES = (
    ("ROLL_SOURCE", "ROLL_COMMIT", "0.3.0", True, OUTPUT),
    ("ROLL_0_1_0_SOURCE", "ROLL_0_1_0_COMMIT", "0.1.0", False, OUTPUT.with_name("layouts_0_1_0.json")),
)


def main() -> None:
    sys.path.insert(0, str(ROOT))
    named = [source for source in SOURCES if os.environ.get(source[0])]
    if not named:
        raise SystemExit(f"name a ROLL checkout: {' or '.join(source[0] for source in SOURCES)}")
    for variable, commit_variable, release, driver_decides, output in named:
        record(Path(os.environ[variable]).resolve(), os.environ.get(commit_variable), release, driver_decides, output)


def record(source: Path, commit: str | None, release: str, driver_decides: bool, output: Path) -> None:
    """Every example of the checkout and the edges, through ROLL's code at ``source``, into ``output``."""
    from solver_placement._prediction.launch_input import launch_input

    commit = commit or subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    cases: dict[str, dict[str, Any]] = {}
    unread: dict[str, str] = {}
    for path in sorted((source / "examples").rglob("*.yaml")):
        name = str(path.relative_to(source))
        try:
            config = trimmed(dict(launch_input(path).config or {}))
        except Exception as error:  # an example Hydra cannot compose here: named in the file
            unread[name] = f"{type(error).__name__}: {str(error)[:200]}"
            continue
        if any(key not in TOP_KEYS for key in config):
            cases[name] = {"nodes": stated_nodes(config), "config": config}
    cases.update(json.loads(json.dumps(EDGES)))
    for case in cases.values():
        case.update(cpus=[CPUS] * len(case["nodes"]), driver_decides=driver_decides, release=release)
    answers = run_roll(source, cases)
    for name, case in cases.items():
        case["roll"] = answers[name]
    lines = [f"{json.dumps(name)}: {json.dumps(case, sort_keys=True, separators=(',', ':'))}" for name, case in sorted(cases.items())]
    head = f'{{"roll_commit": {json.dumps(commit)}, "release": {json.dumps(release)}, "unread": {json.dumps(unread, sort_keys=True)},\n"cases": {{\n'
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(head + ",\n".join(lines) + "\n}}\n")  # one case a line: a change shows as a diff of its line
    print(f"{len(cases)} cases ({len(EDGES)} hand-made), {len(unread)} example(s) not composed, ROLL {release} {commit} -> {output}")


if __name__ == "__main__":
    main()
