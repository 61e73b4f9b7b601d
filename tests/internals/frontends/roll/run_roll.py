"""Run ``roll_driver.py`` on cases in a subprocess with a ROLL checkout first on its path: what
``regenerate.py`` records and ``test_roll_differential.py`` checks against the recording."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

DRIVER = Path(__file__).resolve().with_name("roll_driver.py")
#: Seconds the driver may take for all cases (ROLL's imports and a few hundred recorded workers).
DRIVER_TIMEOUT_S = 600


def run_roll(source: Path, cases: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What ROLL's own code (at ``source``) does with each named case, by name. It runs in a
    folder of its own because ROLL writes its log files under the working folder."""
    with tempfile.TemporaryDirectory() as folder:
        run = subprocess.run(
            [sys.executable, str(DRIVER)],
            input=json.dumps(cases),
            capture_output=True,
            text=True,
            cwd=folder,
            env={**os.environ, "PYTHONPATH": str(source)},
            check=True,
            timeout=DRIVER_TIMEOUT_S,
        )
    answers: dict[str, Any] = json.loads(run.stdout.splitlines()[-1])
    return answers
