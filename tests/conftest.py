"""Test options: ``--runslow`` (or ``CI=true`` in the environment, so CI runs the 10,000-example
fuzz test of ``test_fuzz.py`` on every push) runs the tests marked ``slow``; Hypothesis runs
derandomized.

Hypothesis profiles: ``ci`` (default) derives every example from the test itself, so CI is
deterministic and a failure reproduces on any machine; ``explore`` (``HYPOTHESIS_PROFILE=explore``)
uses fresh randomness, for hunting bugs locally.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", derandomize=True, database=None, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("explore", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="also run tests marked slow")


def run_slow(config: pytest.Config) -> bool:
    """Slow tests run on request and always in CI (which sets ``CI=true``)."""
    return config.getoption("--runslow") or os.environ.get("CI", "").lower() == "true"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if run_slow(config):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow or CI=true")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
