"""Test options: ``--runslow`` (or ``CI=true`` in the environment, so CI runs the 4,000-example
fuzz test of ``test_fuzz.py`` on every push) runs the tests marked ``slow``; Hypothesis runs
derandomized.

Hypothesis profiles: ``ci`` (default) derives every example from the test itself, so CI is
deterministic and a failure reproduces on any machine; ``explore`` (``HYPOTHESIS_PROFILE=explore``)
uses fresh randomness, for hunting bugs locally.

Every :class:`~solver_placement.Solution` a test builds (through ``solve``, a front end, a fixture
of any scope or by hand) is checked by the independent verifier when the test ends, so no test can
obtain a wrong answer unnoticed; a test whose point is a broken answer says so with
``@pytest.mark.unverified_solutions``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from solution_check import BUILT, FAST_TIER_PROCESSES, REFUSED, distinct, failures, refused_records

from solver_placement import Placement, PlacementSpec, Solution, VerificationError, verify

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


#: Markers of tests that start a Ray cluster (the notebooks launch too): under pytest-xdist
#: (``-n``, with ``--dist loadgroup`` from ``pyproject.toml``) they all run in one worker, one
#: after the other, as they would in a serial run, so two embedded Ray clusters never compete
#: for the machine's ports, its ``ray start`` record or its two cores.
ONE_RAY_AT_A_TIME = ("ray", "notebook")


#: The fast tier's heaviest tests (``heavy_tests.txt``, made by ``heavy_tests.py``): run where the
#: slow tests run, so the everyday fast tier ends within a minute.
HEAVY = frozenset(line.strip() for line in (Path(__file__).parent / "heavy_tests.txt").read_text().splitlines() if line.strip() and not line.startswith("#"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if any(marker in item.keywords for marker in ONE_RAY_AT_A_TIME):
            item.add_marker(pytest.mark.xdist_group("ray"))
        if item.nodeid in HEAVY:
            item.add_marker(pytest.mark.heavy)
    if run_slow(config):
        _leave_out_superseded(config, items)
        return
    skip_slow = pytest.mark.skip(reason="slow: run with --runslow or CI=true")
    skip_heavy = pytest.mark.skip(reason="heavy (tests/heavy_tests.txt): run with --runslow or CI=true")
    measure_heavy = os.environ.get("SOLVER_PLACEMENT_MEASURE_HEAVY") == "1"
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)
        elif "heavy" in item.keywords and not measure_heavy:
            item.add_marker(skip_heavy)


def _leave_out_superseded(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Where the slow tests run, deselect the tests marked ``superseded``: a property's fast
    example count, whose checks its slow ``full`` count repeats with more examples."""
    superseded = [item for item in items if "superseded" in item.keywords]
    if superseded:
        config.hook.pytest_deselected(items=superseded)
        items[:] = [item for item in items if "superseded" not in item.keywords]


@pytest.fixture(scope="session", autouse=True)
def private_ray_tmpdir() -> Iterator[str]:
    """A Ray temp dir of the test session's own (``RAY_TMPDIR``, inherited by the subprocesses
    tests start): the machine's record of the last ``ray start`` (``/tmp/ray/ray_current_cluster``)
    belongs to whoever else uses Ray here, so a test that names no Ray must not attach to theirs or
    fail on their dead head. Short and under /tmp: Ray's socket paths live inside it and must stay
    under the 107-byte AF_UNIX limit."""
    tmp = tempfile.mkdtemp(prefix="sp-ray-", dir="/tmp")
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("RAY_TMPDIR", tmp)
            yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def record_solutions() -> Iterator[None]:
    """Record every Solution from the first test on, fixtures of any scope included, so that
    :func:`verify_solutions` sees answers a module fixture solved once for many tests. Hooked on the
    public class object, so moving the module that defines it does not unhook the check. The
    library's own modules get a ``verify`` that notes what it refuses: a candidate the library
    checked, refused and dropped is no answer of the test's (whichever module the check moves to)."""
    build = Solution.__init__

    def recorded(self: Solution, *args: Any, **kwargs: Any) -> None:
        build(self, *args, **kwargs)
        BUILT.append(self)

    def noting_refusals(spec: PlacementSpec, placements: Mapping[str, Sequence[Placement]]) -> None:
        try:
            verify(spec, placements)
        except VerificationError:
            REFUSED.append(placements)
            raise

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Solution, "__init__", recorded)
        for name, module in list(sys.modules.items()):
            if name.startswith("solver_placement.") and getattr(module, "verify", None) is verify:
                patch.setattr(module, "verify", noting_refusals)
        yield


@pytest.fixture(autouse=True)
def verify_solutions(request: pytest.FixtureRequest) -> Iterator[None]:
    """Check every Solution the test built with the independent verifier when it ends: most
    solving tests assert one property of an answer, this makes every answer also obey every rule.
    A test about broken answers (poisoned assignments, hand-built violations) opts out with
    ``@pytest.mark.unverified_solutions``. Answers beyond ``FAST_TIER_PROCESSES`` are checked
    with the slow tests only."""
    yield
    solutions, BUILT[:] = distinct(BUILT), []
    refused = refused_records(REFUSED)
    REFUSED.clear()  # the refused mappings held their records alive until here, so no id was reused
    if request.node.get_closest_marker("unverified_solutions") is not None:
        return
    found = failures(solutions, refused, None if run_slow(request.config) else FAST_TIER_PROCESSES)
    if found:
        pytest.fail("a Solution the test built fails verify():\n" + "\n".join(found), pytrace=False)
