"""verl's dispatch modes, as pure functions (the Ray tests run them on real actors)."""

import numpy as np
import pytest

from solver_placement import PlacementError
from solver_placement.ray_launch.dispatch import REGISTER_ATTR, Dispatch, Execute, collect_results, dispatch_arguments, register


def test_one_to_all_and_rank_zero() -> None:
    assert dispatch_arguments(Dispatch.ONE_TO_ALL, (1,), {"k": 2}, 3, 1) == [((1,), {"k": 2})] * 3
    assert collect_results(Dispatch.RANK_ZERO, ["a", "b"], 1) == "a"


def test_all_to_all_needs_one_entry_per_worker() -> None:
    assert dispatch_arguments(Dispatch.ALL_TO_ALL, ([1, 2],), {}, 2, 1) == [((1,), {}), ((2,), {})]
    with pytest.raises(PlacementError, match="one entry per 3 workers"):
        dispatch_arguments(Dispatch.ALL_TO_ALL, ([1, 2],), {}, 3, 1)


def test_dp_split_respects_tensor_parallel_groups() -> None:
    per_worker = dispatch_arguments(Dispatch.DP_COMPUTE_SPLIT, (list(range(6)),), {}, 4, 2)
    assert [args[0] for args, _ in per_worker] == [[0, 1, 2], [0, 1, 2], [3, 4, 5], [3, 4, 5]]
    results = [[x * 10 for x in args[0]] for args, _ in per_worker]
    assert collect_results(Dispatch.DP_COMPUTE_SPLIT, results, 2) == [0, 10, 20, 30, 40, 50]
    arrays = dispatch_arguments(Dispatch.DP_COMPUTE_SPLIT, (np.arange(5),), {}, 2, 1)
    assert [a[0].tolist() for a, _ in arrays] == [[0, 1, 2], [3, 4]]
    assert collect_results(Dispatch.DP_COMPUTE_SPLIT, [np.array([1]), np.array([2, 3])], 1).tolist() == [1, 2, 3]
    with pytest.raises(PlacementError, match="splits lists, tuples and numpy arrays"):
        dispatch_arguments(Dispatch.DP_COMPUTE_SPLIT, ({"a": 1},), {}, 2, 1)


def test_dp_compute_gives_each_group_its_entry() -> None:
    per_worker = dispatch_arguments(Dispatch.DP_COMPUTE, (["x", "y"],), {}, 4, 2)
    assert [args for args, _ in per_worker] == [("x",), ("x",), ("y",), ("y",)]
    assert collect_results(Dispatch.DP_COMPUTE, ["r0", "r1", "r2", "r3"], 2) == ["r0", "r2"]


def test_register_marks_the_method() -> None:
    @register(dispatch_mode=Dispatch.DP_COMPUTE, execute_mode=Execute.ALL, blocking=False)
    def step() -> None:
        """A worker method."""

    assert getattr(step, REGISTER_ATTR) == {"dispatch_mode": Dispatch.DP_COMPUTE, "execute_mode": Execute.ALL, "blocking": False}
