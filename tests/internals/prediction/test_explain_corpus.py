"""Every rank and every finding of the frameworks' own recorded cases is explained by a cited rule.

The corpora are those the differential tests compare against each framework's own code: slime's
scripts and edges, ROLL's example configs (main and v0.1.0), NeMo-RL's GRPO configs, SkyRL's
example overrides, OpenRLHF's example scripts of each release, AReaL's example configs. For each
case the library predicts, ``explain()`` must give every rank a reason that cites a rule of the
framework's code (never the plain reason left for ranks no rule covers) and every finding a cause
that cites one, so a new rank or finding kind a front end learns cannot go unexplained unnoticed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from helpers import ROOT

from solver_placement import Cluster, predict
from solver_placement._errors import PlacementError
from tests.internals.frontends.slime.cases import all_cases

DATA = ROOT / "tests" / "data"

#: A case: the framework, its input, the cluster (None: the input's own) and the release (None: the input's).
Case = tuple[str, Any, Cluster | None, str | None]


def _slime() -> Iterator[Case]:
    for case in all_cases().values():
        yield "slime", list(case.arguments), Cluster(num_nodes=len(case.gpus_per_node), num_gpus_per_node=list(case.gpus_per_node)), None


def _roll() -> Iterator[Case]:
    for path in sorted((DATA / "roll").glob("layouts*.json")):
        for case in json.loads(path.read_text())["cases"].values():
            yield "roll", case["config"], Cluster(num_nodes=len(case["nodes"]), num_gpus_per_node=case["nodes"]), case["release"]


def _nemo_rl() -> Iterator[Case]:
    for case in json.loads((DATA / "nemo_rl" / "layouts.json").read_text())["cases"].values():
        yield "nemo-rl", case["keys"], Cluster(num_nodes=len(case["nodes"]), num_gpus_per_node=case["nodes"]), None


def _skyrl() -> Iterator[Case]:
    for overrides in yaml.safe_load((ROOT / "tests" / "internals" / "frontends" / "skyrl" / "examples_v0_4_0.yaml").read_text()).values():
        yield "skyrl", overrides, None, None


def _openrlhf() -> Iterator[Case]:
    for release, recorded in json.loads((DATA / "openrlhf" / "examples.json").read_text()).items():
        for arguments in recorded["scripts"].values():
            yield "openrlhf", arguments, None, release


def _areal() -> Iterator[Case]:
    for config in json.loads((DATA / "areal" / "examples.json").read_text())["examples"].values():
        config = json.loads(json.dumps(config))
        if not config.get("allocation_mode"):  # the single controller, as AReaL's docs run it: scheduler.type=local
            config["scheduler"] = {**(config.get("scheduler") or {}), "type": "local"}
        yield "areal", config, Cluster(num_nodes=1, num_gpus_per_node=config.get("cluster", {}).get("n_gpus_per_node", 8)), None


CORPORA = {"slime": _slime, "roll": _roll, "nemo-rl": _nemo_rl, "skyrl": _skyrl, "openrlhf": _openrlhf, "areal": _areal}
#: Cases each corpus must explain at least (what it held when this test was written, less those refused).
LEAST_EXPLAINED = {"slime": 109, "roll": 165, "nemo-rl": 167, "skyrl": 36, "openrlhf": 24, "areal": 45}


@pytest.mark.parametrize("framework", sorted(CORPORA))
def test_every_recorded_rank_and_finding_has_a_cited_rule(framework: str) -> None:
    explained = 0
    for name, source, cluster, release in CORPORA[framework]():
        try:
            prediction = predict(name, source, cluster=cluster, release=release)
        except PlacementError:  # refused as the framework refuses it: the differential tests hold those
            continue
        explanation = prediction.explain()
        title = prediction.framework
        assert sum(len(entry.ranks) for entry in explanation.ranks) == len(prediction.ranks)
        assert all(entry.rule.startswith(title) for entry in explanation.ranks), [entry.role for entry in explanation.ranks if not entry.rule]
        assert all(chain.rule.startswith(title) for chain in explanation.chains), [chain.finding.describe() for chain in explanation.chains if not chain.rule]
        explained += 1
    assert explained >= LEAST_EXPLAINED[framework]
