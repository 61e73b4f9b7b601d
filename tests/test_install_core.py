"""The core install: parse, solve, explain and verify need neither Ray nor matplotlib, and the
features that do need them say which extra to install.

The fast tests block ``ray`` and ``matplotlib`` in a subprocess with a meta-path finder that also
records every attempt to import them, so a core path that merely *tries* (and catches the
failure) is caught too. The slow test builds the wheel (pip fetches the build backend, as on a
fresh machine), installs it without extras into a fresh virtual environment that holds only the
core dependencies (linked from this environment, so they are not downloaded again) and runs the
installed command.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import venv
from importlib import metadata
from pathlib import Path

import pytest
from helpers import MODELS, ROOT
from packaging.requirements import Requirement

#: Runs first in the subprocess: refuse (and log on stderr) every import of the optional extras.
BLOCKER = """
import importlib.abc, sys
class _Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {"ray", "matplotlib"}:
            print(f"BLOCKED IMPORT {name}", file=sys.stderr)
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)", name=name)
        return None
sys.meta_path.insert(0, _Blocked())
"""
CLI = BLOCKER + "from solver_placement._cli import main\nmain()\n"
EXTRAS = {"ray", "matplotlib"}


def blocked(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)


def test_library_solves_explains_and_verifies_without_ray_or_matplotlib() -> None:
    code = BLOCKER + """
import solver_placement as sp
solution = sp.solve("models/quickstart.yaml")
sp.verify(solution.spec, solution.placements_by_component())
print(len(solution.placements("actor")), sp.placement_for_config("models/modelparallel_collocated_tp4_tp2_1x8.yaml").placement_mode.name)
try:
    sp.solve("models/invalid/not_multiple.yaml")
except sp.PlacementError:
    print("refused")
print(sorted(name for name in sys.modules if name.partition(".")[0] in {"ray", "matplotlib"}))
"""
    result = blocked(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:3] == ["16 COLLOCATED", "refused", "[]"]
    assert "BLOCKED IMPORT" not in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["solve", "models/quickstart.yaml", "--format", "json"],
        ["explain", "models/quickstart.yaml", "--format", "json"],
        ["solve", "models/verl_pools_2x8.yaml", "--format", "json"],
        ["auto", "models/auto_reference_16x8.yaml", "--format", "json"],
        ["launch", "models/quickstart.yaml", "--format", "json"],  # a dry run asks Ray nothing without a required topology domain
    ],
)
def test_cli_core_commands_never_import_ray_or_matplotlib(args: list[str]) -> None:
    result = blocked(CLI, *args)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["command"] == args[0]
    assert "BLOCKED IMPORT" not in result.stderr


def test_plot_without_matplotlib_names_the_extra(tmp_path: Path) -> None:
    result = blocked(CLI, "plot", "models/quickstart.yaml", "-o", str(tmp_path / "x.png"))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "error: matplotlib is not installed; drawing placements needs it: pip install 'solver_placement[plot]'"
    )


def test_launch_run_without_ray_names_the_extra() -> None:
    result = blocked(CLI, "launch", "models/quickstart.yaml", "--run")
    assert result.returncode != 0 and "pip install 'solver_placement[ray]'" in result.stderr
    assert "Traceback" not in result.stderr


# ------------------------------------------------------------------------ fresh environment
def core_distributions() -> list[metadata.Distribution]:
    """The core requirements in pyproject.toml and everything they require (no extras), as installed here."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [Requirement(line) for line in project["dependencies"]]
    found: dict[str, metadata.Distribution] = {}
    while wanted:
        requirement = wanted.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        dist = metadata.distribution(requirement.name)
        key = dist.metadata["Name"].lower().replace("_", "-")
        if key not in found:
            found[key] = dist
            wanted += [Requirement(line) for line in dist.requires or []]
    return list(found.values())


def link_distributions(dists: list[metadata.Distribution], target: Path) -> None:
    """Symlink each distribution's top-level files (packages, modules, dist-info) into ``target``."""
    target.mkdir()
    for dist in dists:
        site = Path(str(dist.locate_file("")))
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in tops:
            if not (target / top).exists() and (site / top).exists():
                (target / top).symlink_to(site / top)


@pytest.mark.slow
def test_a_fresh_core_install_solves_explains_and_verifies(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", "__pycache__", "notebooks"))
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", wheels, source], check=True)
    fresh = tmp_path / "fresh"
    venv.create(fresh, with_pip=True)
    python, command = fresh / "bin" / "python", fresh / "bin" / "solver-placement"
    site = Path(subprocess.check_output([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip())
    link_distributions(core_distributions(), tmp_path / "core")
    (site / "core_dependencies.pth").write_text(f"{tmp_path / 'core'}\n")
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", *wheels.glob("*.whl")], check=True)

    listing = "import importlib.metadata as m, json; print(json.dumps([d.metadata['Name'].lower() for d in m.distributions()]))"
    installed = set(json.loads(subprocess.check_output([python, "-c", listing], text=True)))
    assert "solver-placement" in installed or "solver_placement" in installed
    assert not EXTRAS & installed, installed
    assert subprocess.run([python, "-m", "pip", "check"], capture_output=True, text=True).returncode == 0
    workdir = tmp_path / "work"
    shutil.copytree(MODELS, workdir / "models")
    run = {"cwd": workdir, "capture_output": True, "text": True}
    solved = subprocess.run([command, "solve", "models/quickstart.yaml", "--format", "json"], **run)
    assert solved.returncode == 0, solved.stderr
    assert len(json.loads(solved.stdout)["components"]["actor"]) == 16
    explained = subprocess.run([command, "explain", "models/quickstart.yaml"], **run)
    assert explained.stdout.startswith("models/quickstart.yaml: valid;"), explained.stderr
    assert subprocess.run([command, "explain", "models/invalid/process_spans_nodes_gpu.yaml"], **run).returncode == 3
    verified = subprocess.run([python, "-c", "import solver_placement as sp; s = sp.solve('models/quickstart.yaml'); "
                               "sp.verify(s.spec, s.placements_by_component()); print('verified')"], **run)  # fmt: skip
    assert verified.stdout == "verified\n", verified.stderr
    plotted = subprocess.run([command, "plot", "models/quickstart.yaml", "-o", "x.png"], **run)
    assert plotted.returncode == 2 and "pip install 'solver_placement[plot]'" in plotted.stderr
