"""Re-planning after a node loss: only the processes of lost nodes move, the job keeps its shape,
nothing lands on a lost node, and what cannot be re-planned is refused by name."""

from __future__ import annotations

from dataclasses import replace

import pytest
from generators import SpecCase, valid_specs
from helpers import config, example_tiers, layout
from hypothesis import given, note, settings
from hypothesis import strategies as st
from internals.solver.flat_model import flat_solution

from solver_placement import (
    InfeasiblePlacementError,
    PlacementConfigError,
    PlacementError,
    Solution,
    VerificationError,
    solve,
    verify,
)
from solver_placement._errors import InternalError
from solver_placement._replan import SURVIVORS_LABEL, _verified, displaced, moved, replan
from solver_placement._solver.previous import previous_hardware
from solver_placement._solver.solve import solve_part

#: Nodes 0-3 have 4 GPUs each, node 4 is CPU-only; node 3 starts out idle.
JOB = config(5, [4, 4, 4, 4, 0], {
    "actor": {"node_group": "gpu", "placement": "0-7", "tensor_parallel_size": 4},
    "rollout": {"node_group": "gpu", "processes": 4, "hardware_per_process": 2, "stride": "auto", "collocate_with": "actor"},
    "reward": {"node_group": "gpu", "placement": "8-9:0-3", "exclusive_with": ["actor"]},
    "critic": {"node_group": "gpu", "processes": 2, "exclusive_with": ["actor", "reward"]},
    "env": {"node_group": "cpu", "placement": "0:0-3"},
}, node_groups=[{"label": "gpu", "node_ranks": "0-3"}, {"label": "cpu", "node_ranks": 4}])


@pytest.fixture(scope="module")
def job() -> Solution:
    solution = solve(JOB)
    assert layout(solution, "actor") == [(0, [g]) for g in range(4)] + [(1, [g]) for g in range(4)]
    assert layout(solution, "reward") == [(2, [0]), (2, [0]), (2, [1]), (2, [1])]
    assert layout(solution, "critic") == [(2, [2]), (2, [3])]
    return solution


def assert_same_job(before: Solution, after: Solution, lost: list[int]) -> None:
    """Same components, process counts, items per process and rules; nothing on a lost node."""
    assert after.components == before.components
    for name in before.components:
        old, new = before.placements(name), after.placements(name)
        assert [len(p.hardware_ranks) for p in new] == [len(p.hardware_ranks) for p in old], name
        assert after.spec.components[name].constraints == before.spec.components[name].constraints, name
        assert not {p.cluster_node_rank for p in new} & set(lost), name
    verify(after.spec, after.placements_by_component())


def test_a_lost_node_moves_only_its_own_processes(job: Solution) -> None:
    after = replan(job, [1])
    assert_same_job(job, after, [1])
    assert moved(job, after) == displaced(job, [1]) == {"actor": 4, "rollout": 2, "reward": 0, "critic": 0, "env": 0}
    # the actor's lost TP group and its two rollout engines go to the idle node together
    assert layout(after, "actor") == [(0, [g]) for g in range(4)] + [(3, [g]) for g in range(4)]
    assert layout(after, "rollout") == [(0, [0, 2]), (0, [1, 3]), (3, [0, 2]), (3, [1, 3])]
    assert "keep_in_place" in after.timings  # survivors pinned, only the displaced placed


def test_survivors_move_when_that_is_the_only_way_to_fit() -> None:
    """``x`` needs a whole node; after node 0 is lost, nodes 1 and 2 each hold two of ``y``'s or
    ``z``'s processes: one of them must join the other's node (2 moves) to free a node for ``x``."""
    before = solve(config(3, 4, {
        "x": {"placement": "0-3:0", "exclusive_with": ["y", "z"]}, "y": "4-5", "z": "8-9",
    }))
    after = replan(before, [0])
    assert_same_job(before, after, [0])
    assert displaced(before, [0]) == {"x": 1, "y": 0, "z": 0}
    assert sum(moved(before, after).values()) == 3 and moved(before, after)["x"] == 1
    assert "keep_in_place" not in after.timings and after.status == "OPTIMAL"  # the exact model moved survivors


def test_surviving_processes_may_be_renumbered_but_keep_their_hardware(job: Solution) -> None:
    """Processes are interchangeable: after losing node 0, node 1's actor group becomes ranks 0-3."""
    after = replan(job, [0])
    assert moved(job, after) == {"actor": 4, "rollout": 2, "reward": 0, "critic": 0, "env": 0}
    assert layout(after, "actor")[:4] == [(1, [g]) for g in range(4)]


