"""Every example config of RLinf's latest release placed from its own folder, as a user places it
(``solver-placement solve examples/embodiment/config/X.yaml``, no hand step): how many place, and
why each other one does not, proven where the reason is RLinf's.

The examples are RLinf's v0.3 release (branch ``release/v0.3``, commit 05054318, 15 July 2026),
recorded unchanged as ``tests/data/rlinf_examples/RLinf-v0.3-0505431-examples.tar.gz``: every
``examples/**/*.yaml`` and RLinf's LICENSE (Apache-2.0), made by
``git archive --prefix=RLinf-0505431/ 0505431899574619da86f551bad70b71e0ea2177 -- ':(glob)examples/**/*.yaml' LICENSE | gzip -n -9``
(RLinf's PyPI files hold no examples). An example config is a file there that RLinf's entry
scripts start from: one with a ``cluster:`` section or a Hydra ``defaults:`` list (the others are
config groups those lists name: ``env/``, ``model/``, ...). Environment variables RLinf's run
scripts export (``EMBODIED_PATH``, ``REPO_PATH``) are unset, as in a fresh shell.

Measured with this test: 193 of 198 place (192 before ``env_configs`` could set
``OMP_NUM_THREADS``: RLinf passes a node group's variables to its workers and never sets that one
itself, ``rlinf/scheduler/cluster/cluster.py`` at 05054318, lines 698-711, so its isaaclab example
raising it was ours to read). Of the 5 others, 2 RLinf refuses itself, 1 is no placement config
(a torchrun script's), and 2 need ``REPO_PATH`` (the error names it and the folder to export, and
with it they place).

Solving all of them takes some 40 s of CPU (composing with Hydra is most of it), so the placing
run is ``slow`` and split into shards that test workers run side by side.
"""

from __future__ import annotations

import os
import tarfile
import warnings
from pathlib import Path

import pytest
import rlinf_shim
import yaml
from rlinf_builders import rlinf_cluster
from test_real_configs import rlinf_validate

from solver_placement import AssumedGpuCountWarning, PlacementConfigError, compose, solve

if not os.environ.get("SOLVER_PLACEMENT_REQUIRE_HYDRA"):
    pytest.importorskip("hydra")

