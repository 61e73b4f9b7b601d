"""The answer's header line says how good an unproven answer is and what produced it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from helpers import cli_runner
from internals.solver.flat_model import counts_kept_out

from solver_placement._cli import main

#: Ten components in a chain of exclusivity on 21 nodes of 8 GPUs and 16 of 4, and a rank string
#: on the last GPU with ``memory_gb``. The count model proves it in a fraction of a second; kept
#: out (``counts_kept_out``), the flat model finds nothing better in a second, so first fit
#: answers, above the counting bound.
CHAIN = ["actor", "critic", "reward", "ref", "judge", "teacher", "student", "scorer", "verifier", "planner"]
SIZES = {"reward": (70, "big"), "ref": (26, "small"), "scorer": (72, "big"), "planner": (26, "small")}


def chained() -> dict:
    placement: dict = {}
    for index, name in enumerate(CHAIN):
        processes, group = SIZES.get(name, (98, None))
        body: dict = {"processes": processes, "tensor_parallel_size": 4 if name == "scorer" else 2}
        if group:
            body["node_group"] = group
        if index:
            body["exclusive_with"] = [CHAIN[index - 1]]
        placement[name] = body
    placement["probe"] = {"placement": "231", "memory_gb": 1}
    placement["scorer_rollout"] = {"processes": 36, "hardware_per_process": 2, "stride": "auto", "collocate_with": "scorer"}
    return {"cluster": {
        "num_nodes": 37, "num_gpus_per_node": [8] * 21 + [4] * 16, "gpu_memory_gb": [80] * 21 + [40] * 16,
        "node_groups": [{"label": "big", "node_ranks": "0-20"}, {"label": "small", "node_ranks": "21-36"}],
        "component_placement": placement,
    }}


def test_an_unproven_answer_says_its_gap_and_what_made_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counts_kept_out(monkeypatch)
    path = tmp_path / "chain.yaml"
    path.write_text(yaml.safe_dump(chained()))
    result = cli_runner().invoke(main, ["solve", str(path), "--time-limit", "1"])
    assert result.exit_code == 0, result.stderr
    header = result.stdout.splitlines()[0]
    assert "; feasible (gap " in header and "%, first fit) in " in header, header
