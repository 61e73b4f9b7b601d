"""The notes of a solution say which exact model answered and why (issue 34 item 4): the last
note names the path that answered and how it proved its answer, the ones before it why a path
before it declined or was not used."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import config, declined_first

from solver_placement import solve

#: Four components in a cycle of exclusions with no chord (the issue's own example), on 3 x 8.
RING = {name: {"processes": 6, "exclusive_with": [other]} for name, other in zip("abcd", "bcda")}
#: Two nodes of 4 GPUs, each with one robot.
ROBOTS = {
    "num_nodes": 2,
    "num_gpus_per_node": 4,
    "node_groups": [
        {"label": "gpus", "node_ranks": "0-1"},
        {"label": "robots", "node_ranks": "0-1", "hardware": {"type": "robot", "configs": [{"node_rank": n, "robot_ip": f"10.0.0.{n + 1}"} for n in range(2)]}},
    ],
    "component_placement": {"actor": {"node_group": "gpus", "processes": 4}, "env": {"node_group": "robots", "processes": 2}},
}


def section(nodes: int, gpus: int, placement: dict[str, Any], **solver: Any) -> dict[str, Any]:
    return {"cluster": {"num_nodes": nodes, "num_gpus_per_node": gpus, "component_placement": placement, **({"solver": solver} if solver else {})}}


@pytest.mark.parametrize(
    ("config", "model"),
    [
        (section(2, 8, {"actor": {"processes": 8, "tensor_parallel_size": 2}, "rollout": {"processes": 4, "exclusive_with": ["actor"]}}),
         "counted over 25 node patterns of 1 node shape (nodes per pattern"),
        (section(3, 8, RING), "counted over the maximal ones of 1,365 node patterns of 1 node shape and what each gives back"),
        (section(2, 8, {"actor": {"processes": 6}, "rollout": {"processes": 5, "exclusive_with": ["actor"]}}, objective={"contiguity": 1, "nodes": 10}),
         "contiguity weighed: every whole-node pattern walked with its least rank cost, in runs of evenly rising ranks; then counted over all 36 walked whole-node patterns in 1 run"),
        (section(1, 8, {"actor": "0-3", "rollout": "4-7"}), "every component placed by its rank string: nothing to choose"),
        ({"cluster": ROBOTS}, "items of several kinds: each group of kinds no component spans two of counted on its own view, the optima summed; "
                             "then Accelerator: counted over 5 node patterns of 1 node shape"),
    ],
    ids=["patterns", "ring of exclusions", "contiguity weighed", "rank strings", "robots"],
)  # fmt: skip
def test_a_count_answer_names_the_model_that_counted_it(config: dict[str, Any], model: str) -> None:
    solution = solve(config, time_limit_s=10, num_workers=1)
    assert declined_first(solution) == ()
    assert solution.notes[-1].startswith("the count model (optimal): ") and model in solution.notes[-1], solution.notes


def test_a_required_tensor_domain_says_how_its_groups_were_counted() -> None:
    racks = [{"rack": str(node // 2)} for node in range(4)]
    placement = {"actor": {"processes": 8, "tensor_parallel_size": 4, "topology": {"tensor_parallel": {"rack": "require"}}}}
    solution = solve(config(4, 4, placement, node_labels=racks), time_limit_s=10, num_workers=1)
    assert declined_first(solution) == ()
    assert "a required tensor-parallel domain, counted with every group on one node" in solution.notes[-1], solution.notes

