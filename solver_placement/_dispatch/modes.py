"""verl-style method registration: how a worker method's arguments are dispatched to the
workers of a group and how their results are collected.

``@register(dispatch_mode=Dispatch.DP_COMPUTE_PROTO)`` on a worker method makes
``group.method(batch)`` split ``batch`` across the data-parallel ranks, run, and concatenate the
answers in rank order. The modes are verl's (``verl/single_controller/base/decorator.py``),
computed here as pure functions of a :class:`~solver_placement._dispatch.parallel_layout.ParallelLayout`
(every rank's TP/CP/PP/DP coordinates) so they are testable without Ray: :func:`plan_call` says
what each worker receives, :meth:`CallPlan.collect` what the caller gets back.

Differences from verl, on purpose: the ``DP_*`` modes route by data-parallel rank, so a group
with tensor parallelism gives all ranks of a TP group the same entry and keeps the first's answer
(verl's FSDP groups have no TP, and with ``tp_size=1`` the two agree); batches are
:class:`~solver_placement._dispatch.batch.Batch` (numpy arrays and lists) instead of torch
``DataProto``; ``MEGATRON_PP_AS_DP`` answers are collected in the order their chunks were sent,
so a round trip returns the batch in its order. verl's ``DIRECT_ROLLOUT_METHOD`` (a vLLM executor
hook that refuses every call) has no counterpart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

import numpy as np

from solver_placement._dispatch.batch import Batch, as_batch
from solver_placement._dispatch.parallel_layout import ParallelLayout
from solver_placement._errors import DispatchError, counted

REGISTER_ATTR = "_solver_placement_dispatch"
F = TypeVar("F", bound=Callable[..., Any])
#: Per worker (rank order): the positional and keyword arguments it receives.
PerWorker = list[tuple[tuple[Any, ...], dict[str, Any]]]


class Dispatch(Enum):
    """Argument dispatch and result collection, with verl's meaning.

    ONE_TO_ALL: every worker gets the same arguments; results are a list in rank order.
    ALL_TO_ALL: every argument is already a list with one entry per worker.
    RANK_ZERO: only rank 0 runs; its result is returned.
    DP_COMPUTE: every argument is a list with one entry per data-parallel rank; one result per DP rank.
    DP_COMPUTE_SPLIT: every argument (list, tuple or numpy array) is split as evenly as it goes
    over the DP ranks; results are concatenated.
    DP_COMPUTE_PROTO: every argument is a Batch, chunked equally over the DP ranks (padded if
    it asks for auto padding); the answers are concatenated into one Batch.
    DP_COMPUTE_PROTO_WITH_FUNC: the first argument is a function every worker gets; the rest as
    DP_COMPUTE_PROTO (without padding).
    DP_COMPUTE_METRIC: dispatched as DP_COMPUTE_PROTO; one result per DP rank (e.g. metrics).
    MEGATRON_COMPUTE: as DP_COMPUTE; results from the tp 0, cp 0, last pp rank of each DP rank.
    MEGATRON_COMPUTE_PROTO: Batches chunked over the DP ranks, answers concatenated.
    MEGATRON_PP_AS_DP: one entry per (DP, CP, PP) coordinate; results from every tp-0 rank.
    MEGATRON_PP_AS_DP_PROTO: Batches chunked over DP x CP x PP, answers concatenated.
    MEGATRON_PP_ONLY: every worker gets the same arguments; one result per pipeline stage.
    """

    ONE_TO_ALL = "one_to_all"
    ALL_TO_ALL = "all_to_all"
    RANK_ZERO = "rank_zero"
    DP_COMPUTE = "dp_compute"
    DP_COMPUTE_SPLIT = "dp_compute_split"
    DP_COMPUTE_PROTO = "dp_compute_proto"
    DP_COMPUTE_PROTO_WITH_FUNC = "dp_compute_proto_with_func"
    DP_COMPUTE_METRIC = "dp_compute_metric"
    MEGATRON_COMPUTE = "megatron_compute"
    MEGATRON_COMPUTE_PROTO = "megatron_compute_proto"
    MEGATRON_PP_AS_DP = "megatron_pp_as_dp"
    MEGATRON_PP_AS_DP_PROTO = "megatron_pp_as_dp_proto"
    MEGATRON_PP_ONLY = "megatron_pp_only"


class Execute(Enum):
    """Which workers run a call: all of them, or rank 0 only."""

    ALL = "all"
    RANK_ZERO = "rank_zero"


def register(
    dispatch_mode: Dispatch = Dispatch.ONE_TO_ALL, execute_mode: Execute = Execute.ALL, blocking: bool = True
) -> Callable[[F], F]:
    """Mark a worker method so a WorkerGroup binds it with this dispatch and collection.

    The mark holds the modes' names, not the enum members: the method travels to every Ray
    worker with its class, and a member would make each worker import solver_placement (with
    OR-Tools, about 1.6 s of CPU) only to unpickle it."""

    def mark(method: F) -> F:
        setattr(method, REGISTER_ATTR, {"dispatch_mode": dispatch_mode.name, "execute_mode": execute_mode.name, "blocking": blocking})
        return method

    return mark


@dataclass(frozen=True)
class CallPlan:
    """One call's arguments per worker, and how to turn the workers' results into its answer.

    ``padding`` rows were appended to the batches (auto padding) and are dropped on collection.
    """

    mode: Dispatch
    layout: ParallelLayout
    per_worker: PerWorker
    padding: int = 0

    def collect(self, results: Sequence[Any]) -> Any:
        """The call's answer from every worker's result (rank order), as the mode promises."""
        if len(results) != self.layout.world_size:
            raise DispatchError(f"{self.mode.name}: {counted(len(results), 'result')} for {counted(self.layout.world_size, 'worker')}")
        if self.mode == Dispatch.RANK_ZERO:
            return results[0]
        if self.mode in (Dispatch.ONE_TO_ALL, Dispatch.ALL_TO_ALL):
            return list(results)
        if self.mode == Dispatch.MEGATRON_PP_ONLY:
            return [result for result, info in zip(results, self.layout.rank_infos()) if info.tp_rank == 0 and info.dp_rank == 0]
        picked = _pp_as_dp_outputs(self.layout, results) if self.mode in PP_AS_DP_MODES else _dp_outputs(self.layout, results)
        if self.mode == Dispatch.DP_COMPUTE_SPLIT:
            return _concat(picked)
        if self.mode in PROTO_MODES:
            joined = Batch.concat(picked)
            return joined.rows(0, len(joined) - self.padding)
        return picked


#: Modes whose arguments are Batches chunked over the workers and whose answers are joined.
PROTO_MODES = (
    Dispatch.DP_COMPUTE_PROTO, Dispatch.DP_COMPUTE_PROTO_WITH_FUNC, Dispatch.MEGATRON_COMPUTE_PROTO, Dispatch.MEGATRON_PP_AS_DP_PROTO,
)  # fmt: skip
#: Modes that treat every pipeline stage as a data-parallel rank.
PP_AS_DP_MODES = (Dispatch.MEGATRON_PP_AS_DP, Dispatch.MEGATRON_PP_AS_DP_PROTO)


def plan_call(mode: Dispatch, args: Sequence[Any], kwargs: dict[str, Any], layout: ParallelLayout) -> CallPlan:
    """What every worker of ``layout`` receives for one call in ``mode``."""
    if mode in (Dispatch.ONE_TO_ALL, Dispatch.RANK_ZERO, Dispatch.MEGATRON_PP_ONLY):
        return CallPlan(mode, layout, [(tuple(args), dict(kwargs))] * layout.world_size)
    if mode == Dispatch.ALL_TO_ALL:
        return CallPlan(mode, layout, _per_entry(mode, args, kwargs, list(range(layout.world_size))))
    infos = layout.rank_infos()
    if mode in PP_AS_DP_MODES:
        entry_of = [(info.cp_rank * layout.dp_size + info.dp_rank) * layout.pp_size + info.pp_rank for info in infos]
        chunks = layout.dp_size * layout.cp_size * layout.pp_size
    else:
        entry_of, chunks = [info.dp_rank for info in infos], layout.dp_size
    padding = 0
    if mode == Dispatch.DP_COMPUTE_SPLIT:
        args, kwargs = [_split(value, chunks) for value in args], {key: _split(value, chunks) for key, value in kwargs.items()}
    elif mode == Dispatch.DP_COMPUTE_PROTO_WITH_FUNC:
        function, *batches = args
        chunked, kwargs, _ = _chunk_batches(mode, batches, kwargs, chunks, pad=False)
        args = [[function] * chunks, *chunked]
    elif mode in (*PROTO_MODES, Dispatch.DP_COMPUTE_METRIC):
        args, kwargs, padding = _chunk_batches(mode, args, kwargs, chunks, pad=mode in (Dispatch.DP_COMPUTE_PROTO, Dispatch.DP_COMPUTE_METRIC))
    return CallPlan(mode, layout, _per_entry(mode, args, kwargs, entry_of), padding)


def _per_entry(mode: Dispatch, args: Sequence[Any], kwargs: dict[str, Any], entry_of: list[int]) -> PerWorker:
    """Worker ``w`` gets entry ``entry_of[w]`` of every argument (each a list of entries)."""
    count = max(entry_of) + 1
    for value in [*args, *kwargs.values()]:
        if not isinstance(value, (list, tuple)) or len(value) != count:
            raise DispatchError(f"{mode.name} needs every argument to be a list with one entry per {count} {_unit(mode)}")
    return [(tuple(value[entry] for value in args), {key: value[entry] for key, value in kwargs.items()}) for entry in entry_of]


def _unit(mode: Dispatch) -> str:
    if mode == Dispatch.ALL_TO_ALL:
        return "workers"
    return "(data, context, pipeline) coordinates" if mode in PP_AS_DP_MODES else "data-parallel ranks"


def _chunk_batches(
    mode: Dispatch, args: Sequence[Any], kwargs: dict[str, Any], chunks: int, pad: bool
) -> tuple[list[list[Batch]], dict[str, list[Batch]], int]:
    """Every argument as a Batch chunked ``chunks`` ways; padded first (all alike) when allowed and asked."""
    batches = [as_batch(value) for value in args]
    named = {key: as_batch(value) for key, value in kwargs.items()}
    padded = [len(b) for b in [*batches, *named.values()] if pad and b.auto_padding]
    if len(set(padded)) > 1:
        raise DispatchError(f"{mode.name}: auto-padded batches must have one length, not {sorted(set(padded))}")
    padding = -padded[0] % chunks if padded else 0

    def chunked(batch: Batch) -> list[Batch]:
        return (batch.padded(padding) if pad and batch.auto_padding else batch).chunk(chunks)

    return [chunked(b) for b in batches], {key: chunked(b) for key, b in named.items()}, padding


def _dp_outputs(layout: ParallelLayout, results: Sequence[Any]) -> list[Any]:
    """One result per DP rank: the tp 0, cp 0, last pp rank's (verl's Megatron collection)."""
    last = layout.pp_size - 1
    chosen = {info.dp_rank: result for result, info in zip(results, layout.rank_infos()) if info.tp_rank == info.cp_rank == 0 and info.pp_rank == last}
    return [chosen[dp] for dp in range(layout.dp_size)]


def _pp_as_dp_outputs(layout: ParallelLayout, results: Sequence[Any]) -> list[Any]:
    """Every tp-0 result, in the order its chunk was dispatched (cp, dp, then pp fastest)."""
    keyed = {
        (info.cp_rank * layout.dp_size + info.dp_rank) * layout.pp_size + info.pp_rank: result
        for result, info in zip(results, layout.rank_infos())
        if info.tp_rank == 0
    }
    return [keyed[index] for index in sorted(keyed)]


def _split(value: Any, parts: int) -> list[Any]:
    if isinstance(value, np.ndarray):
        return np.array_split(value, parts)
    if isinstance(value, (list, tuple)):
        bounds = np.linspace(0, len(value), parts + 1).round().astype(int)
        return [value[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]
    raise DispatchError(f"DP_COMPUTE_SPLIT splits lists, tuples and numpy arrays, not {type(value).__name__}")


def _concat(parts: list[Any]) -> Any:
    if parts and all(isinstance(part, np.ndarray) for part in parts):
        return np.concatenate(parts)
    if parts and all(isinstance(part, (list, tuple)) for part in parts):
        return [item for part in parts for item in part]
    return parts
