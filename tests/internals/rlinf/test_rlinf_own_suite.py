"""RLinf's own placement tests, run on solver_placement's classes (opt-in: needs RLinf's source).

RLinf's ``tests/unit_tests/test_placement.py`` (38 tests at RLinf commit a3816b5) is not part of
the released package, so this runs only when ``RLINF_SOURCE`` names a checkout of RLinf's
repository. The file is copied into a scratch directory (away from RLinf's ``conftest``/``pytest.ini``)
and run in a fresh interpreter with :mod:`rlinf_swap_plugin`, which hands RLinf's tests our
strategies and component placements while they keep building RLinf's own cluster objects.
Every test must pass.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import rlinf_shim

SOURCE = os.environ.get("RLINF_SOURCE")
TESTS = Path(SOURCE or ".") / "tests" / "unit_tests" / "test_placement.py"


@pytest.mark.skipif(not SOURCE, reason="set RLINF_SOURCE to a checkout of RLinf's repository to run its placement tests")
def test_rlinfs_placement_tests_pass_on_our_classes(tmp_path: Path) -> None:
    reason = rlinf_shim.skip_reason()
    if reason is not None:
        pytest.skip(reason)
    if not TESTS.is_file():
        pytest.fail(f"RLINF_SOURCE={SOURCE} holds no tests/unit_tests/test_placement.py")
    shutil.copy(TESTS, tmp_path / "test_placement.py")
    here = str(Path(__file__).resolve().parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "rlinf_swap_plugin", "test_placement.py"]
    result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else result.stderr
    assert result.returncode == 0, f"RLinf's placement tests on our classes: {summary}\n{result.stdout[-4000:]}"
    assert " passed" in summary and "failed" not in summary, summary
