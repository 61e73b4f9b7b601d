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

Default run: 120 configs (a few seconds); ``--runslow`` / ``CI=true``: 2,000 (about a minute here).
Install RLinf for these tests with ``pip install --no-deps rlinf==0.3.0``; they skip without it.
"""

from __future__ import annotations

from collections import Counter

import pytest
import rlinf_shim
from hypothesis import HealthCheck, given, seed, settings
from rlinf_cases import Case, cases
from rlinf_differences import compare, summary

#: Configs of the fast tier's run; CI's run (``test_differential_ci``) compares 2,000.
QUICK = 120


#: Shards of CI's run, each drawn from its own seed, so ``pytest -n`` spreads them over the cores.
CI_SHARDS = 2


def differential_run(examples: int, capsys: pytest.CaptureFixture[str], shard: int | None = None) -> Counter:
    """Compare ``examples`` generated configs; a ``shard`` draws them from a seed of its own
    (else from the test itself, derandomized as the profile says)."""
    tally: Counter = Counter()
    suppress = [HealthCheck.too_slow, HealthCheck.data_too_large]
    seeded = {} if shard is None else {"derandomize": False}

    @settings(max_examples=examples, suppress_health_check=suppress, **seeded)
    @given(cases())
    def check(case: Case) -> None:
        compare(case, tally)

    if shard is not None:
        check = seed(20_261_128 + shard)(check)

    check()
    with capsys.disabled():
        print(f"\nRLinf {rlinf_shim.RLINF_VERSION} differential run: {summary(tally)}")
    return tally


def test_differential_quick(capsys: pytest.CaptureFixture[str]) -> None:
    tally = differential_run(QUICK, capsys)
    assert tally["configs"] >= QUICK and tally["both placed"] > tally["configs"] // 3


@pytest.mark.slow
@pytest.mark.parametrize("shard", range(CI_SHARDS))
def test_differential_ci(capsys: pytest.CaptureFixture[str], shard: int) -> None:
    """The CI run: 2,000 configs in all, at least 1,300 distinct (the counts are printed for docs/rlinf.md)."""
    tally = differential_run(2000 // CI_SHARDS, capsys, shard)
    assert len(tally["distinct"]) >= 1300 // CI_SHARDS
