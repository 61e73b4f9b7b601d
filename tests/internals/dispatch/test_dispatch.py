"""verl's dispatch modes, as pure functions of a parallel layout (the Ray tests run them on real actors).

Each round trip sends a batch through :func:`plan_call`, lets every "worker" answer from exactly
what it received (its rank's coordinates are visible in the answer), and collects: the answer
must be the batch back, in order, with the right ranks having answered.
"""

from typing import Any

import numpy as np
import pytest

from solver_placement import DispatchError, solve
from solver_placement._dispatch.batch import Batch
from solver_placement._dispatch.modes import REGISTER_ATTR, Dispatch, Execute, plan_call, register
from solver_placement._dispatch.parallel_layout import ParallelLayout, RankInfo


def run(mode: Dispatch, layout: ParallelLayout, worker: Any, *args: Any, **kwargs: Any) -> Any:
    """Dispatch, let ``worker(rank, *args, **kwargs)`` answer on every rank, collect."""
    plan = plan_call(mode, args, kwargs, layout)
    return plan.collect([worker(rank, *a, **k) for rank, (a, k) in enumerate(plan.per_worker)])


def test_one_to_all_all_to_all_and_rank_zero() -> None:
    layout = ParallelLayout(3)
    assert plan_call(Dispatch.ONE_TO_ALL, (1,), {"k": 2}, layout).per_worker == [((1,), {"k": 2})] * 3
    assert run(Dispatch.ALL_TO_ALL, layout, lambda rank, x: (rank, x), ["a", "b", "c"]) == [(0, "a"), (1, "b"), (2, "c")]
    assert run(Dispatch.RANK_ZERO, layout, lambda rank: rank) == 0
    with pytest.raises(DispatchError, match="one entry per 3 workers"):
        plan_call(Dispatch.ALL_TO_ALL, ([1, 2],), {}, layout)


def test_dp_split_respects_tensor_parallel_groups() -> None:
    per_worker = plan_call(Dispatch.DP_COMPUTE_SPLIT, (list(range(6)),), {}, ParallelLayout(4, tp_size=2)).per_worker
    assert [args[0] for args, _ in per_worker] == [[0, 1, 2], [0, 1, 2], [3, 4, 5], [3, 4, 5]]
    assert run(Dispatch.DP_COMPUTE_SPLIT, ParallelLayout(4, tp_size=2), lambda rank, xs: [10 * x for x in xs], list(range(6))) == [
        0, 10, 20, 30, 40, 50,
    ]  # fmt: skip
    assert run(Dispatch.DP_COMPUTE_SPLIT, ParallelLayout(2), lambda rank, a: a + 1, np.arange(5)).tolist() == [1, 2, 3, 4, 5]
    with pytest.raises(DispatchError, match="splits lists, tuples and numpy arrays"):
        plan_call(Dispatch.DP_COMPUTE_SPLIT, ({"a": 1},), {}, ParallelLayout(2))


def test_dp_compute_gives_each_group_its_entry() -> None:
    layout = ParallelLayout(4, tp_size=2)
    assert [args for args, _ in plan_call(Dispatch.DP_COMPUTE, (["x", "y"],), {}, layout).per_worker] == [("x",), ("x",), ("y",), ("y",)]
    assert run(Dispatch.DP_COMPUTE, layout, lambda rank, x: f"{x}{rank}", ["x", "y"]) == ["x0", "y2"]


def batch(rows: int, **meta: Any) -> Batch:
    return Batch({"ids": np.arange(rows), "text": [f"s{i}" for i in range(rows)]}, meta_info=meta)


def answer(rank: int, part: Batch) -> dict[str, Any]:
    """A worker's answer: its rows doubled, tagged with the rank that computed each."""
    return {"ids": part["ids"] * 2, "text": list(part["text"]), "rank": [rank] * len(part)}


def test_dp_compute_proto_round_trip_keeps_order_and_meta() -> None:
    collected = run(Dispatch.DP_COMPUTE_PROTO, ParallelLayout(4), answer, batch(8, step=3))
    assert collected["ids"].tolist() == [2 * i for i in range(8)] and collected["text"] == [f"s{i}" for i in range(8)]
    assert collected["rank"] == [0, 0, 1, 1, 2, 2, 3, 3]
    plan = plan_call(Dispatch.DP_COMPUTE_PROTO, (batch(8, step=3),), {}, ParallelLayout(4))
    assert all(args[0].meta_info == {"step": 3} for args, _ in plan.per_worker)


def test_dp_compute_proto_refuses_an_uneven_split_unless_padding_is_asked() -> None:
    with pytest.raises(DispatchError, match="does not split into 4 equal chunks"):
        plan_call(Dispatch.DP_COMPUTE_PROTO, (batch(7),), {}, ParallelLayout(4))
    padded = Batch(batch(7).columns, auto_padding=True)
    plan = plan_call(Dispatch.DP_COMPUTE_PROTO, (padded,), {}, ParallelLayout(4))
    assert plan.padding == 1 and plan.per_worker[-1][0][0]["ids"].tolist() == [6, 6]  # the last row repeated
    collected = plan.collect([answer(rank, a[0]) for rank, (a, _) in enumerate(plan.per_worker)])
    assert collected["ids"].tolist() == [2 * i for i in range(7)] and len(collected) == 7


