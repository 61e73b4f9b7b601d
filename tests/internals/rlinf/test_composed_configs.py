"""RLinf's example configs with a Hydra ``defaults:`` list compose from their own folder, with no
hand step, and give RLinf 0.3.0's own placements (compared as ``test_real_configs`` compares).

The files in ``tests/data/rlinf_hydra`` are RLinf's ``examples/*/config`` files with the config
groups their defaults lists name (origin and commit in each header): embodied (ManiSkill, LIBERO,
BEHAVIOR, an async one, all FSDP) and an FSDP reasoning config whose defaults step out of its
folder (``../hybrid_engines/fsdp``). ``EMBODIED_PATH`` is unset, so their ``hydra.searchpath``
entry is left out, and their own folder holds every group they name.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import rlinf_shim
from rlinf_builders import records, rlinf_cluster
from test_real_configs import rlinf_validate

import solver_placement
from solver_placement import compose, solve
from solver_placement._config import load_config

if not os.environ.get("SOLVER_PLACEMENT_REQUIRE_HYDRA"):
    pytest.importorskip("hydra")

DATA = Path(__file__).resolve().parents[2] / "data" / "rlinf_hydra"

#: (folder, config name) -> (RLinf's placement class, GPUs per node)
COMPOSED = {
    ("embodiment/config", "maniskill_ppo_openvlaoft"): ("HybridComponentPlacement", [8]),
    ("embodiment/config", "libero_10_grpo_openvlaoft"): ("HybridComponentPlacement", [8]),
    ("embodiment/config", "behavior_ppo_openvlaoft"): ("HybridComponentPlacement", [8]),
    ("embodiment/config", "maniskill_async_ppo_mlp"): ("HybridComponentPlacement", [8]),
    ("reasoning/config/math", "qwen2.5-1.5b-grpo-fsdp"): ("ModelParallelComponentPlacement", [8]),
}


@pytest.fixture(autouse=True)
def _no_embodied_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EMBODIED_PATH", raising=False)


@pytest.mark.parametrize(("folder", "name"), sorted(COMPOSED))
def test_a_file_with_defaults_composes_from_its_folder_and_places(folder: str, name: str) -> None:
    path = DATA / folder / f"{name}.yaml"
    composed = compose(DATA / folder, name)
    assert "defaults" not in composed and "hydra" not in composed
    assert load_config(path) == load_config(composed)  # the file given directly is composed the same way
    assert "model" in composed["actor"]  # what the defaults bring is there
    with pytest.warns(solver_placement.AssumedGpuCountWarning):
        assert solve(path).status in ("OPTIMAL", "FEASIBLE")


@pytest.mark.parametrize(("folder", "name"), sorted(COMPOSED))
def test_composed_configs_give_rlinfs_placements(folder: str, name: str) -> None:
    rl = rlinf_shim.load()
    kind, gpus = COMPOSED[(folder, name)]
    config = rlinf_validate(rl, compose(DATA / folder, name))
    cluster = rlinf_cluster(rl, config.cluster, gpus)
    theirs = getattr(rl, kind)(config, cluster)
    ours = getattr(solver_placement, kind)(compose(DATA / folder, name), cluster)
    assert ours.components == theirs.components
    assert getattr(ours.placement_mode, "name", None) == getattr(theirs.placement_mode, "name", None)
    for component in theirs.components:
        expected = records(theirs.get_strategy(component).get_placement(cluster))
        assert records(ours.get_strategy(component).get_placement(cluster)) == expected, component


def test_overrides_are_hydras_and_apply_to_the_composed_config() -> None:
    folder = DATA / "embodiment/config"
    composed = compose(folder, "maniskill_ppo_openvlaoft", ["cluster.num_nodes=2", "cluster.component_placement.actor=0-15", "++actor.seed=7", "+actor.new_key=1"])
    plain = load_config(composed)
    assert plain["cluster"]["num_nodes"] == 2 and plain["actor"]["seed"] == 7 and plain["actor"]["new_key"] == 1
    assert load_config(solver_placement.apply_overrides(folder / "maniskill_ppo_openvlaoft.yaml", ["cluster.num_nodes=2"]))["cluster"]["num_nodes"] == 2
