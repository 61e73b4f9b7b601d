"""Differential property tests: the same generated input through RLinf 0.3.0's own code and
through solver_placement, given RLinf's own ``Cluster`` object.

Each case is a cluster in RLinf's ``cluster:`` form (node groups, GPUs, robots, env_configs) and
either a ``component_placement`` for ``HybridComponentPlacement`` (then every component's
``get_strategy(c).get_placement(cluster, isolate)``, as RLinf's ``WorkerGroup`` does, plus
``components``, ``get_world_size`` and ``get_hardware_ranks``) or one Flexible / Packed / Node
strategy. Both sides must succeed or fail together; on success the placements must agree in all
11 RLinf fields (values and types), on failure our error must be catchable as RLinf's exception
type. Every disagreement must be one of the named, documented differences of
``rlinf_differences.DIFFERENCES`` (one predicate each); anything else fails the test. The run
prints how many configs agreed and how often each difference occurred (``-s`` not needed).

Default run: 120 configs (a few seconds); ``--runslow`` / ``CI=true``: 3,000 (about a minute here).
Install RLinf for these tests with ``pip install --no-deps rlinf==0.3.0``; they skip without it.
"""

from __future__ import annotations

from collections import Counter

import pytest
import rlinf_shim
from hypothesis import HealthCheck, given, settings
from rlinf_cases import Case, cases
from rlinf_differences import compare, summary

#: Configs of the fast tier's run; CI's run (``test_differential_ci``) compares 3,000.
QUICK = 120


def differential_run(examples: int, capsys: pytest.CaptureFixture[str]) -> Counter:
    tally: Counter = Counter()

    @settings(max_examples=examples, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(cases())
    def check(case: Case) -> None:
        compare(case, tally)

    check()
    with capsys.disabled():
        print(f"\nRLinf {rlinf_shim.RLINF_VERSION} differential run: {summary(tally)}")
    return tally


def test_differential_quick(capsys: pytest.CaptureFixture[str]) -> None:
    tally = differential_run(QUICK, capsys)
    assert tally["configs"] >= QUICK and tally["both placed"] > tally["configs"] // 3


@pytest.mark.slow
def test_differential_ci(capsys: pytest.CaptureFixture[str]) -> None:
    """The CI run: at least 2,000 configs (the count is printed for docs/rlinf.md)."""
    tally = differential_run(3000, capsys)
    assert len(tally["distinct"]) >= 2000
