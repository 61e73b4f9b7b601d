"""Differential: AReaL's own code reads the same allocation strings and gives the same GPUs, rank
by rank, as ``_frontends/areal`` predicts.

(a) Every allocation string AReaL's repository ships (``tests/data/areal/allocation_strings.json``:
v1.0.4 and the older forms of v0.3.4, collected with their commits) and hand-made edges are
parsed by AReaL's own parser (``areal/api/alloc_mode.py``, Lark) and by ours; the accept or
refuse decision and every field of every part must agree. (b) AReaL's single-controller code
(config reading, the trainer's controllers, ``LocalScheduler.create_workers``) runs on the
placement keys of every example config of v1.0.4 (``tests/data/areal/examples.json``) and on
edges (a job larger than the machine, a colocation, two specs, an env override, uneven engine
sizes); the GPUs and ``CUDA_VISIBLE_DEVICES`` of every worker must be what ``predict`` says, and
a refusal by AReaL must be a refusal here.

AReaL is no dependency of this package: the test installs the pinned release 1.0.4 and Lark (its
parser's one dependency), by version and wheel hash (``pip install --no-deps --target``), into
pytest's cache (``.pytest_cache/d/areal``), once; everything else AReaL imports is an inert
stand-in (``tests/areal_drivers/stubs.py``). With ``AREAL_SOURCE`` naming a directory that holds
``areal`` (and ``lark``, unless installed), e.g. a ``pip install --target`` of them, nothing is
installed and the test runs in the fast tier; otherwise it downloads, so it is ``slow`` (CI runs
it, and there a download that fails fails the test).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import ROOT, needs_hydra
from pinned_sources import Pinned, Sources

from solver_placement import Cluster, predict
from solver_placement._errors import PlacementError
from solver_placement._frontends.areal.grammar import AllocationModeError, parse_allocation_mode
from solver_placement._prediction.layout import Prediction

DRIVERS = ROOT / "tests" / "areal_drivers"
DATA = ROOT / "tests" / "data" / "areal"
#: The pinned wheels: AReaL's newest release on PyPI and the Lark its parser imports.
WHEELS = (
    ("areal", "1.0.4", "7d7cfab10d9ec0990d9263290a9472366827783b9ad5fce22f56a1add416bdd9"),
    ("lark", "1.3.1", "c629b661023a014c37da873b4ff58a817398d12635d3bbb2c5a03be7fe5d1e12"),
)
#: Keys AReaL's config needs to load that decide nothing about placement.
NEEDED = {"experiment_name": "x", "trial_name": "t", "tokenizer_path": "model", "train_dataset": {"path": "data", "type": "rl"}}
RUN_NAMES = {"experiment_name": "x", "trial_name": "t", "fileroot": "/tmp/areal-differential"}

pytestmark = [] if os.environ.get("AREAL_SOURCE") else [pytest.mark.slow]


@pytest.fixture(scope="module")
def areal_source(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """AReaL's sources (``pinned_sources.py``)."""
    return Sources(request, tmp_path_factory, "areal", "AReaL's").get("AREAL_SOURCE", Pinned("areal", "1.0.4", WHEELS))


def _run(source: Path, driver: str, cases: list[Any]) -> list[dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(source), str(DRIVERS)]), "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        [sys.executable, str(DRIVERS / driver), str(source)], input=json.dumps(cases), capture_output=True, text=True, timeout=600, env=env
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def _gpus_by_role(prediction: Prediction) -> dict[str, list[dict[str, Any]]]:
    """Per role, each rank's GPUs and ``CUDA_VISIBLE_DEVICES`` as the drivers report AReaL's."""
    return {
        role: [{"gpus": list(rank.gpus), "visible": ",".join(rank.visible_devices)} for rank in prediction.of_role(role)]
        for role in prediction.roles
    }


# -- (a) the grammar ----------------------------------------------------------------------------

#: Edges beyond the shipped strings: blanks, optional parentheses, names, refusals in order.
EDGES = [
    "sglang : d4 t2 + fsdp:d8", "megatron:(attn:d2|ffn:d2", "megatron:attn:d2|ffn:d2)", "sglang:d4+fsdp[a]:d4|fsdp[c]:d4",
    "fsdp:d4|fsdp[b]:d4|fsdp[c]:d4", "fsdp[a]:d4+fsdp[a]:d4", "fsdp:d3e2", "megatron:d3e2", "megatron:d4e2", "sglang:d0",
    "sglang:d04", "sglang:d1 0", "sglang:d2d4", "fsdp:dt4", "", "sglang[1a]:d2", "sglang[d4]:d2", "sglang[attn]:d2",
    "megatron[x]:(attn:d2|ffn:d2)", "attn:d2|ffn:e2", "megatron:(attn:d2|ffn:d2p2)", "megatron:(attn:d2|ffn:e4)",
    "megatron:(attn:d4|ffn:d4e2)", "fsdp:d4|sglang[r]:d2", "sglang:d4|fsdp[a]:d4", "fsdp:d4+", "SGLang:d4", "vllm:d2c2",
    "fsdp:d4;", "sglang:d4+fsdp:e2", "megatron:(attn:d2|ffn:e2)|fsdp[c]:d2", "fsdp[x]:d2|fsdp[x]:d2",
    "megatron:(attn:d4p2|ffn:p1e2)", "vllm[r]:d2t4|megatron[a]:d2t4", "archon:d2p2e2", "sglang[a]:d1+sglang[b]:d1",
]  # fmt: skip


