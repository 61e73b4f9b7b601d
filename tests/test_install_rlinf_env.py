"""Installing solver_placement into an RLinf environment changes none of the packages RLinf pinned.

RLinf pins Hydra and OmegaConf: its install script asks for ``hydra-core<1.4.0.dev8``, for which
pip gives Hydra 1.3 (requiring ``omegaconf>=2.2,<2.4``), and its agentic extras pin
``hydra-core==1.4.0.dev1`` with ``omegaconf==2.4.0.dev4`` and ``numpy==2.2``. When our
OmegaConf range left out what such an environment holds, installing us upgraded OmegaConf under
Hydra and ``pip check`` reported Hydra broken (issue 22). Each case builds one such environment
in a fresh virtual environment, installs this package's wheel into it as a user would (the core
install, no extras) and checks that every package already there kept its version and that
``pip check`` is clean. The agentic case also shows that pip takes an installed pre-release
(``2.4.0.dev4``) as meeting our range, which names no pre-release.

Slow: each case installs from the package index (pip's cache serves repeated downloads).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from helpers import ROOT
from packaging.utils import canonicalize_name

#: The requirements of an RLinf environment, as RLinf pins them, by case.
RLINF_PINS = {
    "core": ["hydra-core<1.4.0.dev8", "numpy"],
    "agentic": ["hydra-core==1.4.0.dev1", "omegaconf==2.4.0.dev4", "numpy==2.2"],
}
#: Packages both RLinf's environment and our core requirements name, which each case must hold before we install.
SHARED = ["omegaconf", "hydra-core", "pyyaml", "numpy"]


def pip(python: Path, *args: str | Path) -> str:
    """Run the environment's own pip; its output, or a failure that shows what pip said."""
    done = subprocess.run([python, "-m", "pip", *args], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"pip {' '.join(map(str, args))} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def installed(python: Path) -> dict[str, str]:
    """Every distribution in the environment, by its normalized name, with its version (``pip freeze``, as data)."""
    return {canonicalize_name(entry["name"]): entry["version"] for entry in json.loads(pip(python, "list", "--format=json"))}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This package's wheel, built once for every case from a copy of what the build reads (the
    build writes into its source tree, which others are using)."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "solver_placement", source / "solver_placement", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", root, source], check=True, timeout=900)
    return next(root.glob("*.whl"))


@pytest.mark.slow
@pytest.mark.parametrize("pins", RLINF_PINS.values(), ids=RLINF_PINS.keys())
def test_installing_into_an_rlinf_environment_changes_none_of_its_packages(pins: list[str], wheel: Path, tmp_path: Path) -> None:
    environment = tmp_path / "rlinf"
    venv.create(environment, with_pip=True)
    python = environment / "bin" / "python"
    pip(python, "install", "-q", "--no-compile", *pins)  # versions are the question, not bytecode
    before = installed(python)
    assert set(SHARED) <= before.keys(), before

    pip(python, "install", "-q", "--no-compile", wheel)
    after = installed(python)
    assert "solver-placement" in after
    changed = {name: f"{version} -> {after.get(name, 'removed')}" for name, version in before.items() if after.get(name) != version}
    assert not changed, f"installing solver_placement changed RLinf's environment: {changed}"
    check = subprocess.run([python, "-m", "pip", "check"], capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout
