"""The same input gives byte-identical output: across runs, solver worker counts and processes
whose string hashing differs (``PYTHONHASHSEED``, what changes between machines and interpreters).

Output is ``json.dumps`` of every component's placement records (``dataclasses.asdict``), the
bytes a user would store or compare. Every valid model of ``models/`` is solved as it is meant to
be read: ``modelparallel_*`` through ``ModelParallelComponentPlacement`` (``HybridComponentPlacement``
for the hybrid one), the rest through ``solve``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from solver_placement import HybridComponentPlacement, ModelParallelComponentPlacement, Solution, replan, solve

ROOT = Path(__file__).resolve().parents[1]
MODELS = sorted((ROOT / "models").glob("*.yaml"))
#: Solved twice (1 and 4 workers) instead of the full matrix: 8192 GPUs, 6.7 MB of output.
LARGE = {"synthetic_1024x8.yaml"}
WORKERS = (1, 2, 4)
RUNS = 3


def solved(path: Path, num_workers: int) -> Solution:
    """The model solved as it is meant to be read, with ``num_workers`` CP-SAT workers."""
    if not path.name.startswith("modelparallel_"):
        return solve(path, num_workers=num_workers)
    cls = HybridComponentPlacement if "hybrid" in path.name else ModelParallelComponentPlacement
    return cls(path, solver_options={"num_workers": num_workers}).solution


def output(solution: Solution) -> bytes:
    records = {name: [asdict(p) for p in placements] for name, placements in solution.placements_by_component().items()}
    return json.dumps(records).encode()


def digest(path: Path, num_workers: int = 1) -> str:
    return hashlib.sha256(output(solved(path, num_workers))).hexdigest()


#: The whole matrix (every model x runs x worker counts, other hash seeds) runs in CI and with
#: --runslow; the fast tier keeps tests/internals/solver's own worker-count check.
pytestmark = pytest.mark.slow

def test_models_are_there() -> None:
    assert len(MODELS) >= 25 and LARGE <= {path.name for path in MODELS}


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_same_bytes_for_every_run_and_worker_count(path: Path) -> None:
    matrix = [(1, 0), (4, 0)] if path.name in LARGE else [(w, run) for w in WORKERS for run in range(RUNS)]
    first = output(solved(path, 1))
    for workers, run in matrix:
        assert output(solved(path, workers)) == first, f"{path.name}: num_workers={workers}, run {run} differs"


def test_same_bytes_under_other_string_hash_seeds() -> None:
    """Set iteration order of strings depends on PYTHONHASHSEED; the output must not."""
    small = [path for path in MODELS if path.name not in LARGE]
    here = {path.name: digest(path) for path in small}
    script = (
        "import json, sys; from pathlib import Path; from tests.test_determinism import digest; "
        "print(json.dumps({Path(p).name: digest(Path(p)) for p in sys.argv[1:]}))"
    )
    for seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run([sys.executable, "-c", script, *map(str, small)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout) == here, f"PYTHONHASHSEED={seed}"


def test_replan_is_deterministic_across_worker_counts() -> None:
    before = solve({"cluster": {
        "num_nodes": 4, "num_gpus_per_node": [8, 8, 8, 0],
        "node_groups": [{"label": "gpu", "node_ranks": "0-2"}, {"label": "cpu", "node_ranks": 3}],
        "component_placement": {
            "actor": {"node_group": "gpu", "placement": "0-15", "tensor_parallel_size": 4},
            "rollout": {"node_group": "gpu", "processes": 8, "hardware_per_process": 2, "stride": "auto", "collocate_with": "actor"},
            "reward": {"node_group": "gpu", "placement": "16-19:0-7"},
            "env": {"node_group": "cpu", "placement": "0:0-3"},
        },
    }})
    outputs = {output(replan(before, [1], num_workers=workers)) for workers in WORKERS for _ in range(2)}
    assert len(outputs) == 1
