"""Topology rules in the count model (``counts/domain_levels.py``, ``counts/preferred.py``,
``counts/tensor_domains.py``): required and preferred domains of tensor-parallel groups and
pipelines, on a component and on one collocated with it, on two labels (racks of two nodes
inside zones), mixed. Where the count model answers "optimal" its objective is the exact flat
model's optimum (an independent formulation: one boolean per process and GPU), every answer
passes the verifier, and it declines only the mixes of preferred domains it names
(``test_count_domains.STILL_DECLINED``, where the flat model proves the rules required have no
placement) and specs with no placement at all."""

from __future__ import annotations

from typing import Any

import pytest
from flat_model import built_or_refused, count_answer, counted_case, flat_optimum
from helpers import declined_first, example_tiers
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from test_count_domains import STILL_DECLINED, assert_proven_at_flat_optimum
from test_count_typed import PRIMARY

from solver_placement import Cluster, PlacementSpec, Solution, solve, verify
from solver_placement._solver.answer import Answer
from solver_placement._solver.counts.preferred import variants
from solver_placement._solver.evaluate import objective_value

LABELS = ("rack", "zone")


def rules(draw: st.DrawFn, tp: int, pp: int) -> dict[str, dict[str, str]]:
    """Each of a component's units (TP groups when ``tp`` > 1, pipelines when ``pp`` > 1) kept
    inside a rack or a zone, required or preferred, or not at all."""
    drawn: dict[str, dict[str, str]] = {}
    for group, size in (("tensor_parallel", tp), ("pipeline_parallel", pp)):
        if size > 1:
            for label in LABELS:
                mode = draw(st.sampled_from(["require", "prefer", None, None]))
                if mode:
                    drawn.setdefault(group, {})[label] = mode
    return drawn


