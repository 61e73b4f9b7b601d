"""Differential: verl's own driver builds the same pools, mapping and worker groups as
``spec/verl`` reads from the same config, for every case of ``test_verl_trainer.py``.

verl's code runs for real in a subprocess (``tests/verl_drivers``) with torch, the models and
Ray's actors stubbed: no GPU, no Ray cluster. verl is no dependency of this package, so the test
runs where its sources are given and is skipped elsewhere:

    pip install --no-deps --target /tmp/verl041 verl==0.4.1
    VERL_0_4_1_SOURCE=/tmp/verl041 VERL_MAIN_SOURCE=<a checkout of verl's main> pytest tests/spec/test_verl_differential.py

Each case also reads verl's own full config file (``ppo_trainer.yaml`` at 0.4.1, the composed
``_generated_ppo_trainer.yaml`` on main) with the case's overrides, so the trimmed files under
``tests/data/verl`` are checked to hold verl's defaults.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT
from test_verl_trainer import CASES, V041, config

from solver_placement.spec.verl import verl_pools

DRIVERS = ROOT / "tests" / "verl_drivers"
#: Per trimmed file: the variable naming verl's sources, the driver, verl's full config in them, and overrides it needs to resolve.
SOURCES = {
    "0.4.1": ("VERL_0_4_1_SOURCE", "driver_v0_4.py", "verl/trainer/config/ppo_trainer.yaml", []),
    "main": ("VERL_MAIN_SOURCE", "driver_main.py", "verl/trainer/config/_generated_ppo_trainer.yaml", ["actor_rollout_ref.rollout.name=vllm"]),
}


def _verl(version: str, overrides: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """What verl builds (the driver's JSON) and verl's own full config with the overrides, plain."""
    variable, driver, full, needed = SOURCES[version]
    source = os.environ.get(variable)
    if not source:
        pytest.skip(f"set {variable} to a directory holding verl {version}'s sources to run verl's own driver")
    path = Path(source) / full
    result = subprocess.run(
        [sys.executable, str(DRIVERS / driver), str(path), *needed, *overrides],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": os.pathsep.join([source, str(DRIVERS)])},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1]), config(path, *needed, *overrides)


@pytest.mark.parametrize(("path", "overrides", "pools", "mapping", "workers"), CASES)
def test_verl_builds_what_is_read(path: Path, overrides: list[str], pools: dict, mapping: dict, workers: list[str]) -> None:
    built, full = _verl("0.4.1" if path == V041 else "main", overrides)
    ours = verl_pools(full)
    assert ours == verl_pools(config(path, *overrides))  # the trimmed file holds verl's defaults
    assert built["mapping"] == dict(ours.mapping) == mapping
    if path == V041:
        assert built["resource_pool_spec"] == ours.resource_pool_spec == pools
        assert built["groups"] == [{"pool": "global_pool", "max_colocate_count": 1, "roles": sorted(workers)}]
        return
    standalone = {name: {"process_on_nodes": list(p.process_on_nodes), "max_colocate_count": p.max_colocate_count}
                  for name, p in ours.pools.items() if name.startswith("rollout_pool_")}  # fmt: skip
    assert {**built["resource_pool_spec"], **{name: s["process_on_nodes"] for name, s in built["standalone"].items()}} == ours.resource_pool_spec == pools
    assert built["standalone"] == standalone
    assert {p.max_colocate_count for name, p in ours.pools.items() if name not in standalone} == {built["max_colocate_count"]}
    trainer_roles = [role for role in ours.workers if not role.startswith("rollout_standalone_")]
    started = [role for role in built["mapping"] if role not in ("critic", "rm") or built[{"critic": "critic", "rm": "reward_model"}[role]]]
    assert trainer_roles == started
