"""The fast tier's heaviest tests, listed in ``heavy_tests.txt``: read pytest's ``--durations=0``
report of a fast-tier run and print, one node id a line, every test whose setup, call and
teardown together took longer than the threshold (seconds, the first argument; 0.15 by default).

Why a list: the fast tier is for everyday work and must end within a minute on two cores, yet
about 4% of its tests (count-model properties at their fast example count, the hostile sample,
installs) took three quarters of its time. Those run where the slow tests run (CI, ``--runslow``),
not in the fast tier; ``tests/conftest.py`` marks them ``heavy`` from the list. Regenerate it
with every heavy test measured again (``SOLVER_PLACEMENT_MEASURE_HEAVY=1`` runs them in the fast
tier)::

    SOLVER_PLACEMENT_MEASURE_HEAVY=1 python -m pytest -q -n 2 -m "not ray and not notebook and not lint" --durations=0 \\
        | python tests/heavy_tests.py 0.15 > tests/heavy_tests.txt
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict

#: A line of pytest's durations report: ``0.52s call     tests/x.py::test_y[id]``.
DURATION = re.compile(r"^(\d+(?:\.\d+)?)s (setup|call|teardown)\s+(\S.*)$")
HEADER = "# Fast-tier tests over {threshold} s each (setup, call and teardown), marked heavy by tests/conftest.py: see tests/heavy_tests.py."


def heavy(report: list[str], threshold: float) -> list[str]:
    """The node ids of ``report``'s tests whose phases add up to more than ``threshold`` seconds,
    sorted."""
    total: dict[str, float] = defaultdict(float)
    for line in report:
        found = DURATION.match(line.strip())
        if found:
            total[found.group(3)] += float(found.group(1))
    return sorted(node for node, seconds in total.items() if seconds > threshold)


def main() -> None:
    threshold = float(sys.argv[1]) if len(sys.argv) > 1 else 0.15
    print(HEADER.format(threshold=threshold))
    print("\n".join(heavy(sys.stdin.read().splitlines(), threshold)))


if __name__ == "__main__":
    main()
