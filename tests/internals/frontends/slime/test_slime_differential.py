"""The library's prediction of slime's layout against slime's own code, rank by rank.

``tests/data/slime/layouts.json`` holds what slime's own argument and placement code did with
each case of ``cases.py`` (its example scripts' flags, and hand-made edges), recorded by
``regenerate.py`` with the slime commit (``slime_driver.py`` says what is stubbed). Every case is
predicted here and compared: the bundles Ray lands, each train rank's bundle, node, GPU and share,
each SGLang engine actor's bundle, node, ``base_gpu_id``, node part and host, and the GPUs its
server drives; a placement group that never fits, and inputs slime refuses. With
``SLIME_SOURCE`` naming a slime checkout, slime's code is also run live and must still give the
recorded layouts (so a change in slime shows here as a diff).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import PlacementConfigError
from solver_placement._frontends.slime.job import job_from_arguments
from solver_placement._frontends.slime.known_flags import SLIME_COMMIT
from solver_placement._frontends.slime.layout import SlimeLayout, slime_layout
from solver_placement._prediction.layout import Prediction
from solver_placement._prediction.predict import predict
from tests.internals.frontends.slime.cases import EDGES, all_cases, script_cases, small_node_cases
from tests.internals.frontends.slime.run_slime import run_slime

LAYOUTS = Path(__file__).resolve().parents[3] / "data" / "slime" / "layouts.json"
RECORDED: dict[str, Any] = json.loads(LAYOUTS.read_text())
CASES = all_cases()

#: Cases the library refuses although slime's stubbed code runs them: Megatron's own check
#: (stubbed in the driver) refuses the first.
REFUSED_HERE_ONLY = {"Megatron sizes that do not divide the actor"}


def test_the_recording_is_of_the_commit_the_rules_read() -> None:
    assert RECORDED["slime_commit"] == SLIME_COMMIT
    assert set(RECORDED["cases"]) == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_prediction_matches_slime(name: str) -> None:
    case, recorded = CASES[name], RECORDED["cases"][name]
    if "refused" in recorded or "failed" in recorded or name in REFUSED_HERE_ONLY:
        with pytest.raises(PlacementConfigError):
            job_from_arguments(case.arguments)
        return
    layout = slime_layout(job_from_arguments(case.arguments), Cluster(num_nodes=len(case.gpus_per_node), num_gpus_per_node=list(case.gpus_per_node)))
    assert _observed(layout) == _expected(recorded)


def _expected(recorded: dict[str, Any]) -> dict[str, Any]:
    """What slime's code did, in the comparison's terms."""
    if recorded["pending"]:
        return {"pending": True}
    bundles = [tuple(bundle) for bundle in recorded["bundles"]]
    train = {(rank["role"], rank["rank"]): (rank["bundle"], *bundles[rank["bundle"]], rank["num_gpus"]) for rank in recorded["train"]}
    engines = {}
    for engine in recorded["engines"]:
        node, base = bundles[engine["bundle"]][0], engine["base_gpu_id"]
        per_node = engine["tp_size"] * engine["pp_size"] // engine["nnodes"]  # SGLang: tp x pp GPUs over nnodes, from base_gpu_id
        engines[engine["rank"]] = (
            engine["worker_type"], engine["bundle"], node, base, engine["nnodes"], engine["node_rank"], engine["host_node"],
            tuple(range(base, base + per_node)), engine["num_gpus"],
        )  # fmt: skip
    return {"pending": False, "bundles": sorted(bundles), "train": train, "engines": engines}


def _observed(layout: SlimeLayout) -> dict[str, Any]:
    """The prediction, in the same terms: the public ranks, and the engines' told hosts."""
    if layout.slots is None:
        return {"pending": True}
    train = {(rank.role, rank.rank): (rank.bundle, rank.node, rank.gpus[0], rank.gpu_share) for rank in layout.ranks if rank.role != "rollout"}
    driven: dict[int | None, list[int]] = {}
    shares: dict[int | None, float] = {}
    position = 0
    rollout = [rank for rank in layout.ranks if rank.role == "rollout"]
    engines = {}
    for actor in layout.engines:
        mine = rollout[position : position + actor.processes]
        position += actor.processes
        driven[actor.rank] = [gpu for rank in mine for gpu in rank.gpus]
        shares[actor.rank] = mine[0].gpu_share
        assert {rank.node for rank in mine} == {actor.node}
        engines[actor.rank] = (
            actor.worker_type, mine[0].bundle, actor.node, actor.base_gpu, actor.nnodes, actor.node_rank, actor.told_host,
            tuple(driven[actor.rank]), shares[actor.rank],
        )  # fmt: skip
    bundles = sorted((slot.node, slot.gpu) for slot in layout.slots)
    return {"pending": False, "bundles": bundles, "train": train, "engines": engines}


def test_edges_show_what_they_are_named_for() -> None:
    """The recorded edges really exercise slime's quirks (a regeneration that loses one fails here)."""
    cases = RECORDED["cases"]
    wrong_host = cases["default --num-gpus-per-node 8 on 4-GPU nodes: wrong host"]
    bundles = wrong_host["bundles"]
    assert any(bundles[engine["bundle"]][0] != engine["host_node"] for engine in wrong_host["engines"])
    past = cases["default --num-gpus-per-node 8 on 4-GPU nodes: engine past the node's GPUs"]["engines"][0]
    assert past["tp_size"] == 8 and past["nnodes"] == 1
    assert cases["a value after a switch is dropped"]["engines"], "--colocate false still colocates"
    assert len(cases["the last occurrence wins, --flag=value"]["train"]) == 4
    assert "refused" in cases["a switch given a value"]


@pytest.mark.skipif(not os.environ.get("SLIME_SOURCE"), reason="SLIME_SOURCE names no slime checkout")
def test_slime_still_gives_the_recorded_layouts() -> None:
    live = run_slime(Path(os.environ["SLIME_SOURCE"]), list(CASES.values()))
    assert dict(zip(CASES, live, strict=True)) == RECORDED["cases"]


def test_the_edges_are_all_recorded() -> None:
    assert set(EDGES) <= set(RECORDED["cases"])


@pytest.mark.parametrize("name", sorted(script_cases()))
def test_slimes_own_scripts_run_on_the_clusters_they_state(name: str) -> None:
    """slime's launch scripts, on nodes of their --num-gpus-per-node GPUs, have no finding."""
    assert _predicted(name).findings == (), _predicted(name).report()


@pytest.mark.parametrize("name", sorted(small_node_cases()))
def test_slimes_own_scripts_on_smaller_nodes_get_checked_fixes(name: str) -> None:
    """On 4-GPU nodes, every finding on a slime script comes with a fix ``predict`` checked."""
    prediction = _predicted(name)
    assert all(finding.fix for finding in prediction.findings), prediction.report()


def _predicted(name: str) -> Prediction:
    case = CASES[name]
    return predict("slime", list(case.arguments), cluster=Cluster(num_nodes=len(case.gpus_per_node), num_gpus_per_node=list(case.gpus_per_node)))