def test_proto_with_func_and_metric() -> None:
    def scale(values: np.ndarray) -> np.ndarray:
        return values * 3

    collected = run(Dispatch.DP_COMPUTE_PROTO_WITH_FUNC, ParallelLayout(2), lambda rank, fn, part: {"ids": fn(part["ids"])}, scale, batch(4))
    assert collected["ids"].tolist() == [0, 3, 6, 9]
    metrics = run(Dispatch.DP_COMPUTE_METRIC, ParallelLayout(4, tp_size=2), lambda rank, part: {"loss": float(part["ids"].sum())}, batch(4))
    assert metrics == [{"loss": 1.0}, {"loss": 5.0}]


def test_megatron_rank_info_follows_the_placement_order() -> None:
    layout = ParallelLayout(8, tp_size=2, pp_size=2)
    assert layout.dp_size == 2
    assert layout.rank_infos()[:4] == [RankInfo(0, 0, 0, 0), RankInfo(1, 0, 0, 0), RankInfo(0, 0, 1, 0), RankInfo(1, 0, 1, 0)]
    megatron_default = ParallelLayout(8, tp_size=2, pp_size=2, order=("tp", "cp", "dp", "pp"))
    assert megatron_default.rank_info(2) == RankInfo(tp_rank=0, dp_rank=1, pp_rank=0, cp_rank=0)
    with pytest.raises(DispatchError, match="not a positive multiple"):
        ParallelLayout(6, tp_size=4)
    with pytest.raises(DispatchError, match="each of tp, cp, pp, dp once"):
        ParallelLayout(4, order=("tp", "dp"))


@pytest.mark.parametrize("order", [("tp", "cp", "pp", "dp"), ("tp", "cp", "dp", "pp"), ("pp", "dp", "cp", "tp")])
def test_megatron_compute_answers_from_the_last_stage_of_each_dp_rank(order: tuple[str, ...]) -> None:
    layout = ParallelLayout(16, tp_size=2, pp_size=2, cp_size=2, order=order)
    infos = layout.rank_infos()
    answers = run(Dispatch.MEGATRON_COMPUTE, layout, lambda rank, x: (x, infos[rank]), ["a", "b"])
    assert [x for x, _ in answers] == ["a", "b"]
    assert all(info.tp_rank == 0 and info.cp_rank == 0 and info.pp_rank == 1 for _, info in answers)
    collected = run(Dispatch.MEGATRON_COMPUTE_PROTO, layout, answer, batch(6))
    assert collected["ids"].tolist() == [0, 2, 4, 6, 8, 10]


@pytest.mark.parametrize("order", [("tp", "cp", "pp", "dp"), ("tp", "cp", "dp", "pp")])
def test_megatron_pp_as_dp_round_trip(order: tuple[str, ...]) -> None:
    layout = ParallelLayout(16, tp_size=2, pp_size=2, cp_size=2, order=order)
    collected = run(Dispatch.MEGATRON_PP_AS_DP_PROTO, layout, answer, batch(16))
    assert collected["ids"].tolist() == [2 * i for i in range(16)]
    assert all(layout.rank_info(rank).tp_rank == 0 for rank in collected["rank"])
    with pytest.raises(DispatchError, match=r"one entry per 8 \(data, context, pipeline\) coordinates"):
        plan_call(Dispatch.MEGATRON_PP_AS_DP, (["x"] * 4,), {}, layout)


def test_megatron_pp_only_answers_once_per_stage() -> None:
    layout = ParallelLayout(8, tp_size=2, pp_size=2)
    assert run(Dispatch.MEGATRON_PP_ONLY, layout, lambda rank: layout.rank_info(rank).pp_rank) == [0, 1]


def test_layout_of_a_solved_component() -> None:
    solution = solve({"cluster": {"num_nodes": 2, "num_gpus_per_node": 8, "component_placement": {
        "actor": {"processes": 16, "tensor_parallel_size": 2, "pipeline_parallel_size": 2}}}})  # fmt: skip
    layout = ParallelLayout.of_component(solution, "actor")
    assert (layout.world_size, layout.tp_size, layout.pp_size, layout.dp_size) == (16, 2, 2, 4)


@pytest.mark.parametrize(
    ("columns", "words"),
    [({}, "at least one column"), ({"a": [1, 2], "b": [1]}, "differ in length"), ({"a": (1, 2)}, "numpy array or a list")],
)
def test_bad_batches(columns: dict, words: str) -> None:
    with pytest.raises(DispatchError, match=words):
        Batch(columns)


def test_batches_join_only_with_the_same_columns() -> None:
    with pytest.raises(DispatchError, match="different columns"):
        Batch.concat([{"a": [1]}, {"b": [2]}])
    with pytest.raises(DispatchError, match="not int"):
        plan_call(Dispatch.DP_COMPUTE_PROTO, (3,), {}, ParallelLayout(1))


def test_register_marks_the_method() -> None:
    @register(dispatch_mode=Dispatch.DP_COMPUTE, execute_mode=Execute.ALL, blocking=False)
    def step() -> None:
        """A worker method."""

    assert getattr(step, REGISTER_ATTR) == {"dispatch_mode": "DP_COMPUTE", "execute_mode": "ALL", "blocking": False}  # names: no import to unpickle


def test_a_call_that_cannot_be_dispatched_is_no_placement_error() -> None:
    """A caller catching ``PlacementError`` around solving must not swallow a bad call."""
    from solver_placement import PlacementError, fuse

    with pytest.raises(DispatchError, match="at least one role class") as info:
        fuse({})
    assert not isinstance(info.value, PlacementError)
