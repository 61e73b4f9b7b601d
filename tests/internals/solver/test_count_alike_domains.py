"""Past many domains, the dropped spec's node contents moved between alike nodes so every domain
holds whole units (``counts/alike_domains.py``): where the dropped layout cuts units at domain
edges (pipelines of 3 nodes in zones of 16, pipelines of 2 after a rack a rank string shortens),
the moved layout keeps every domain, so the dropped spec's bound proves it, at the stated count
model's optimum. Before, the dropped answer was not proven there and the spec was counted as
stated: one run per domain, which past a few hundred racks declined (``topology
overlaps:4096:0`` had no answer at all)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from flat_model import count_answer
from helpers import declined_first
from test_count_dropped_domains import proofs_by_dropping

from solver_placement import Cluster, PlacementSpec, solve
from solver_placement._solver.answer import Answer
from solver_placement._solver.counts import dropped_domains
from solver_placement._solver.counts.alike_domains import _moves
from solver_placement._solver.counts.dropped_domains import required_spans


def racked(racks: int, rack_nodes: int, zone_racks: int, placement: dict[str, Any]) -> PlacementSpec:
    """``placement`` on racks of ``rack_nodes`` 8-GPU nodes in zones of ``zone_racks`` racks."""
    nodes = racks * rack_nodes
    labels = [{"rack": f"r{n // rack_nodes}", "zone": f"z{n // (rack_nodes * zone_racks)}"} for n in range(nodes)]
    return PlacementSpec.build(Cluster(nodes, 8, node_labels=labels), placement)


def overlapping(racks: int, zone_racks: int, actor_nodes: int, critic: int) -> PlacementSpec:
    """The ``topology overlaps`` family's first mix on racks of 8 nodes: whole-node pipelines of
    2 required in a rack and, collocated, of 3 required in a zone (units that overlap: 6 nodes
    hold both whole)."""
    return racked(racks, 8, zone_racks, {
        "actor": {"processes": 8 * actor_nodes, "tensor_parallel_size": 8, "pipeline_parallel_size": 2, "topology": {"pipeline_parallel": {"rack": "require"}}},
        "rollout": {"processes": 8 * actor_nodes, "collocate_with": "actor", "tensor_parallel_size": 8, "pipeline_parallel_size": 3,
                    "topology": {"pipeline_parallel": {"zone": "require"}}},
        "critic": {"processes": critic, "exclusive_with": "all"},
    })  # fmt: skip


def shortened() -> PlacementSpec:
    """A rank string on node 0 and pipelines of 2 whole nodes preferring a rack of 4 nodes: the
    dropped layout's pipelines start on node 1, so from the second on each spans two racks."""
    return racked(6, 4, 6, {
        "fixed": "0-7",
        "actor": {"processes": 96, "tensor_parallel_size": 8, "pipeline_parallel_size": 2, "exclusive_with": ["fixed"],
                  "topology": {"pipeline_parallel": {"rack": "prefer"}}},
        "critic": {"processes": 40, "exclusive_with": "all"},
    })  # fmt: skip


def nested() -> PlacementSpec:
    """The ``topology overlaps`` family's third mix: whole-node pipelines of 5 preferring a rack
    of 8 nodes and, collocated, of 2 preferring a zone of 2 racks (5 nodes in each rack of a
    zone keep both)."""
    return racked(4, 8, 2, {
        "actor": {"processes": 160, "tensor_parallel_size": 8, "pipeline_parallel_size": 5, "topology": {"pipeline_parallel": {"rack": "prefer"}}},
        "rollout": {"processes": 160, "collocate_with": "actor", "tensor_parallel_size": 8, "pipeline_parallel_size": 2,
                    "topology": {"pipeline_parallel": {"zone": "prefer"}}},
        "critic": {"processes": 60, "exclusive_with": "all"},
    })  # fmt: skip


@pytest.mark.parametrize("spec", [
    pytest.param(overlapping(4, 2, 18, 64), id="required overlapping"),
    pytest.param(shortened(), id="preferred after a rank string"),
    pytest.param(nested(), id="preferred nested"),
])  # fmt: skip
def test_moved_contents_are_proven_by_the_dropped_bound_at_the_stated_optimum(spec: PlacementSpec, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dropped_domains, "DROPPED_FIRST_PAST", 0)  # dropped first on a few racks
    proven = proofs_by_dropping(monkeypatch)
    solution = solve(spec, time_limit_s=10, num_workers=1)  # the loop verifies it
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    assert len(proven) == 1 and not any(required_spans(spec, proven[0].assignments).values())
    monkeypatch.setattr(dropped_domains, "DROPPED_FIRST_PAST", 10**9)  # the spec counted as stated, one run per domain
    stated = count_answer(spec)
    assert isinstance(stated, Answer) and stated.status == "OPTIMAL"
    assert solution.objective == proven[0].objective == stated.objective


def test_contents_take_their_domains_in_multiples_of_their_quantum_or_not_at_all() -> None:
    kind, cell, position = np.zeros(8, dtype=np.int64), np.repeat([0, 1], 4), np.arange(8)
    held = np.array([[1]] * 6 + [[0]] * 2)  # six nodes of one process each, two of none
    assert _moves(kind, [cell], position, held, [[(0, 2)]]).tolist() == [0, 1, 2, 3, 4, 5, 6, 7]  # units of 2 nodes: 4 in the first cell, 2 in the second
    assert _moves(kind, [cell], position, held, [[(0, 3)]]).tolist() == [0, 1, 2, 4, 5, 6, 3, 7]  # of 3: 3 and 3, the empty contents on what is left
    assert _moves(kind, [cell], position, held, [[(0, 6)]]) is None  # a cell of 4 nodes holds no unit of 6


def test_nested_domains_take_multiples_of_each_level() -> None:
    zone, rack, position = np.repeat([0, 1], 8), np.repeat([0, 1, 2, 3], 4), np.arange(16)
    held = np.array([[1]] * 6 + [[0]] * 10)
    # units of 3 nodes in a rack of 4 and of 2 in a zone of 8: 3 + 3 in the first zone
    assert _moves(np.zeros(16, dtype=np.int64), [zone, rack], position, held, [[(0, 2), (1, 3)]]).tolist()[:6] == [0, 1, 2, 4, 5, 6]


@pytest.mark.slow
def test_overlapping_pipelines_on_512_racks_are_proven() -> None:
    spec = overlapping(512, 4, 1482, 10_481)  # ``topology overlaps:4096:0``: no answer before (the stated model too large, first fit breaking the zones)
    solution = solve(spec, time_limit_s=5, num_workers=1)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
