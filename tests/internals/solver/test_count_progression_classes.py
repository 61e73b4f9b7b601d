"""Collocated classes counted in the progressions of one member's shape, whose processes every
other member's tile (``counts/strided.py``, ``progression_shape``, ``tiles``; ``counts/followers.py``).

A follower of 2 GPUs at stride 2 in a target's groups of 2 takes ``{h, h + 2}``: a block of 4
consecutive GPUs does not tile a group of 2, so the count model once counted such a class in
whole blocks and proved it against a relaxation without them, and declined where the two
differed. Every layout's class GPUs on a node are a disjoint union of the strided member's
processes, and each such union is laid out, so the progressions state it exactly. Every answer
is verified and held against the exact flat model's optimum (one boolean per process and GPU),
and the count path answers every spec that has a placement. The same holds for a root whose
stride leaves holes in its groups with followers of other shapes (declined before): where one
member's processes are tiled by every other's, the class is that member's progressions; where
none is, the count model still declines by name (``REMAINING``)."""

from __future__ import annotations

from typing import Any

import pytest
from flat_model import counted_case, flat_optimum, flat_solution
from helpers import declined_first, example_tiers
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_count_domains import assert_proven_at_flat_optimum
from test_count_typed import PRIMARY

from solver_placement import Cluster, PlacementSpec, solve
from solver_placement._solver.answer import Answer
from solver_placement._solver.evaluate import objective_value

#: What the count model still declines of a holey root's classes: no member's processes tiled by
#: every other's (three consecutive GPUs beside two GPUs two apart: their union is blocks of 12).
REMAINING = "no member's processes are tiled by every other's"


