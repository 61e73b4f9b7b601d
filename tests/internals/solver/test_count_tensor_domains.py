"""A required tensor-parallel domain bounded by its groups free to span any nodes
(``tensor_domains.groups_anywhere``): a relaxation, so its count never passes the flat optimum,
and the restriction's answer that meets it is proven."""

from __future__ import annotations

from typing import Any

from flat_model import built_or_refused, count_answer, flat_optimum
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from solver_placement import Cluster
from solver_placement._solver.answer import Answer
from solver_placement._solver.counts.tensor_domains import groups_anywhere


@st.composite
def rack_specs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """2-6 nodes of 2 or 4 GPUs in racks of 1-3 nodes; an actor of TP 2 or 4 requiring its
    groups in one rack; maybe a reward exclusive with it, maybe a critic with memory beside it."""
    nodes, gpus, rack = draw(st.integers(2, 6)), draw(st.sampled_from([2, 4])), draw(st.integers(1, 3))
    tp = draw(st.sampled_from([2, 4]))
    total = nodes * gpus
    placement: dict[str, Any] = {
        "actor": {"processes": tp * draw(st.integers(1, max(1, total // tp))), "tensor_parallel_size": tp, "topology": {"tensor_parallel": {"rack": "require"}}}
    }
    if draw(st.booleans()):
        placement["reward"] = {"processes": draw(st.integers(1, max(1, total // 2))), "exclusive_with": ["actor"]}
    if draw(st.booleans()):
        placement["critic"] = {"processes": draw(st.integers(1, total)), "memory_gb": 50}
        placement["actor"]["memory_gb"] = 40
    labels = [{"rack": f"r{n // rack}"} for n in range(nodes)]
    return Cluster(nodes, gpus, gpu_memory_gb=80, node_labels=labels), placement


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rack_specs())
def test_groups_free_to_span_any_nodes_never_bound_above_the_flat_optimum(case: tuple[Cluster, dict[str, Any]]) -> None:
    cluster, placement = case
    note(f"{cluster.gpus_per_node.tolist()} {placement}")
    spec = built_or_refused(cluster, placement)
    if spec is None:
        return
    optimum = flat_optimum(spec)
    loose = groups_anywhere(spec)
    assert loose is not None
    bound = count_answer(loose)
    if optimum is None:
        event("no placement")
        return
    assert isinstance(bound, Answer) and bound.bound is not None and bound.bound <= optimum
    answer = count_answer(spec)
    assert isinstance(answer, Answer) and answer.status == "OPTIMAL" and answer.objective == optimum
    event("bound met" if bound.bound == optimum else "bound below")