def _strings() -> list[str]:
    shipped = json.loads((DATA / "allocation_strings.json").read_text())
    return sorted({text for source in shipped["sources"] for text in source["strings"]} | set(EDGES))


def test_every_shipped_allocation_string_parses_as_areal_parses_it(areal_source: Path) -> None:
    strings = _strings()
    theirs = _run(areal_source, "parse_driver.py", strings)
    differ = []
    for text, answer in zip(strings, theirs, strict=True):
        try:
            ours: dict[str, Any] = {"parts": [{**asdict(part), "world_size": part.world_size} for part in parse_allocation_mode(text)]}
        except AllocationModeError:
            ours = {"error": True}
        if ("error" in answer) != ("error" in ours) or ("parts" in answer and answer != ours):
            differ.append((text, answer, ours))
    assert not differ
    assert sum("parts" in answer for answer in theirs) >= 100  # the shipped strings AReaL accepts are compared field by field


# -- (b) the local scheduler -------------------------------------------------------------------


def _examples() -> dict[str, dict[str, Any]]:
    data = json.loads((DATA / "examples.json").read_text())
    return {
        name: config
        for name, config in data["examples"].items()
        if "unresolved" not in config and "rollout" in config and config.get("rollout") is not None
    }


#: Hand-made edges over AReaL's GRPO example: a job larger than the machine, two specs, an env
#: override, a tensor-parallel rollout, a second colocated role, a refusal AReaL makes.
EDGE_OVERRIDES = {
    "wraps round": ["actor.backend=fsdp:d8", "rollout.backend=sglang:d2t2"],
    "tensor-parallel rollout": ["rollout.backend=sglang:d2t2"],
    "engine larger than the machine": ["rollout.backend=sglang:d1t16"],
    "ref kept": ["actor.kl_ctl=0.1"],
    "two specs": ["actor.backend=fsdp:d2", "ref.backend=fsdp:d2", "++actor.scheduling_spec=[{gpu: 1, cmd: w}, {gpu: 2, cmd: w}]"],
    "two specs for four workers": ["++actor.scheduling_spec=[{gpu: 1, cmd: w}, {gpu: 2, cmd: w}]"],
    "told other GPUs": ["++actor.scheduling_spec=[{gpu: 1, cmd: w, env_vars: {CUDA_VISIBLE_DEVICES: '0'}}]"],
    "colocation count differs": ["ref.backend=fsdp:d2"],
    "rollout colocated with actor": ["++rollout.scheduling_strategy={type: colocation, target: actor}"],
    "no GPU asked": ["++actor.scheduling_spec=[{gpu: 0, cmd: w}]"],
    "six GPU machine": [],
}  # fmt: skip
MACHINE = {"six GPU machine": 6}


def _cases() -> list[tuple[str, dict[str, Any], list[str], int]]:
    cases = []
    for name, config in sorted(_examples().items()):
        cases.append((name, config, [], 8))
    base = _examples()["examples/math/gsm8k_grpo.yaml"]
    for name, overrides in EDGE_OVERRIDES.items():
        cases.append((name, base, overrides, MACHINE.get(name, 8)))
    return cases


def _with_needed(config: dict[str, Any]) -> dict[str, Any]:
    full = json.loads(json.dumps(config))
    full.update({key: value for key, value in NEEDED.items() if key not in full})
    for section in ("saver", "evaluator", "stats_logger", "recover"):
        full[section] = dict(RUN_NAMES)
    for role in ("actor", "critic", "ref", "rollout"):
        if isinstance(full.get(role), dict):
            full[role].update({"experiment_name": "x", "trial_name": "t"})
            if role != "rollout":
                full[role]["path"] = "model"
    return full


