"""Differential: the front end's prediction against NeMo-RL's own placement code, rank by rank.

``tests/data/nemo_rl/layouts.json`` holds NeMo-RL's answers (``regenerate.py`` ran its config
loader, ``grpo.setup``'s cluster section, ``RayVirtualCluster`` and ``VllmGeneration``'s engine
grouping on a recorded Ray, at the commit it names) for every GRPO example config of its
repository the library reads, on the nodes each states, those with ``cluster.segment_size`` again
on NVL72 racks (``@nvl72``: the nodes carry NVLink domains and ``topo_rank``, as node labels
here), and for hand-made edges. Each case is predicted here from the placement keys NeMo-RL loaded, on the same nodes, and
compared rank by rank: node, GPU and bundle of every policy and reward-model rank, and of every
vLLM rank or SGLang GPU process with its engine; a case NeMo-RL refuses must be refused here (or found pending, for its total-GPU check),
and one it waits on forever must be found pending.

With ``NEMO_RL_SOURCE`` naming a checkout of NeMo-RL, the live test reruns its code on the edges.
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

from solver_placement import Cluster, PlacementError
from solver_placement._frontends.nemo_rl.releases import COMMIT
from solver_placement._frontends.nemo_rl.segments import DOMAIN_LABEL, TOPO_RANK_LABEL
from solver_placement._prediction.findings import FindingKind
from solver_placement._prediction.layout import Prediction
from solver_placement._prediction.predict import predict

RECORDED = json.loads((ROOT / "tests" / "data" / "nemo_rl" / "layouts.json").read_text())
CASES: dict[str, dict[str, Any]] = RECORDED["cases"]
DRIVER = Path(__file__).with_name("nemo_rl_driver.py")


def _labels(case: dict[str, Any]) -> list[dict[str, str]]:
    """The recorded topology (per node ``[domain, topo_rank]``) as the node labels the front end reads."""
    return [
        {key: str(value) for key, value in ((DOMAIN_LABEL, domain), (TOPO_RANK_LABEL, rank)) if value} for domain, rank in case.get("topology") or []
    ] or [{}] * len(case["nodes"])


def _predicted(case: dict[str, Any]) -> Prediction | str:
    try:
        return predict(
            "nemo-rl", case["keys"], cluster=Cluster(num_nodes=len(case["nodes"]), num_gpus_per_node=case["nodes"], node_labels=_labels(case))
        )
    except PlacementError as error:
        return str(error)


def test_the_recording_is_of_the_commit_the_front_end_reads() -> None:
    assert RECORDED["commit"] == COMMIT
    assert sum(not name.startswith("examples/") for name in CASES) >= 20 and sum(name.startswith("examples/") for name in CASES) >= 200
    assert sum(bool(case.get("keys", {}).get("cluster", {}).get("segment_size")) for case in CASES.values()) >= 50


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_front_end_places_every_rank_where_nemo_rl_does(name: str) -> None:
    case = CASES[name]
    ours = _predicted(case)
    if "refused" in case:
        if "Maximum number of retries" in case["refused"]:  # the total-GPU check: found pending
            assert isinstance(ours, Prediction) and any("ResourceInsufficientError" in f.message for f in ours.errors)
        else:
            assert isinstance(ours, str) and case["refused"].split(": ", 1)[1][:60] in ours
        return
    assert isinstance(ours, Prediction), ours
    if "pending" in case:
        assert any(finding.kind == FindingKind.PENDING for finding in ours.errors)
        return
    assert [[r.node, r.gpus[0], r.bundle] for r in ours.of_role("policy")] == case["policy"]
    assert [[r.node, r.gpus[0], r.bundle] for r in ours.of_role("reward_model")] == case.get("reward_model", [])
    if "generation" not in case["keys"]["policy"]:  # SFT, DPO, RM: a policy only
        assert not ours.of_role("generation")
        return
    if case["keys"]["policy"]["generation"]["backend"] == "megatron":  # Megatron generation workers: no engine, compared by place
        assert [[r.node, r.gpus[0], r.bundle, -1] for r in ours.of_role("generation")] == case["generation"]
        return
    assert [[r.node, r.gpus[0], r.bundle, -1 if r.engine is None else r.engine] for r in ours.of_role("generation")] == case["generation"]


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("NEMO_RL_SOURCE"), reason="NEMO_RL_SOURCE names no NeMo-RL checkout")
@pytest.mark.parametrize("name", sorted(name for name in CASES if not name.startswith("examples/")))
def test_nemo_rl_s_code_still_answers_as_recorded(name: str) -> None:
    source = Path(os.environ["NEMO_RL_SOURCE"])
    case = CASES[name]
    asked = {"config": str(source / case.get("config", "examples/configs/grpo_math_1B.yaml")), "overrides": case["overrides"], "nodes": case["nodes"], "topology": case.get("topology")}
    done = subprocess.run([sys.executable, str(DRIVER), str(source), json.dumps(asked)], capture_output=True, text=True, timeout=300, check=True)
    live = json.loads(done.stdout.strip().splitlines()[-1])
    assert {key: value for key, value in live.items()} == {key: value for key, value in case.items() if key not in ("nodes", "overrides", "topology", "config")}
