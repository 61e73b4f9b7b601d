"""The count path's tie-breaks do not depend on the machine's speed: the runs that choose among
answers already proven best are bounded by CP-SAT's deterministic work, not by the wall time
left. Bounded by wall time alone, the per-node model (``per_node.py``) proved a level on a
quiet machine and was cut short on a loaded one, where the patterns proved it instead, with
another tie-break: the same spec, two placements.
"""

from __future__ import annotations

import numpy as np
import pytest

from solver_placement import Cluster, PlacementSpec, solve
from solver_placement._solver.counts import patterns, per_node

#: Five alike 8-GPU nodes, six components in a ring of exclusions, ``balance`` first (the
#: benchmark's ``balance:5:3``): one level needs 0.41 of CP-SAT's work per node, past
#: ``per_node.SHARED_WORK``, and the patterns prove it. They are counted first where
#: ``patterns.shapes`` lists them all, so the test lists none (``MAX_PATTERNS`` 2): the per-node
#: model first, then every whole-node pattern walked (``weighed.py``).
RING = {
    "actor": {"processes": 8, "tensor_parallel_size": 4, "exclusive_with": ["critic"]},
    "critic": {"processes": 10, "tensor_parallel_size": 2, "exclusive_with": ["reward"]},
    "reward": {"processes": 8, "tensor_parallel_size": 4, "exclusive_with": ["ref"]},
    "ref": {"processes": 8, "tensor_parallel_size": 4, "exclusive_with": ["judge"]},
    "judge": {"processes": 10, "exclusive_with": ["teacher"]},
    "teacher": {"processes": 10, "exclusive_with": ["actor"]},
}


def _placed(share: float, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, float | None, dict[str, np.ndarray]]:
    """Method, status, objective and GPU ids per component with the per-node model given
    ``share`` of the time (as a slow machine leaves it less time, a fast one more)."""
    monkeypatch.setattr(per_node, "SHARE", share)
    monkeypatch.setattr(patterns, "MAX_PATTERNS", 2)
    spec = PlacementSpec.build(Cluster(5, 8), RING)
    found = solve(spec, time_limit_s=10, objective={"balance": 1000, "nodes": 1})
    return found.method, found.status, found.objective, {name: a.hardware for name, a in found.assignments.items()}


def test_the_per_node_share_of_time_does_not_choose_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    short = _placed(0.01, monkeypatch)
    long = _placed(0.9, monkeypatch)
    assert short[:3] == long[:3] == ("counts", "OPTIMAL", 11010)
    assert short[3].keys() == long[3].keys()
    assert all(np.array_equal(short[3][name], long[3][name]) for name in short[3])
