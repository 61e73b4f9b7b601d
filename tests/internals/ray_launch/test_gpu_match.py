"""Getting every GPU bundle its planned GPU from Ray's lowest-free-first choice, on plain data."""

from __future__ import annotations

import pytest

from solver_placement import Cluster, LaunchError, PlacementSpec, solve
from solver_placement._ray_launch.gpu_match import idle_gpus_for_next_attempt
from solver_placement._ray_launch.launch_plan import RayLaunchPlan, stated_ray_nodes, to_ray

CLUSTER = Cluster(1, 8)


def planned(placement: str, idle: dict[int, frozenset[int]] | None = None) -> RayLaunchPlan:
    solution = solve(PlacementSpec.build(CLUSTER, {"a": placement}))
    return to_ray(solution.placements_by_component(), CLUSTER, stated_ray_nodes(CLUSTER), idle_gpus=idle)


def lowest_free(plan: RayLaunchPlan, held_by_others: set[int]) -> list[list[str]]:
    """What Ray hands the plan's GPU bundles: the node's lowest free ids, in bundle order."""
    free = iter(gpu for gpu in range(8) if gpu not in held_by_others)
    return [[str(next(free))] for _ in plan.bundles]


@pytest.mark.parametrize(
    ("placement", "held_by_others", "attempts"),
    [("0-1", set(), 1), ("2-3", set(), 2), ("5", {0, 3, 4}, 3), ("1", {0}, 1), ("4-6", {1, 2}, 2)],
)
def test_attempts_converge_to_every_bundle_holding_its_planned_gpu(placement: str, held_by_others: set[int], attempts: int) -> None:
    idle: dict[int, frozenset[int]] = {}
    tried = 0
    while tried < 8:
        tried += 1
        plan = planned(placement, idle)
        more = idle_gpus_for_next_attempt(plan, lowest_free(plan, held_by_others), idle)
        if more is None:
            break
        idle = more
    assert tried == attempts
    assert [b.item for b in plan.bundles if not b.idle] == [f"gpu {gpu}" for gpu in _ids(placement)]
    assert not {int(b.item.split()[1]) for b in plan.bundles} & held_by_others


def test_a_planned_gpu_another_job_holds_is_named() -> None:
    first = planned("1-2")
    idle = idle_gpus_for_next_attempt(first, lowest_free(first, {2}), {})  # got 0-1: GPU 0 is free, hold it
    assert idle == {0: frozenset({0})}
    second = planned("1-2", idle)
    with pytest.raises(LaunchError, match=r"^bundle 2 should hold GPU 2 of node 0 but Ray gave it GPU 3 \(another job holds GPU 2\)"):
        idle_gpus_for_next_attempt(second, lowest_free(second, {2}), idle)


def test_an_attempt_that_teaches_nothing_is_an_error_not_a_loop() -> None:
    plan = planned("2", {0: frozenset({0, 1})})
    with pytest.raises(LaunchError, match=r"did not hand the reserved GPUs out lowest-first.*node 0: planned \[0, 1, 2\], given \[1, 0, 2\]"):
        idle_gpus_for_next_attempt(plan, [["1"], ["0"], ["2"]], {0: frozenset({0, 1})})


def _ids(placement: str) -> list[int]:
    first, _, last = placement.partition("-")
    return list(range(int(first), int(last or first) + 1))