def test_losing_an_idle_node_changes_nothing(job: Solution) -> None:
    after = replan(job, [3])
    assert after.placements_by_component() == job.placements_by_component()


def test_replan_moves_fewer_processes_than_a_fresh_solve() -> None:
    before = solve(config(3, 4, {"a": {"processes": 4}, "b": {"processes": 2, "exclusive_with": ["a"]}}))
    assert [node for node, _ in layout(before, "a") + layout(before, "b")] == [0] * 4 + [1] * 2
    kept = replan(before, [0])
    assert moved(before, kept) == {"a": 4, "b": 0}
    assert [node for node, _ in layout(kept, "a") + layout(kept, "b")] == [2] * 4 + [1] * 2
    fresh = replan(before, [0], objective={"changes": 0})  # the same spec placed from scratch
    assert moved(before, fresh) == {"a": 4, "b": 2}


def test_shared_items_are_kept_in_place_or_refused_by_name(job: Solution) -> None:
    """``reward`` shares each GPU between two processes: no declarative form, so it is pinned
    while its node lives and refused when its node is lost."""
    assert layout(replan(job, [0]), "reward") == layout(job, "reward")
    with pytest.raises(PlacementConfigError, match=(
        r"replan without node 2: reward: its processes share items \(up to 2 processes on one item\), which a "
        r"declarative component cannot state, and it ran on lost node 2")):
        replan(job, [2])


def test_a_job_that_no_longer_fits_names_the_lost_nodes_and_the_conflict(job: Solution) -> None:
    with pytest.raises(InfeasiblePlacementError, match=r"^replan without nodes 0, 1: no placement exists") as info:
        replan(job, [1, 0])
    assert any("critic is exclusive with actor" in conflict for conflict in info.value.conflicts)


def test_robots_env_configs_and_node_processes_leave_the_lost_node() -> None:
    groups = [
        {"label": "arms", "node_ranks": "1-3", "hardware": {"type": "robot", "configs": [{"node_rank": n, "ip": f"10.0.0.{n}"} for n in (1, 2, 3)]}},
        {"label": "gpu", "node_ranks": "0-3", "env_configs": [{"node_ranks": "1-2", "env_vars": {"NCCL_DEBUG": "INFO"}}]},
    ]
    before = solve(config(4, 2, {
        "arm": {"node_group": "arms", "placement": "0-1"},
        "monitor": {"node_group": "node", "placement": "0-1"},
        "policy": {"node_group": "gpu", "placement": "2-3"},
    }, node_groups=groups))
    after = replan(before, [1])
    assert_same_job(before, after, [1])
    assert layout(after, "arm") == [(2, [0]), (3, [0])]
    assert [(p.cluster_node_rank, p.node_group_label) for p in after.placements("monitor")] == [(0, SURVIVORS_LABEL), (2, SURVIVORS_LABEL)]
    assert moved(before, after) == {"arm": 1, "monitor": 1, "policy": 2}
    env_of = {c.node_ranks: c.env_vars for c in after.cluster.node_groups["gpu"].env_configs}
    assert env_of == {(2,): {"NCCL_DEBUG": "INFO"}}
    assert after.cluster.gpus_per_node.tolist() == [2, 0, 2, 2] and after.cluster.num_nodes == 4


def test_a_group_left_without_gpus_offers_none_instead_of_counting_nodes() -> None:
    """Group ``fast`` = a GPU node and a CPU node; without its GPU node it must not turn into a
    group whose ranks count nodes (its component would land on the CPU node)."""
    before = solve(config(3, [2, 2, 0], {"a": {"node_group": "fast", "processes": 1}},
                          node_groups=[{"label": "fast", "node_ranks": "1-2"}]))
    with pytest.raises(PlacementConfigError, match=r"replan without node 1: a: node group 'fast' .* has no resources to place on"):
        replan(before, [1])