@st.composite
def topology_specs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """1-4 nodes of 2, 4 or 8 GPUs, racks of two nodes and one or two zones; an actor in TP
    groups of 1-4 and pipelines of 1-2 stages with topology rules, maybe a rollout collocated
    with it (one GPU per process, its own TP groups and pipelines and rules, tiling the actor's
    groups), maybe a reward exclusive with the actor; sizes up to the cluster's GPUs."""
    gpus = draw(st.lists(st.sampled_from([2, 4, 8]), min_size=1, max_size=4))
    split = draw(st.integers(1, len(gpus)))
    labels = [{"rack": f"r{n // 2}", "zone": f"z{int(n >= split)}"} for n in range(len(gpus))]
    total = sum(gpus)
    tp, pp, amount = draw(st.sampled_from([1, 2, 4])), draw(st.sampled_from([1, 2])), draw(st.sampled_from([1, 1, 2]))
    unit = tp * pp * amount
    actor: dict[str, Any] = {"processes": tp * pp * draw(st.integers(1, max(1, total // unit))), "tensor_parallel_size": tp}
    if pp > 1:
        actor["pipeline_parallel_size"] = pp
    if amount > 1:
        actor["hardware_per_process"] = amount
    if topology := rules(draw, tp, pp):
        actor["topology"] = topology
    spec: dict[str, Any] = {"actor": actor}
    items = actor["processes"] * amount
    spanning = "require" in topology.get("tensor_parallel", {}).values()
    width = amount if spanning else tp * amount  # the actor's groups in the count model: a follower's TP group must tile one
    if draw(st.booleans()):
        follower_tp = draw(st.sampled_from([t for t in (1, 2, 4) if items % t == 0]))
        follower_pp = draw(st.sampled_from([p for p in (1, 2) if items % (follower_tp * p) == 0]))
        rollout: dict[str, Any] = {"processes": items, "collocate_with": "actor", "tensor_parallel_size": follower_tp}
        if follower_pp > 1:
            rollout["pipeline_parallel_size"] = follower_pp
        follower_rules = rules(draw, follower_tp, follower_pp)
        if width % follower_tp and "require" not in follower_rules.get("tensor_parallel", {}).values():
            follower_rules.setdefault("tensor_parallel", {})["rack"] = "require"  # its groups span the actor's: only a domain allows it
        if follower_rules:
            rollout["topology"] = follower_rules
        spec["rollout"] = rollout
    if draw(st.booleans()):
        reward_tp = draw(st.sampled_from([1, 2]))
        spec["reward"] = {"processes": reward_tp * draw(st.integers(1, max(1, total // (2 * reward_tp)))), "tensor_parallel_size": reward_tp,
                          "exclusive_with": ["actor"]}  # fmt: skip
    return Cluster(len(gpus), gpus, node_labels=labels), spec


@example_tiers(40, 80)
def test_topology_rules_are_counted_as_the_flat_model_proves_them(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(topology_specs())(check_topology))()


def check_topology(case: tuple[Cluster, dict[str, Any]]) -> None:
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
        required, _ = variants(spec)
        assert flat_optimum(required, dict(required.requests)) is None, "declined a preferred domain some placement keeps"
        event("declined: a mix of preferred domains it names")
        return
    assert_proven_at_flat_optimum(spec, requests, answer)


#: Racks of two nodes, zones of four: on 4 nodes of 4 GPUs a rollout collocated with an actor
#: whose pipelines a rack holds (each spans two of the actor's groups); on 8 nodes of 2 GPUs an
#: actor whose TP groups of 4 span the nodes of a rack and whose pipelines prefer a zone.
MIXES = [
    (4, {"actor": {"processes": 8, "tensor_parallel_size": 2},
         "rollout": {"processes": 8, "collocate_with": "actor", "tensor_parallel_size": 2, "pipeline_parallel_size": 2,
                     "topology": {"pipeline_parallel": {"rack": "require"}}}}),
    (2, {"actor": {"processes": 16, "tensor_parallel_size": 4, "pipeline_parallel_size": 2,
                   "topology": {"tensor_parallel": {"rack": "require"}, "pipeline_parallel": {"zone": "prefer"}}}}),
]  # fmt: skip


@pytest.mark.parametrize(("gpus", "placement"), MIXES)
def test_topology_mixes_are_answered_by_counts_and_proven(gpus: int, placement: dict[str, Any]) -> None:
    nodes = 16 // gpus
    labels = [{"rack": f"r{n // 2}", "zone": f"z{n // 4}"} for n in range(nodes)]
    spec = PlacementSpec.build(Cluster(nodes, gpus, node_labels=labels), placement)
    solution = solve(spec, time_limit_s=10)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    assert solution.objective == flat_optimum(spec, dict(spec.requests))  # contiguity only orders the count model's ties


@st.composite
def placed_first_specs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any], dict[str, int]]:
    """2-4 nodes of 4 GPUs in racks of two; a rank string over a run of GPUs and a declarative
    shadow collocated with it (TP groups and pipelines of 1-2, domains required or preferred),
    or a filled window with such rules; 1-2 declarative components exclusive with it or not;
    ``balance`` weighed half the time."""
    nodes = draw(st.integers(2, 4))
    total = 4 * nodes
    first = 2 * draw(st.integers(0, nodes))
    length = 2 * draw(st.integers(1, (total - first) // 2)) if first < total else 0
    tp, pp = draw(st.sampled_from([1, 2])), draw(st.sampled_from([1, 2]))
    spec: dict[str, Any] = {}
    shadow: dict[str, Any] = {"tensor_parallel_size": tp}
    if pp > 1:
        shadow["pipeline_parallel_size"] = pp
    if topology := rules(draw, tp, pp):
        shadow["topology"] = topology
    if length and length % (tp * pp) == 0:
        if draw(st.booleans()):
            spec["fixed"] = f"{first}-{first + length - 1}"
            spec["shadow"] = {"processes": length, "collocate_with": "fixed", **shadow}
        else:
            spec["shadow"] = {"resources": f"{first}-{first + length - 1}", **shadow}
    for name in ("actor", "critic")[: draw(st.integers(1, 2))]:
        others = [other for other in spec if draw(st.booleans())]
        body: dict[str, Any] = {"processes": draw(st.integers(1, max(1, total // 3))), "tensor_parallel_size": 1}
        if others:
            body["exclusive_with"] = others
        spec[name] = body
    labels = [{"rack": f"r{n // 2}", "zone": "z0"} for n in range(nodes)]
    weights = {**PRIMARY, "balance": draw(st.sampled_from([0, 1, 5000]))}
    return Cluster(nodes, 4, node_labels=labels), spec, weights


@example_tiers(40, 80)
def test_components_placed_first_with_topology_and_balance_are_counted_exactly(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(placed_first_specs())(check_placed_first))()


def check_placed_first(case: tuple[Cluster, dict[str, Any], dict[str, int]]) -> None:
    cluster, placement, weights = case
    note(f"{placement} {weights}")
    spec = built_or_refused(cluster, placement)
    if spec is None:
        return
    answer = count_answer(spec, weights=weights)
    if not isinstance(answer, Answer):
        assert flat_optimum(spec, weights=weights) is None, f"declined: {answer.reason}"
        event("no placement")
        return
    event(f"counts {answer.status}, placed first {'with' if 'topology' in placement.get('shadow', {}) else 'without'} topology, balance {weights['balance']}")
    assert answer.assignments is not None
    verify(spec, Solution(spec, spec.requests, dict(answer.assignments), "FEASIBLE", None).placements_by_component())
    owned = {c.rule_owner: answer.assignments[c.name] for c in spec.components.values()}
    assert objective_value(spec, dict(spec.requests), owned, weights, {}) == answer.objective
    assert answer.status == "OPTIMAL", f"not proven: objective {answer.objective}, bound {answer.bound}"
    assert answer.objective == flat_optimum(spec, weights=weights)


@st.composite
def spanning_specs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """Racks of 1-2 nodes of 2 or 4 GPUs; an actor whose pipelines (TP 1-2, 2-4 stages, maybe on
    a rollout collocated with it) prefer a rack, often wider than a rack or more than the racks
    hold whole, and maybe a component exclusive with it taking GPUs away."""
    nodes, gpus, rack = draw(st.integers(2, 5)), draw(st.sampled_from([2, 4])), draw(st.sampled_from([1, 2]))
    total = nodes * gpus
    tp, pp = draw(st.sampled_from([1, 2])), draw(st.sampled_from([2, 3, 4]))
    preferred = {"pipeline_parallel": {"rack": "prefer"}}
    actor: dict[str, Any] = {"processes": tp * pp * draw(st.integers(1, max(1, total // (tp * pp)))), "tensor_parallel_size": tp,
                             "pipeline_parallel_size": pp}  # fmt: skip
    spec: dict[str, Any] = {"actor": actor}
    if draw(st.booleans()):
        actor["topology"] = preferred
    else:
        spec["rollout"] = {"processes": actor["processes"], "collocate_with": "actor", "tensor_parallel_size": tp, "pipeline_parallel_size": pp,
                           "topology": preferred}  # fmt: skip
    if draw(st.booleans()):
        spec["reward"] = {"processes": draw(st.integers(1, max(1, total // 3))), "exclusive_with": ["actor"]}
    return Cluster(nodes, gpus, node_labels=[{"rack": f"r{n // rack}"} for n in range(nodes)]), spec


@example_tiers(20, 40)
def test_a_preferred_domain_no_placement_keeps_is_priced_and_proven(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(spanning_specs())(check_topology))()


def test_pipelines_wider_than_every_rack_skip_the_required_variant(caplog: pytest.LogCaptureFixture) -> None:
    """A pipeline of 3 nodes preferring a rack of 2 spans two racks whatever the layout, so the
    spec with the preference required has no placement: its topology term is stated at once
    (``preferred.forced_spans``), with the flat model's optimum, and no model of the required
    variant is built first (a model and a CP-SAT run of ``topology overlaps:461:2``'s 0.18 s)."""
    placement = {"actor": {"processes": 12, "tensor_parallel_size": 2, "pipeline_parallel_size": 3,
                           "topology": {"pipeline_parallel": {"rack": "prefer"}}}}  # fmt: skip
    spec = PlacementSpec.build(Cluster(6, 2, node_labels=[{"rack": f"r{n // 2}"} for n in range(6)]), placement)
    with caplog.at_level("DEBUG", logger="solver_placement._solver.counts"):
        answer = count_answer(spec)
    assert "its topology term stated at once" in caplog.text and "counted as required" not in caplog.text
    assert isinstance(answer, Answer) and answer.status == "OPTIMAL"
    assert answer.objective == flat_optimum(spec)