ARCHIVE = Path(__file__).resolve().parents[2] / "data" / "rlinf_examples" / "RLinf-v0.3-0505431-examples.tar.gz"
#: The commit of RLinf's release/v0.3 the examples are from, and the archive's top folder (the
#: repository's root as RLinf's run scripts see it).
COMMIT, TOP = "0505431899574619da86f551bad70b71e0ea2177", "RLinf-0505431"
#: How many example configs the release has, and how many place from their own folder.
EXAMPLES, PLACED = 198, 193
WIDESEEK = "examples/agent/wideseek_r1/config"
#: Each example that does not place: (whose the reason is, what the refusal says).
NOT_PLACED = {
    # base_eval's actor,reward and rollout keys stay beside the file's own actor,rollout,reward (Hydra merges mappings):
    # RLinf's ComponentPlacement asserts each component is placed once (test below)
    f"{WIDESEEK}/eval_qwen3_qa.yaml": ("RLinf refuses it", "component 'actor' has a placement under two keys"),
    f"{WIDESEEK}/eval_qwen3_qa_2eng.yaml": ("RLinf refuses it", "component 'actor' has a placement under two keys"),
    # advantage computation run by torchrun: no cluster: section, nothing RLinf places
    "examples/recap/process/config/compute_advantages.yaml": ("no placement config", "cluster.component_placement is missing: nothing to place"),
    # their hydra.searchpath is ${oc.env:REPO_PATH}/examples/sft/config/, which run_cfg_sft.sh exports
    "examples/recap/cfg/config/libero_cfg_openpi.yaml": ("an unset variable", "environment variable REPO_PATH is not set; export REPO_PATH="),
    "examples/recap/value/config/libero_sft_value.yaml": ("an unset variable", "environment variable REPO_PATH is not set; export REPO_PATH="),
}  # fmt: skip
#: Shards of the placing run (each about 10 s of CPU).
SHARDS = 4


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The recorded examples, extracted (the archive is ours: no member leaves its folder)."""
    folder = tmp_path_factory.mktemp("rlinf_examples")
    with tarfile.open(ARCHIVE) as archive:
        assert archive.pax_headers["comment"] == COMMIT  # git archive records the commit it was made from
        members = archive.getmembers()
        inside = all((member.name == TOP or member.name.startswith(f"{TOP}/")) and ".." not in member.name for member in members)
        assert inside and all(member.isfile() or member.isdir() for member in members)
        archive.extractall(folder, members=members)
    return folder / TOP


@pytest.fixture(autouse=True)
def _fresh_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("EMBODIED_PATH", "REPO_PATH"):
        monkeypatch.delenv(variable, raising=False)


def examples(root: Path) -> list[str]:
    """The example configs: YAML files under ``examples/`` with a ``cluster:`` section or a ``defaults:`` list."""
    found = []
    for path in sorted(root.glob("examples/**/*.yaml")):
        loaded = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 (a safe loader: libyaml's when built)
        if isinstance(loaded, dict) and ("cluster" in loaded or "defaults" in loaded):
            found.append(path.relative_to(root).as_posix())
    return found


def test_the_release_has_the_examples_counted(root: Path) -> None:
    found = examples(root)
    assert len(found) == EXAMPLES and set(NOT_PLACED) <= set(found)
    assert EXAMPLES - len(NOT_PLACED) == PLACED


@pytest.mark.slow
@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_example_places_from_its_own_folder_but_those_named(root: Path, shard: int) -> None:
    for name in examples(root)[shard::SHARDS]:
        with warnings.catch_warnings(record=True) as caught_warnings:
            warnings.simplefilter("always")
            if name in NOT_PLACED:
                with pytest.raises(PlacementConfigError) as caught:
                    solve(root / name)
                assert NOT_PLACED[name][1] in str(caught.value), name
            else:
                assert solve(root / name).status in ("OPTIMAL", "FEASIBLE"), name
        # the only warning: no node size stated, so 8 GPUs a node are assumed (no misspelt component, no other surprise)
        assert {type(warning.message) for warning in caught_warnings} <= {AssumedGpuCountWarning}, (name, [str(w.message) for w in caught_warnings])


def test_rlinf_itself_refuses_a_component_placed_under_two_keys(root: Path) -> None:
    """RLinf 0.3.0's own ComponentPlacement on the composed config: the doubled placement is its refusal too."""
    rl = rlinf_shim.load()
    for name in (name for name, (whose, _) in NOT_PLACED.items() if whose == "RLinf refuses it"):
        path = root / name
        config = rlinf_validate(rl, compose(path.parent, path.stem))
        assert dict(config.cluster.component_placement) == {"actor,reward": "all", "rollout": "all", "actor,rollout,reward": "all"}
        with pytest.raises(AssertionError, match="Component actor has multiple placements defined"):
            rl.ComponentPlacement(config, rlinf_cluster(rl, config.cluster, [8]))


def test_the_unset_variable_is_named_with_the_folder_to_export_and_then_they_place(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unset = [name for name, (whose, _) in NOT_PLACED.items() if whose == "an unset variable"]
    for name in unset:
        with pytest.raises(PlacementConfigError, match=f"export REPO_PATH={root} \\(its examples/sft/config/ is there\\)"):
            solve(root / name)
    monkeypatch.setenv("REPO_PATH", str(root))  # what the message says, as RLinf's run_cfg_sft.sh does
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AssumedGpuCountWarning)
        assert [solve(root / name).status for name in unset] == ["OPTIMAL"] * len(unset)


def test_the_torchrun_config_has_nothing_to_place(root: Path) -> None:
    """RLinf's advantage computation runs under torchrun (its usage says so); composed, it has no cluster: section."""
    name = next(name for name, (whose, _) in NOT_PLACED.items() if whose == "no placement config")
    path = root / name
    assert "cluster" not in compose(path.parent, path.stem)
    assert "torchrun --nproc_per_node=4 compute_advantages.py" in path.read_text()
