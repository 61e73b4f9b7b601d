"""Composing Hydra configs (``_compose``): groups, ``_self_`` order, overrides in Hydra's grammar,
the command line's ``--config-path``/``--config-name``, the input limits, a missing Hydra, and
unset environment variables named where placement reads them."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from helpers import cli_runner

from solver_placement import PlacementConfigError, YamlText, compose, limits, solve
from solver_placement._cli import main
from solver_placement._config import load_config

if not os.environ.get("SOLVER_PLACEMENT_REQUIRE_HYDRA"):
    pytest.importorskip("hydra")

CLUSTER = "# @package _global_\ncluster:\n  num_nodes: 1\n  num_gpus_per_node: 8\n  component_placement:\n    actor: 0-{last}\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A primary config taking its cluster from a group, and a model from a group under a package."""
    (tmp_path / "size").mkdir()
    (tmp_path / "model").mkdir()
    (tmp_path / "size" / "small.yaml").write_text(CLUSTER.format(last=3))
    (tmp_path / "size" / "big.yaml").write_text(CLUSTER.format(last=7))
    (tmp_path / "model" / "mlp.yaml").write_text("hidden: 64\n")
    (tmp_path / "job.yaml").write_text("defaults:\n  - size: small\n  - model/mlp@actor.model\n  - _self_\nactor:\n  lr: 0.1\n")
    return tmp_path


def test_groups_packages_and_group_overrides_compose_as_hydra_composes(folder: Path) -> None:
    plain = load_config(compose(folder, "job"))
    assert plain["cluster"]["component_placement"]["actor"] == "0-3" and plain["actor"] == {"model": {"hidden": 64}, "lr": 0.1}
    assert load_config(compose(folder, "job.yaml", ["size=big"]))["cluster"]["component_placement"]["actor"] == "0-7"
    assert [p.rank for p in solve(folder / "job.yaml").placements("actor")] == [0, 1, 2, 3]


def test_self_first_lets_the_defaults_win(folder: Path) -> None:
    (folder / "first.yaml").write_text("defaults:\n  - _self_\n  - size: small\ncluster:\n  num_nodes: 5\n")
    (folder / "last.yaml").write_text("defaults:\n  - size: small\n  - _self_\ncluster:\n  num_nodes: 5\n")
    assert load_config(compose(folder, "first"))["cluster"]["num_nodes"] == 1
    assert load_config(compose(folder, "last"))["cluster"]["num_nodes"] == 5


def test_hydras_errors_are_placement_config_errors(folder: Path) -> None:
    with pytest.raises(PlacementConfigError, match=r"composing config 'job' .* with Hydra: .*size"):
        compose(folder, "job", ["size=huge"])
    with pytest.raises(PlacementConfigError, match="is not a folder"):
        compose(folder / "job.yaml", "job")
    with pytest.raises(PlacementConfigError, match="overrides must be a list of strings"):
        compose(folder, "job", "size=big")  # type: ignore[arg-type]


