"""Topology domains the count model used to decline, now stated exactly (``counts/spanning.py``,
``counts/zero_sums.py``, ``counts/domain_levels.py``): preferred domains no placement keeps
(their ``topology`` term is a function of each domain's remainder), several of them on several
members, and required domains of two members whose units overlap (each member its own chain
of levels and its own order). Every count answer is verified, its objective is the exact flat
model's optimum (one boolean per process and GPU), and the count path answers all but the
mixes it names."""

from __future__ import annotations

from typing import Any

import pytest
from flat_model import counted_case, flat_optimum
from helpers import declined_first, example_tiers
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_count_typed import PRIMARY

from solver_placement import Cluster, PlacementSpec, Solution, solve, verify
from solver_placement._solver.answer import Answer
from solver_placement._solver.counts.zero_sums import minimal_zero_sums
from solver_placement._solver.evaluate import objective_value
from solver_placement._specification.candidates import ComponentRequest

#: What the count model still declines of these specs, by the words of its reasons: a member
#: whose units span two preferred domains, or a required domain not inside the preferred one,
#: where the layout misses the bound of the terms priced as if each had its own order.
STILL_DECLINED = ("above the count model's bound",)


def mode(draw: st.DrawFn) -> str | None:
    return draw(st.sampled_from(["prefer", "prefer", "require", None]))