@st.composite
def progression_classes(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """1-3 nodes of 4, 6 or 8 GPUs, the first in a node group ``first``; a strided component of
    2 or 3 GPUs a process at stride 2 or 3 (TP 1 or 2), collocated with a one-GPU component (TP
    1-4; or the one-GPU component collocated with it), maybe a second one-GPU member in a chain
    or a second strided member of the same shape; some confined to ``first``; sometimes a
    component exclusive with the class, and a GPU of node 0 it is kept off."""
    gpus = draw(st.lists(st.sampled_from([4, 6, 8]), min_size=1, max_size=3))
    amount, stride, tp = draw(st.sampled_from([2, 3])), draw(st.sampled_from([2, 3])), draw(st.sampled_from([1, 2]))
    processes = tp * draw(st.integers(1, max(1, sum(gpus) // (amount * tp))))
    held = processes * amount
    strided: dict[str, Any] = {"processes": processes, "hardware_per_process": amount, "stride": stride, "tensor_parallel_size": tp}
    ones: dict[str, Any] = {"processes": held, "tensor_parallel_size": draw(st.sampled_from([t for t in (1, 2, 3, 4, 6) if held % t == 0]))}
    spec: dict[str, Any] = {"actor": ones, "rollout": strided} if draw(st.booleans()) else {"rollout": strided, "actor": ones}
    if draw(st.booleans()):
        ones["collocate_with"] = "rollout"
    else:
        strided["collocate_with"] = "actor"
    if draw(st.integers(0, 2)) == 0:
        spec["ref"] = {"processes": held, "collocate_with": draw(st.sampled_from(["actor", "rollout"])),
                       "tensor_parallel_size": draw(st.sampled_from([t for t in (1, 2, 4) if held % t == 0]))}  # fmt: skip
    elif draw(st.integers(0, 2)) == 0:
        spec["ref"] = {"processes": processes, "hardware_per_process": amount, "stride": stride, "collocate_with": "actor"}
    for name in spec:
        if draw(st.integers(0, 5)) == 0:
            spec[name]["node_group"] = "first"
    if draw(st.integers(0, 2)) == 0:
        spec["critic"] = {"processes": draw(st.integers(1, max(1, sum(gpus) // 2))), "exclusive_with": ["actor"]}
    if draw(st.integers(0, 3)) == 0:  # a GPU the class is kept off: its layout in progressions there (``problem.in_progressions``)
        spec["pin"] = {"placement": str(draw(st.integers(0, gpus[0] - 1))), "exclusive_with": ["actor"]}
    return Cluster(len(gpus), gpus, node_groups=[{"label": "first", "node_ranks": "0"}]), spec


@example_tiers(30, 60)
def test_one_strided_shape_is_counted_in_its_progressions(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(progression_classes())(check_progressions))()


#: Shapes (GPUs a process, stride) a holey root's follower may take.
FOLLOWER_SHAPES = [(2, 1), (3, 1), (4, 1), (6, 1), (2, 2), (4, 2), (6, 2), (2, 3), (3, 3), (6, 3)]


@st.composite
def holey_classes(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any]]:
    """1-3 nodes of 6, 8 or 12 GPUs, the first in a node group ``first``; a root of 2 or 3 GPUs a
    process at stride 2 or 3 whose TP groups are not a multiple of its stride (its processes
    leave holes in its groups), a follower of another shape (``FOLLOWER_SHAPES``) holding as
    many GPUs, maybe a one-GPU follower, maybe a component exclusive with the root and a GPU of node 0 it
    is kept off."""
    gpus = draw(st.lists(st.sampled_from([6, 8, 12]), min_size=1, max_size=3))
    amount, stride = draw(st.sampled_from([2, 3])), draw(st.sampled_from([2, 3]))
    tp = draw(st.sampled_from([t for t in (1, 2, 3) if t % stride]))
    processes = tp * draw(st.integers(1, max(1, sum(gpus) // (amount * tp))))
    held = processes * amount
    spec: dict[str, Any] = {"actor": {"processes": processes, "hardware_per_process": amount, "stride": stride, "tensor_parallel_size": tp}}
    each, step = draw(st.sampled_from([shape for shape in FOLLOWER_SHAPES if held % shape[0] == 0 and shape != (amount, stride)] or [(1, 1)]))
    theirs = held // each
    spec["ref"] = {"processes": theirs, "hardware_per_process": each, "stride": step, "collocate_with": "actor",
                   "tensor_parallel_size": draw(st.sampled_from([t for t in (1, 2) if theirs % t == 0]))}  # fmt: skip
    if draw(st.integers(0, 2)) == 0:
        spec["rollout"] = {"processes": held, "collocate_with": draw(st.sampled_from(["actor", "ref"])), "node_group": "first"}
    if draw(st.integers(0, 2)) == 0:
        spec["critic"] = {"processes": draw(st.integers(1, max(1, sum(gpus) // 2))), "exclusive_with": ["actor"]}
    if draw(st.integers(0, 3)) == 0:  # a GPU the class is kept off: its layout in progressions there (``problem.in_progressions``)
        spec["pin"] = {"placement": str(draw(st.integers(0, gpus[0] - 1))), "exclusive_with": ["actor"]}
    return Cluster(len(gpus), gpus, node_groups=[{"label": "first", "node_ranks": "0"}]), spec


@example_tiers(25, 80)
def test_a_holey_root_with_followers_of_other_shapes_is_counted_exactly(examples: int) -> None:
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(holey_classes())(check_progressions))()


def check_progressions(case: tuple[Cluster, dict[str, Any]]) -> None:
    counted = counted_case(*case)
    if counted is None:
        return
    spec, answer = counted
    requests = dict(spec.requests)
    if not isinstance(answer, Answer):
        if REMAINING in answer.reason:
            event("declined: no member's processes tiled by every other's")
            return
        assert flat_optimum(spec, requests) is None, f"the count path declined a spec that has a placement: {answer.reason}"
        event("no placement")
        return
    assert_proven_at_flat_optimum(spec, requests, answer)
    solution = solve(spec, time_limit_s=10)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())


#: Specs declined before (each note: "a stride whose blocks of 4 GPUs do not tile the groups of
#: 2 GPUs", or of 6 and 4): one group per node, where whole blocks leave no layout; three groups on two 6-GPU
#: nodes, where whole blocks take a node more than the relaxation's bound; and a chain through a
#: one-GPU member of TP 4 beside a critic exclusive with it.
DECLINED_BEFORE: list[tuple[list[int], dict[str, Any]]] = [
    ([4, 4], {"actor": {"processes": 2, "tensor_parallel_size": 2}, "rollout": {"processes": 1, "hardware_per_process": 2, "stride": 2, "collocate_with": "actor"}}),
    ([6, 6], {"actor": {"processes": 6, "tensor_parallel_size": 2}, "rollout": {"processes": 3, "hardware_per_process": 2, "stride": 2, "collocate_with": "actor"}}),
    ([8, 8], {"actor": {"processes": 8, "tensor_parallel_size": 4}, "rollout": {"processes": 4, "hardware_per_process": 2, "stride": 3, "collocate_with": "actor"},
              "ref": {"processes": 8, "collocate_with": "rollout"}, "critic": {"processes": 6, "exclusive_with": ["actor"]}}),
]  # fmt: skip


#: Holey roots with followers of other shapes, declined before ("a follower of one GPU a process,
#: or of its amount and stride, is counted"): a follower of six consecutive GPUs (two of the root's
#: processes of three GPUs two apart), of four consecutive GPUs beside a critic exclusive with the
#: root, of four GPUs two apart (two of the root's of two), one of two GPUs two apart inside the
#: root's of four (TP 2: nested in it), and one of three consecutive GPUs whose processes and the
#: root's tile only whole blocks of 12 (counted in them, proven against the class without blocks).
HOLEY_DECLINED_BEFORE: list[tuple[list[int], dict[str, Any]]] = [
    ([8, 8], {"actor": {"processes": 4, "hardware_per_process": 3, "stride": 2}, "ref": {"processes": 2, "hardware_per_process": 6, "collocate_with": "actor"}}),
    ([8, 8], {"actor": {"processes": 4, "hardware_per_process": 2, "stride": 2}, "ref": {"processes": 2, "hardware_per_process": 4, "collocate_with": "actor"},
              "x": {"processes": 4, "exclusive_with": ["actor"]}}),
    ([8, 8], {"actor": {"processes": 4, "hardware_per_process": 2, "stride": 2}, "ref": {"processes": 2, "hardware_per_process": 4, "stride": 2, "collocate_with": "actor"}}),
    ([8, 8], {"actor": {"processes": 2, "hardware_per_process": 4, "stride": 2},
              "ref": {"processes": 4, "hardware_per_process": 2, "stride": 2, "tensor_parallel_size": 2, "collocate_with": "actor"}}),
    ([12, 12], {"actor": {"processes": 6, "hardware_per_process": 2, "stride": 2}, "ref": {"processes": 4, "hardware_per_process": 3, "collocate_with": "actor"},
                "critic": {"processes": 12, "exclusive_with": ["actor"]}}),
]  # fmt: skip


@pytest.mark.parametrize(("gpus", "placement"), DECLINED_BEFORE + HOLEY_DECLINED_BEFORE)
def test_classes_declined_before_are_proven_by_the_count_model(gpus: list[int], placement: dict[str, Any]) -> None:
    spec = PlacementSpec.build(Cluster(len(gpus), gpus), placement)
    solution = solve(spec, time_limit_s=10)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    flat = flat_solution(spec, {"contiguity": 0})
    assert (flat.method, flat.status) == ("search", "OPTIMAL")
    assert solution.objective == objective_value(spec, spec.requests, flat.assignments, PRIMARY, {})


@pytest.mark.parametrize(("gpus", "placement"), DECLINED_BEFORE + HOLEY_DECLINED_BEFORE)
def test_classes_declined_before_are_proven_with_contiguity_weighed(gpus: list[int], placement: dict[str, Any]) -> None:
    """The same classes with ``contiguity`` weighed (each node's layout priced in ranks,
    ``weighed.py``): proven at the flat model's optimum of the same weights."""
    spec = PlacementSpec.build(Cluster(len(gpus), gpus), placement)
    solution = solve(spec, time_limit_s=10, objective={"contiguity": 2})
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    assert solution.objective == flat_solution(spec, {"contiguity": 2}).objective


@pytest.mark.parametrize(("extra", "objective"), [({}, {"contiguity": 5}), ({"a": {"placement": "3-3", "exclusive_with": ["actor"]}}, {"contiguity": 0})])
def test_a_class_in_whole_blocks_is_kept_in_them_where_its_ids_are_priced_or_kept_off(extra: dict[str, Any], objective: dict[str, int]) -> None:
    """A holey root whose follower's processes and its own tile only whole blocks of both (12
    GPUs), with ``contiguity`` weighed or beside a rank string it avoids: the count model asks
    the class's layout again for progressions there (``problem.in_progressions``), which raised
    InternalError for a class formed in whole blocks; it keeps the blocks and proves them."""
    placement = {"actor": {"processes": 6, "hardware_per_process": 2, "stride": 2}, "ref": {"processes": 4, "hardware_per_process": 3, "collocate_with": "actor"},
                 "critic": {"processes": 12, "exclusive_with": ["actor"]}}  # fmt: skip
    spec = PlacementSpec.build(Cluster(2, 12), {**extra, **placement})
    solution = solve(spec, time_limit_s=10, objective=objective)
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    flat = flat_solution(spec, objective)
    assert (flat.status, flat.objective) == ("OPTIMAL", solution.objective)