def test_memory_topology_and_pipeline_rules_are_restated() -> None:
    before = solve(config(2, 4, {
        "actor": {"processes": 4, "tensor_parallel_size": 2, "pipeline_parallel_size": 2, "offload_optimizer": True,
                  "memory_gb": {"weights": 10, "optimizer": 20, "activations": 5}, "topology": {"pipeline_parallel": {"rack": "prefer"}}},
        "rollout": {"processes": 4, "collocate_with": "actor", "memory_gb": 30},
    }, gpu_memory_gb=80, node_labels=[{"rack": "r0"}, {"rack": "r1"}]))
    after = replan(before, [])
    assert_same_job(before, after, [])
    assert moved(before, after) == {"actor": 0, "rollout": 0}


@pytest.mark.parametrize("lost", [[5], [-1], [True], ["1"], [1, 1], "1", None])
def test_lost_nodes_must_be_node_ranks(job: Solution, lost: object) -> None:
    with pytest.raises(PlacementConfigError, match="replan: lost"):
        replan(job, lost)


def test_collocation_nesting_holds_for_a_declarative_target() -> None:
    """Replan restates collocation targets as declarative: each collocated process must still sit
    inside one TP group of its target (the model enforced it only for rank-based targets)."""
    solution = solve(config(1, 8, {
        "actor": {"processes": 4, "tensor_parallel_size": 2},
        "rollout": {"processes": 2, "hardware_per_process": 2, "stride": 2, "collocate_with": "actor"},
    }))
    verify(solution.spec, solution.placements_by_component())


@example_tiers(20, 40)
def test_any_replan_keeps_the_job_or_refuses_with_a_placement_error(examples: int) -> None:
    jobs = valid_specs(max_nodes=4).filter(lambda case: case.cluster.num_nodes > 1)
    settings(max_examples=examples)(given(jobs, st.data())(check_replan))()


def check_replan(case: SpecCase, data: st.DataObject) -> None:
    """Generated jobs lose a random node: either a verified job of the same shape with nothing on
    the lost node, at least the displaced processes moved, or a PlacementError (never another)."""
    before = solve(case.config())
    lost = [data.draw(st.integers(0, before.cluster.num_nodes - 1), label="lost node")]
    note(repr(case.config()))
    try:
        after = replan(before, lost)
    except PlacementError as error:
        note(f"refused: {error}")
        assert str(error).startswith(f"replan without node {lost[0]}: "), str(error)
        return
    assert_same_job(before, after, lost)
    shifted, lower_bound = moved(before, after), displaced(before, lost)
    assert all(shifted[name] >= count for name, count in lower_bound.items())
    if "keep_in_place" in after.timings:  # exactly the displaced processes moved
        assert shifted == lower_bound
        assert_measured_soundly(before, after)


def assert_measured_soundly(before: Solution, after: Solution) -> None:
    """Keep-in-place's objective is the flat model's value of its layout, its bound is below the
    flat model's optimum, and OPTIMAL means that optimum is met (``contiguity`` left out)."""
    held = previous_hardware(after.spec, before)
    flat = flat_solution(after.spec, {"contiguity": 0}, previous=held)
    assert after.objective is not None and after.bound is not None
    assert after.bound <= flat.objective <= after.objective, (after.bound, flat.objective, after.objective)
    if after.status == "OPTIMAL":
        assert after.objective == flat.objective


@pytest.mark.unverified_solutions  # the point is a broken answer
def test_keep_in_place_checks_its_answer_once_and_names_a_broken_split_answer() -> None:
    """Keep in place checks the merged answer only (``solve_part`` skips the split answer's
    check); when the merged answer breaks a rule, the split answer is checked too: broken as well,
    that is the library's bug, raised; sound, the merged one's own error goes to the caller (the
    exact model then decides)."""
    good = solve(config(1, 4, {"a": {"processes": 2}, "b": {"processes": 2, "exclusive_with": ["a"]}}), num_workers=1)
    broken = replace(good, assignments={**good.assignments, "b": good.assignment("a")})  # b on a's GPUs
    _verified(good, good)
    with pytest.raises(VerificationError, match="exclusive"):
        _verified(broken, good)
    with pytest.raises(InternalError, match="a bug of solver_placement"):
        _verified(broken, broken)


def test_solve_part_answers_as_solve_does(job: Solution) -> None:
    """``solve_part`` (keep in place's solve, its answer checked by the caller) gives what
    ``solve`` gives: the same method, status, objective and placement."""
    part, whole = solve_part(job.spec, time_limit_s=None, num_workers=1, objective=None), solve(job.spec, num_workers=1)
    assert (part.method, part.status, part.objective) == (whole.method, whole.status, whole.objective)
    assert part.placement_records() == whole.placement_records()