def test_the_local_scheduler_gives_every_worker_the_predicted_gpus(areal_source: Path, tmp_path: Path) -> None:
    _needs_hydra()
    cases = _cases()
    runs = []
    for index, (_name, config, overrides, gpus) in enumerate(cases):
        path = tmp_path / f"case{index}.yaml"
        path.write_text(yaml.safe_dump(_with_needed(config)))
        scheduler = "scheduler.type=local" if "scheduler" in config else "++scheduler.type=local"  # AReaL's docs add it on the command line
        runs.append({"argv": ["train.py", "--config", str(path), scheduler, *overrides], "gpus": gpus})
    theirs = _run(areal_source, "scheduler_driver.py", runs)
    compared = refused = 0
    unmodelled = []
    for (name, _, _, gpus), run, answer in zip(cases, runs, theirs, strict=True):
        try:
            prediction = predict("areal", run["argv"], cluster=Cluster(num_nodes=1, num_gpus_per_node=gpus))
        except PlacementError as error:
            if "not model" in str(error):  # code this front end names and does not read (the v2 controllers, teachers)
                unmodelled.append(name)
                continue
            assert "error" in answer, f"{name}: AReaL places it ({answer}) but predict refuses: {error}"
            refused += 1
            continue
        assert "roles" in answer, f"{name}: AReaL refuses ({answer}) but predict places it"
        assert _gpus_by_role(prediction) == answer["roles"], name
        compared += 1
    assert len(unmodelled) <= 3, unmodelled
    assert compared >= 40 and refused >= 3


# -- (c) the SPMD local launcher -----------------------------------------------------------------

#: What ``local_main`` reads besides the allocation string (sections it structures unconditionally).
LAUNCHER_SECTIONS = {"recover": {"mode": "disabled"}, "sglang": {}, "vllm": {}, "rollout": {}, "actor": {}}
#: Hand-made allocation strings: wrap-round, vLLM slices, an ignored colocation, one side only,
#: an odd machine, a cross-node server, and what the launcher refuses.
LAUNCHER_EDGES = [
    ("sglang:d2t2+fsdp:d4", 8), ("vllm:d2t2+fsdp:d8", 8), ("sglang:d4t2+fsdp:d8", 8), ("sglang[r]:d4|fsdp[a]:d4", 8),
    ("fsdp:d8", 8), ("sglang:d4", 8), ("vllm:d3t2+fsdp:d2", 6), ("sglang:d1t8+fsdp:d1", 8), ("sglang:d1t16+fsdp:d1", 8),
    ("sglang[a]:d1+sglang[b]:d1", 8), ("sglang[r]:d2+fsdp[a]:d2+fsdp[c]:d2", 8), ("megatron:d2p2t2+sglang:d2", 8),
]  # fmt: skip


def _launcher_cases() -> list[tuple[str, dict[str, Any], int]]:
    data = json.loads((DATA / "examples.json").read_text())
    shipped = [
        (name, config, config["cluster"]["n_gpus_per_node"]) for name, config in sorted(data["examples"].items()) if config.get("allocation_mode")
    ]
    edges = [(text, {"allocation_mode": text, "cluster": {"n_nodes": 1, "n_gpus_per_node": gpus}}, gpus) for text, gpus in LAUNCHER_EDGES]
    return shipped + edges


def test_the_local_launcher_gives_every_server_and_trainer_rank_the_predicted_gpus(areal_source: Path, tmp_path: Path) -> None:
    _needs_hydra()
    cases = _launcher_cases()
    runs = []
    for index, (_name, config, gpus) in enumerate(cases):
        full = {
            **LAUNCHER_SECTIONS,
            "experiment_name": "x",
            "trial_name": "t",
            "allocation_mode": config["allocation_mode"],
            "cluster": dict(config["cluster"]),
        }
        path = tmp_path / f"launch{index}.yaml"
        path.write_text(yaml.safe_dump(full))
        runs.append({"argv": ["train.py", "--config", str(path)], "gpus": gpus})
    theirs = _run(areal_source, "launcher_driver.py", runs)
    compared = refused = 0
    for (name, _, gpus), run, answer in zip(cases, runs, theirs, strict=True):
        try:
            prediction = predict("areal", ["-m", "areal.infra.launcher.local", *run["argv"]], cluster=Cluster(num_nodes=1, num_gpus_per_node=gpus))
        except PlacementError as error:
            assert "error" in answer, f"{name}: AReaL launches it ({answer}) but predict refuses: {error}"
            refused += 1
            continue
        assert "roles" in answer, f"{name}: AReaL refuses ({answer}) but predict places it"
        assert _gpus_by_role(prediction) == answer["roles"], name
        compared += 1
    assert compared >= 8 and refused >= 6


def _needs_hydra() -> None:
    """AReaL's own command-line reader composes with Hydra (``areal/api/cli_args.py`` imports
    ``hydra.compose``), so its drivers run only where Hydra is installed (the ``[hydra]`` extra;
    the main CI job keeps Hydra out to test omegaconf 2.4 and the refusal without it, and
    .ci/run's last step installs it and runs these tests)."""
    needs_hydra("AReaL's CLI reader needs Hydra: install the [hydra] extra to run AReaL's own scheduler and launcher")