def test_an_unset_searchpath_variable_is_named_when_a_config_is_missing(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOMEWHERE_UNSET", raising=False)
    (folder / "far.yaml").write_text("defaults:\n  - elsewhere/x\nhydra:\n  searchpath:\n    - file://${oc.env:SOMEWHERE_UNSET}/config\n")
    with pytest.raises(PlacementConfigError, match=r"hydra\.searchpath entries left out: .*environment variable SOMEWHERE_UNSET is not set"):
        compose(folder, "far")
    (folder / "other" / "elsewhere").mkdir(parents=True)
    (folder / "other" / "elsewhere" / "x.yaml").write_text(CLUSTER.format(last=1))
    monkeypatch.setenv("SOMEWHERE_UNSET", str(folder / "other"))
    (folder / "far.yaml").write_text("defaults:\n  - elsewhere/x\nhydra:\n  searchpath:\n    - file://${oc.env:SOMEWHERE_UNSET}\n")
    assert load_config(compose(folder, "far"))["cluster"]["num_nodes"] == 1


def test_text_and_stdin_cannot_compose_and_without_hydra_the_extra_is_named(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(PlacementConfigError, match=r"has a Hydra defaults: list.*\('size: small'|has a Hydra defaults: list.*give the file's path"):
        load_config(YamlText((folder / "job.yaml").read_text()))
    monkeypatch.setitem(sys.modules, "hydra", None)
    with pytest.raises(PlacementConfigError, match=r"has a Hydra defaults: list, which composes other files into it .*pip install 'solver_placement\[hydra\]'.*--cfg job"):
        load_config(folder / "job.yaml")
    with pytest.raises(PlacementConfigError, match=r"needs Hydra: pip install 'solver_placement\[hydra\]'"):
        compose(folder, "job")


def test_composing_is_bounded_before_hydra_reads(folder: Path) -> None:
    with limits.override(max_config_files=3), pytest.raises(PlacementConfigError, match="above the limit max_config_files=3"):
        compose(folder, "job")
    with limits.override(max_file_bytes=20), pytest.raises(PlacementConfigError, match="max_file_bytes"):
        compose(folder, "job")
    levels = 30  # each level names the next twice: a tree of 2**30 configs from 31 small files
    (folder / "bomb").mkdir()
    for level in range(levels):
        (folder / "bomb" / f"l{level}.yaml").write_text(f"defaults:\n  - l{level + 1}@a\n  - l{level + 1}@b\n")
    (folder / "bomb" / f"l{levels}.yaml").write_text("x: 1\n")
    (folder / "boom.yaml").write_text("defaults:\n  - bomb/l0\n")
    with pytest.raises(PlacementConfigError, match="above the limit max_composed_configs="):
        compose(folder, "boom")
    with pytest.raises(PlacementConfigError, match="above the limit max_composed_configs="):
        compose(folder, "job", ["+bomb=l0"])  # a group the command line adds is measured too
    (folder / "loop").mkdir()
    (folder / "loop" / "a.yaml").write_text("defaults:\n  - b\n")
    (folder / "loop" / "b.yaml").write_text("defaults:\n  - a\n")
    (folder / "loops.yaml").write_text("defaults:\n  - loop/a\n")
    with pytest.raises(PlacementConfigError, match="include each other"):
        compose(folder, "loops")


def test_compose_inside_a_running_hydra_app_leaves_it_as_it_was(folder: Path) -> None:
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    with initialize_config_dir(config_dir=str(folder), version_base=None):
        running = GlobalHydra.instance().hydra
        assert load_config(compose(folder, "job"))["actor"]["lr"] == 0.1
        assert GlobalHydra.instance().hydra is running
    assert not GlobalHydra.instance().is_initialized()


def test_the_command_line_composes_file_and_config_name(folder: Path) -> None:
    runner = cli_runner()
    direct = runner.invoke(main, ["explain", str(folder / "job.yaml"), "size=big"])
    assert direct.exit_code == 0 and "actor 8" in direct.output, direct.output
    for flags in (["--config-path", str(folder), "--config-name", "job"], ["-cp", str(folder), "-cn", "job"]):
        named = runner.invoke(main, ["solve", *flags, "size=big", "--format", "json"])
        assert named.exit_code == 0 and named.output.count('"rank"') == 8, named.output
    half = runner.invoke(main, ["solve", "--config-name", "job"])
    assert half.exit_code == 2 and "--config-path DIR and --config-name NAME together" in half.stderr
    neither = runner.invoke(main, ["solve"])
    assert neither.exit_code == 2 and "give FILE" in neither.stderr


def test_an_unset_environment_variable_is_named_where_placement_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NUM_NODES_OF_THIS_TEST", raising=False)
    (tmp_path / "env.yaml").write_text(CLUSTER.format(last=3).replace("num_nodes: 1", "num_nodes: ${oc.env:NUM_NODES_OF_THIS_TEST}") + "path: ${oc.env:NUM_NODES_OF_THIS_TEST}/x\n")
    with pytest.raises(PlacementConfigError, match=r"cluster\.num_nodes must be an integer, not <unresolved cluster\.num_nodes: environment variable NUM_NODES_OF_THIS_TEST is not set"):
        solve(tmp_path / "env.yaml")
    result = cli_runner().invoke(main, ["solve", str(tmp_path / "env.yaml")])
    assert result.exit_code == 2 and "environment variable NUM_NODES_OF_THIS_TEST is not set" in result.stderr