@st.composite
def domain_specs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """2-6 nodes of 1, 2 or 4 GPUs in racks of 1-3 nodes, zones of two racks (or of three nodes,
    across racks); an actor in pipelines of 2-4 stages (TP 1-2, its TP domain maybe required in
    a rack) preferring or requiring a rack or a zone; maybe a rollout collocated with it in
    pipelines of 2, 3, 4 or 6 one-GPU processes with a rule of its own (so units of two members
    overlap, or two members prefer domains); maybe a reward exclusive with the actor."""
    nodes, gpus, rack = draw(st.integers(2, 6)), draw(st.sampled_from([1, 2, 4])), draw(st.integers(1, 3))
    across = draw(st.booleans())
    labels = [{"rack": f"r{n // rack}", "zone": f"z{n // 3 if across else n // (2 * rack)}"} for n in range(nodes)]
    total = nodes * gpus
    tp, pp = draw(st.sampled_from([1, 2])), draw(st.sampled_from([2, 3, 4]))
    actor: dict[str, Any] = {"processes": tp * pp * draw(st.integers(1, max(1, total // (tp * pp)))), "tensor_parallel_size": tp,
                             "pipeline_parallel_size": pp}  # fmt: skip
    topology: dict[str, dict[str, str]] = {}
    if (rule := mode(draw)) is not None:
        topology["pipeline_parallel"] = {draw(st.sampled_from(["rack", "zone"])): rule}
    if tp > 1 and draw(st.booleans()):
        topology["tensor_parallel"] = {"rack": "require"}
    if topology:
        actor["topology"] = topology
    spec: dict[str, Any] = {"actor": actor}
    if draw(st.booleans()):
        stages = [p for p in (2, 3, 4, 6) if actor["processes"] % p == 0]
        if stages:
            rollout: dict[str, Any] = {"processes": actor["processes"], "collocate_with": "actor", "pipeline_parallel_size": draw(st.sampled_from(stages))}
            if (rule := mode(draw)) is not None:
                rollout["topology"] = {"pipeline_parallel": {draw(st.sampled_from(["rack", "zone"])): rule}}
            spec["rollout"] = rollout
    if draw(st.booleans()):
        spec["reward"] = {"processes": draw(st.integers(1, max(1, total // 3))), "exclusive_with": ["actor"]}
    return Cluster(nodes, gpus, node_labels=labels), spec


@example_tiers(40, 80)
def test_topology_domains_are_counted_as_the_flat_model_proves_them(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(domain_specs())(check_domains))()


def check_domains(case: tuple[Cluster, dict[str, Any]]) -> None:
    counted = counted_case(*case)
    if counted is None:
        return
    spec, answer = counted
    requests = dict(spec.requests)
    if not isinstance(answer, Answer):
        if flat_optimum(spec, requests) is None:
            event("no placement")
            return
        assert any(words in answer.reason for words in STILL_DECLINED), f"declined: {answer.reason}"
        event("declined: a mix it names")
        return
    assert_proven_at_flat_optimum(spec, requests, answer)


def assert_proven_at_flat_optimum(spec: PlacementSpec, requests: dict[str, ComponentRequest], answer: Answer) -> None:
    """A count answer (verified) whose objective is its layout's, proven, and the flat optimum."""
    event(f"counts {answer.status}")
    assert answer.assignments is not None
    verify(spec, Solution(spec, spec.requests, dict(answer.assignments), "FEASIBLE", None).placements_by_component())
    owned = {c.rule_owner: answer.assignments[c.name] for c in spec.components.values()}
    assert objective_value(spec, requests, owned, PRIMARY, {}) == answer.objective
    assert answer.status == "OPTIMAL", f"not proven: objective {answer.objective}, bound {answer.bound}"
    assert answer.objective == flat_optimum(spec, requests)


def racks(nodes: int, size: int, zone: int = 0) -> list[dict[str, str]]:
    return [{"rack": f"r{n // size}", "zone": f"z{n // zone if zone else 0}"} for n in range(nodes)]


#: Specs the count model declined before (each note named the rule): two pipelines of 5 one-GPU
#: processes preferring a rack, on racks of 3, 3, 3 and 2 nodes (no layout met the bound the
#: count model weighed then); an actor's pipelines preferring a rack and its rollout's a zone;
#: an actor's pipelines of 2 required in a rack (one node each) and its rollout's of 3 in a zone
#: of three nodes (units that overlap); TP groups of 16 required in a rack of two 8-GPU nodes,
#: in a pipeline of 3 (six nodes) preferring a zone of two racks.
DECLINED_BEFORE = [
    ("remainders", 11, 1, racks(11, 3), {"actor": {"processes": 10, "pipeline_parallel_size": 5, "topology": {"pipeline_parallel": {"rack": "prefer"}}}}),
    ("two members", 8, 1, racks(8, 3, 5), {"actor": {"processes": 8, "pipeline_parallel_size": 4, "topology": {"pipeline_parallel": {"rack": "prefer"}}},
                                           "rollout": {"processes": 8, "collocate_with": "actor", "pipeline_parallel_size": 2,
                                                       "topology": {"pipeline_parallel": {"zone": "prefer"}}}}),
    ("overlap", 6, 2, racks(6, 1, 3), {"actor": {"processes": 12, "pipeline_parallel_size": 2, "topology": {"pipeline_parallel": {"rack": "require"}}},
                                       "rollout": {"processes": 12, "collocate_with": "actor", "pipeline_parallel_size": 3,
                                                   "topology": {"pipeline_parallel": {"zone": "require"}}}}),
    ("tp in a rack, pipeline preferring a zone", 8, 8, racks(8, 2, 4),
     {"actor": {"processes": 48, "tensor_parallel_size": 16, "pipeline_parallel_size": 3,
                "topology": {"tensor_parallel": {"rack": "require"}, "pipeline_parallel": {"zone": "prefer"}}}}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "nodes", "gpus", "labels", "placement"), DECLINED_BEFORE, ids=[c[0] for c in DECLINED_BEFORE])
def test_specs_declined_before_are_answered_by_counts_and_proven(case: str, nodes: int, gpus: int, labels: list[dict[str, str]], placement: dict[str, Any]) -> None:
    spec = PlacementSpec.build(Cluster(nodes, gpus, node_labels=labels), placement)
    solution = solve(spec, time_limit_s=10)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    assert objective_value(spec, dict(spec.requests), {c.rule_owner: solution.assignments[c.name] for c in spec.components.values()}, PRIMARY, {}) == flat_optimum(
        spec, dict(spec.requests)
    )


def test_remainders_close_units_only_in_minimal_sets() -> None:
    """Units of 4 slots: the sets of remainders that add up to a multiple of 4 and hold no
    smaller such set; a value no domain leaves, or more of one than domains leave it, is not
    used."""
    quiet = lambda _: None  # noqa: E731
    assert sorted(minimal_zero_sums(4, {1: 9, 2: 9, 3: 9}, 9, quiet)) == [(1, 1, 1, 1), (1, 1, 2), (1, 3), (2, 2), (2, 3, 3), (3, 3, 3, 3)]
    assert sorted(minimal_zero_sums(4, {3: 4, 2: 1}, 9, quiet)) == [(2, 3, 3), (3, 3, 3, 3)]
    assert minimal_zero_sums(4, {3: 3}, 9, quiet) == []
    assert sorted(minimal_zero_sums(4, {1: 9, 3: 9}, 3, quiet)) == [(1, 3)]  # at most 3 domains leave any
