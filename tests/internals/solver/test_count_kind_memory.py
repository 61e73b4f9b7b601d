"""``memory_gb`` over node groups that mix GPUs and robots (issue 34): a view of several kinds
checks memory on its GPUs alone (``counts/item_memory.py``), so the count model answers every
such spec and proves the flat model's optimum."""

from __future__ import annotations

from typing import Any

import numpy as np
from helpers import example_tiers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_count_kinds import check_spanning, robot_cluster

from solver_placement import Cluster, PlacementSpec
from solver_placement._solver.counts.fixed_loads import fixed_loads
from solver_placement._solver.counts.item_memory import item_memory_mb
from solver_placement._solver.counts.kinds import kind_view, kinds_of


@st.composite
def memory_over_kinds(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any], dict[str, int]]:
    """1-3 nodes of 0-3 GPUs and 0-2 robots, each node's GPUs of 20, 40 or 80 GB; two or three
    components over GPUs and robots (either order; one of them maybe over GPUs alone or robots
    alone), each with memory of 10-90 GB (some more than a GPU holds, some pairs that do not fit
    one GPU together), one item a process, some exclusive with another; the default objective or
    ``balance``."""
    size = draw(st.integers(1, 3))
    gpus = draw(st.lists(st.integers(0, 3), min_size=size, max_size=size))
    robots = draw(st.lists(st.integers(0, 2), min_size=size, max_size=size))
    gpus[0], robots[-1] = max(gpus[0], 1), max(robots[-1], 1)
    memory = draw(st.lists(st.sampled_from([20, 40, 80]), min_size=size, max_size=size))
    total = sum(gpus) + sum(robots)
    placement: dict[str, Any] = {}
    for name in ("actor", "env", "ref")[: draw(st.integers(2, 3))]:
        window = draw(st.sampled_from([["cluster", "robots"], ["robots", "cluster"], ["cluster", "robots"], "cluster", "robots"]))
        body: dict[str, Any] = {"node_group": window, "processes": draw(st.integers(1, max(1, total // 2))), "memory_gb": draw(st.sampled_from([10, 30, 50, 90]))}
        if placement and draw(st.integers(0, 3)) == 0:
            body["exclusive_with"] = [draw(st.sampled_from(sorted(placement)))]
        placement[name] = body
    objective = draw(st.sampled_from([{}, {}, {"balance": 10}]))
    return robot_cluster(gpus, robots, memory=memory), placement, objective


@example_tiers(40, 80)
def test_random_memory_over_several_kinds_is_counted_at_the_flat_optimum(examples: int) -> None:
    """Every feasible draw is answered by the count model (no decline) at the flat optimum."""
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(memory_over_kinds())(check_spanning))()


def test_a_view_gives_memory_to_its_gpus_alone() -> None:
    """On a view of GPUs and robots: no memory per node, each GPU its own (a fixed load of no
    process that every stack must fit), the robots none."""
    cluster = robot_cluster([2, 1, 0], [1, 0, 2], memory=[40, 80, 20])
    spec = PlacementSpec.build(cluster, {"actor": {"node_group": ["cluster", "robots"], "processes": 2, "memory_gb": 30}})
    holdings = kinds_of(spec, spec.requests)
    assert not isinstance(holdings, str)
    view = kind_view(spec, spec.requests, holdings, (0, 1))
    view_cluster = view.spec.cluster
    assert view_cluster.gpu_memory_gb == [None, None, None]
    gpus = view.original >= 0
    kinds = np.where(gpus, cluster.hw_kind[np.maximum(view.original, 0)], -1)
    on_view = item_memory_mb(view_cluster)[: view.original.size]
    assert on_view[kinds == 0].tolist() == [40 * 1024, 40 * 1024, 80 * 1024]
    assert (on_view[kinds != 0] == -1).all()
    loads = fixed_loads(view.spec, view.spec.requests, [("actor",)])
    assert loads is not None
    assert list(zip(loads.gpu_node.tolist(), loads.gpu_local.tolist())) == [(0, 0), (0, 1), (1, 0)]  # every GPU of the view, no robot
    assert [loads.distinct[at].gpu_mb for at in loads.gpu_load.tolist()] == [40 * 1024, 40 * 1024, 80 * 1024]
    capacities = view_cluster.gpus_per_node.tolist()
    assert [[None if load is None else load.gpu_mb for load in loads.on_node(node, capacities[node])] for node in (0, 1)] == [
        [40 * 1024, 40 * 1024, *([None] * (capacities[0] - 2))],
        [80 * 1024, *([None] * (capacities[1] - 1))],
    ]
    assert loads.table[:2, :2].tolist() == [[int(loads.gpu_load[0]), int(loads.gpu_load[1])], [int(loads.gpu_load[2]), -1]]
