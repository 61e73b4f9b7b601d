"""Run ``slime_driver.py`` on cases in a subprocess with a slime checkout first on its path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.internals.frontends.slime.cases import Case

DRIVER = Path(__file__).resolve().parent / "slime_driver.py"
#: Seconds the driver may take for all cases (slime's imports and a few hundred recorded actors).
DRIVER_TIMEOUT_S = 600


def run_slime(source: Path, cases: list[Case]) -> list[dict[str, Any]]:
    """What slime's own code (at ``source``) does with each case's flags on its cluster."""
    given = json.dumps([{"arguments": list(case.arguments), "gpus_per_node": list(case.gpus_per_node)} for case in cases])
    env = {**os.environ, "PYTHONPATH": str(source)}
    result = subprocess.run([sys.executable, str(DRIVER)], input=given, capture_output=True, text=True, timeout=DRIVER_TIMEOUT_S, env=env, cwd=source)
    if result.returncode != 0:
        raise RuntimeError(f"slime's code failed under the driver:\n{result.stderr[-4000:]}")
    recorded: list[dict[str, Any]] = json.loads(result.stdout)
    return recorded
